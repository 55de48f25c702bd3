#!/bin/bash
# v25 run 5 (issue 13): the library's qgc_wave_fit with Q2_0 on the same
# tie rule as NF4 (NEW3: on equal tiles the fewest rounds; k-split not
# under 2) against HEAD (c301488): Q2_0's plans move at 18944 x 3584,
# 20480 x 5120, 22016 and 24576 x 4096 (k-split 2 in 12 warps, one round,
# where v24's rule kept the slots' 4 in 12, two rounds).
# Predicted from runs 1 and 4's sweeps (ks=2,w=12): g128 bf16 m = 1
# 0.85-0.97, f32 m = 1 0.84-0.95, f32 m = 8 0.73-0.90, bf16 m = 8
# 0.83-0.91; 24576 x 4096 and g64 not swept (as 22016 x 4096); m = 16 not
# measured. The quick suite and verify first.
# Here: bench/cuda-module.sh /tmp/b90 NEW3; make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/results/v25/h200-run5.sh /tmp/mods/qgemv-cuda-HEAD.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run5; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 110)) OUT=$O/ab timeout 170 bash "$here/gpu-ab.sh" qgemv-cuda-HEAD.so.xz \
  --shape 18944x3584 --shape 20480x5120 --shape 22016x4096 --shape 24576x4096 \
  --format q2_0,q2_0g64 --dtype bf16,f32 --m 1,8,16 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
