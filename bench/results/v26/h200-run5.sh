#!/bin/bash
# v26 run 5 (issue 13), NOT RUN (no device time left): the first call of
# the next session. The library at efbf21e as a module (NEW2 plus Q2_0's
# 12 warps for bf16 x batched up to 8 rows at one tile per warp) against
# NEW2: its plans move only at 9216 x 4096, 10240 x 5120 and 18944 x 3584,
# Q2_0 bf16 x, m = 2 to 8. Predicted from run 4 (the same geometry by
# QGEMV_CUDA_PLAN): m = 8 0.87-0.92 (b/a0), m = 2 and 4 not measured,
# m = 1 and 16 1.00 (plans unchanged). The quick suite and verify first.
# Here: bench/cuda-module.sh /tmp/b90 NEW2 -DQGC_EXP_Q2_BF16_W12=0;
# bench/cuda-module.sh /tmp/b90 base (the tree); make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/results/v26/h200-run5.sh /tmp/mods/qgemv-cuda-NEW2.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run5; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 100)) OUT=$O/ab timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-NEW2.so.xz \
  --shape 9216x4096 --shape 10240x5120 --shape 18944x3584 --format q2_0,q2_0g64 --dtype bf16 --m 1,2,4,8,16 \
  --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
