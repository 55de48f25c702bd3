#!/bin/bash
# v29: the activation quantizer's term 0 spread over the threads, against
# the quantizer serial before the kernels (both with the one-digit further
# terms), alternating. A, B: build directories (CPU only).
set -u
A=${A:-/tmp/bfused} B=${B:-/tmp/bnew} OUT=${OUT:-.}
args=(--backend cpu --shape 4096x4096 --shape 4096x14336 --shape 8192x28672 --format q2_0,q2_0g64 --dtype f32
      --m 1,8 --min-time 0.3 --working-set 1200M --no-baseline)
for r in ${ROUNDS:-1 2}; do
  for side in A B; do
    name=serial; [ $side = B ] && name=par
    QGEMV_NUM_THREADS=2 "${!side}/tools/qgemv" bench "${args[@]}" > "$OUT/cpu-dev-q2-xfix-$name-run$r.txt" 2>/dev/null
  done
done
