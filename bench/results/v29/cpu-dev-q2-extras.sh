#!/bin/bash
# v29: Q2_0's further terms with one digit (avx2 level), old against new,
# alternating. OLD, NEW: build directories (CPU only) of HEAD and of the change.
set -u
OLD=${OLD:-/tmp/bold} NEW=${NEW:-/tmp/bnew} OUT=${OUT:-.}
args=(--backend cpu --shape 28672x8192 --shape 8192x28672 --format q2_0,q2_0g64 --dtype f32,bf16 --m 1,8
      --min-time 0.3 --working-set 1200M --no-baseline)
for r in ${ROUNDS:-1 2}; do
  for side in old new; do
    dir=OLD; [ $side = new ] && dir=NEW
    QGEMV_NUM_THREADS=2 "${!dir}/tools/qgemv" bench "${args[@]}" > "$OUT/cpu-dev-q2-extras-$side-run$r.txt" 2>/dev/null
  done
done
