#!/bin/bash
# v25 run 1 (issue 13): v24's run 6 (HEAD's module, 1deee00's plan, had
# not run on the GPU) and plan-sweep group wavefit.
# 1. The quick suite and verify on HEAD's module.
# 2. HEAD against WAVE (v24 run 5's module: the wave's warps for every
#    call) at f32 m = 8 for 11008, 12288 and 22016 x 4096. Predicted:
#    22016 x 4096 0.72-0.78 (FINAL's geometry back: 54.6 and 47.7 us),
#    the other rows within 2% (the same plans).
# 3. HEAD against FINAL (17397af) at m = 16 for the five wave shapes (not
#    measured before). Predicted: 0.7-0.95, as m = 8.
# 4. plan-sweep wavefit (--graph): 8-16 warps and k-splits 1 and 2 at the
#    wave shapes and 14336 x 5120, toward one fill model (NOTES v24,
#    "What remains" item 2).
# Here: bench/cuda-module.sh /tmp/b90 HEAD (the pack's module); make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/plan-sweep.sh bench/results/v25/h200-run1.sh \
#     /tmp/mods/qgemv-cuda-WAVE.so.xz /tmp/mods/qgemv-cuda-FINAL.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run1; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 50)) OUT=$O/ab timeout 100 bash "$here/gpu-ab.sh" qgemv-cuda-WAVE.so.xz \
  --shape 11008x4096 --shape 12288x4096 --shape 22016x4096 --format nf4,q2_0 --dtype f32 --m 8 --graph \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 80)) OUT=$O/ab16 timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-FINAL.so.xz \
  --shape 11008x4096 --shape 18944x3584 --shape 12288x4096 --shape 22016x4096 --shape 37888x3584 \
  --format all --dtype bf16,f32 --m 16 --graph > "$O/ab16.txt" 2> "$O/ab16-log.txt"
step ab16; cat "$O/ab16.txt"
SWEEP_BENCH_ARGS=--graph SWEEP_DEADLINE=$((550 - SECONDS - 40)) OUT=$O/sweep timeout $((575 - SECONDS)) \
  bash "$here/plan-sweep.sh" wavefit > "$O/sweep-log.txt" 2>&1
step sweep; cat "$O/sweep/summary.txt"
