#!/bin/bash
# v24 run 6 (issue 13): qgc_wave_fit's warps per call only where they load
# the busiest SM with fewer tiles than the plan's own geometry at the same
# k-split (WAVE2, the pack's) against run 5's module, which took them for
# every call (WAVE). It changes only f32 x batched at 11008 x 4096, 12288
# x 4096 (12 warps -> 8) and 22016 x 4096 (12 -> the plan's 8 and 16:
# run 5 had 12 warps 1.29-1.39x slower there).
# Predicted: 22016 x 4096 f32 m = 8 0.72-0.78 (back to FINAL's 54.6 and
# 47.7 us), 11008 x 4096 and 12288 x 4096 NF4 f32 m = 8 within 5%.
# Here: bench/cuda-module.sh /tmp/b90 WAVE2 (the pack's module); make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/gpu-ab.sh \
#     bench/results/v24/h200-run6.sh /tmp/mods/qgemv-cuda-WAVE.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run6.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run6; source "$here/run-common.sh"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 50)) OUT=$O/ab timeout 90 bash "$here/gpu-ab.sh" qgemv-cuda-WAVE.so.xz \
  --shape 11008x4096 --shape 12288x4096 --shape 22016x4096 --format nf4,q2_0 --dtype f32 --m 8 --graph \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
