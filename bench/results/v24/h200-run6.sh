#!/bin/bash
# v24 run 6 (issue 13), NOT RUN (refused: no device time left); the first
# call of the next session. HEAD's module (5c2762a: qgc_wave_fit's warps per
# call only where they load the busiest SM with no more tiles than the
# plan's own, the plan's own on a tie at the slots' k-split) against
# run 5's (WAVE, the wave's warps for every call). HEAD differs from WAVE
# only for f32 x batched at 22016 x 4096 (12 warps -> the plan's 8 and
# 16, as FINAL). Also m = 16 at the five wave shapes (not measured), and
# the quick suite on HEAD's module.
# Predicted: 22016 x 4096 f32 m = 8 0.72-0.78 (FINAL's 54.6 and 47.7 us),
# every other row within 2% (the same plans); suite 36/36.
# Here: bench/cuda-module.sh /tmp/b90 HEAD (the pack's module); make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/results/v24/h200-run6.sh \
#     /tmp/mods/qgemv-cuda-WAVE.so.xz /tmp/mods/qgemv-cuda-FINAL.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run6.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run6; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 60)) OUT=$O/ab timeout 120 bash "$here/gpu-ab.sh" qgemv-cuda-WAVE.so.xz \
  --shape 11008x4096 --shape 12288x4096 --shape 22016x4096 --format nf4,q2_0 --dtype f32 --m 8 --graph \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 90)) OUT=$O/ab16 timeout 180 bash "$here/gpu-ab.sh" qgemv-cuda-FINAL.so.xz \
  --shape 11008x4096 --shape 18944x3584 --shape 12288x4096 --shape 22016x4096 --shape 37888x3584 \
  --format all --dtype bf16,f32 --m 16 --graph > "$O/ab16.txt" 2> "$O/ab16-log.txt"
step ab16; cat "$O/ab16.txt"
