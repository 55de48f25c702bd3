#!/bin/bash
# v29: the quantizer's serial phase with kept residuals and a tree over the
# blocks' P shares (new) against ed64158's (recomputed terms, rescans),
# alternating. A: a build of ed64158, B: of the change (CPU code).
set -u
A=${A:-/tmp/ci-trial1} B=${B:-/tmp/bnew} OUT=${OUT:-.}
args=(--backend cpu --shape 4096x4096 --shape 4096x14336 --shape 8192x28672 --format q2_0,q2_0g64 --dtype f32
      --m 1,8 --min-time 0.3 --working-set 1200M --no-baseline)
for r in ${ROUNDS:-1 2}; do
  for side in A B; do
    name=ed64158; [ $side = B ] && name=finish
    QGEMV_NUM_THREADS=2 "${!side}/tools/qgemv" bench "${args[@]}" > "$OUT/cpu-dev-q2-$name-run$r.txt" 2>/dev/null
  done
done
