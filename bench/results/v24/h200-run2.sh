#!/bin/bash
# v24 run 2 (issue 13): the k-split of 2 with one tile per warp where it
# fills more SMs than 4 (QGC_EXP_KS2_FILL, the pack's plan), against T2W8
# (run 1's pack: the plan before it). Run 1's plan-sweep mid at 14336 x
# 4096 chose the geometries: NF4 14 warps in 128 CTAs, Q2_0 16 warps in
# 112, every m; the Q2_0 wide kernel no longer taken where its CTAs cover
# under 3/4 of the SMs. Predicted: 14336 x 4096 m = 1 2-4% faster,
# batched 6-40% (run 1's sweep); the other shapes whose plan it changes
# on the H200 (13824 x 5120, 14336 x 5120, 14336 x 8192) the same way;
# the norm likewise. The quick suite (with test_ks2_fill_rows: 14331 x
# 2048, batched rows against m = 1 at the new k-split) and verify pass.
# Here: bench/cuda-module.sh /tmp/b90 KS2F (the pack's module); make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/run-common.sh bench/gpu-ab.sh \
#     bench/results/v24/h200-run2.sh /tmp/mods/qgemv-cuda-T2W8.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run2; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 170)) OUT=$O/ab timeout 300 bash "$here/gpu-ab.sh" qgemv-cuda-T2W8.so.xz \
  --shape 14336x4096 --shape 13824x5120 --shape 14336x8192 --format all --dtype bf16,f32 --m 1,8,16 --graph \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 50)) OUT=$O/abn timeout 110 bash "$here/gpu-ab.sh" qgemv-cuda-T2W8.so.xz \
  --shape 14336x4096 --format all --dtype bf16,f32 --m 1,8 --rmsnorm --graph > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
step ab_norm; cat "$O/ab-norm.txt"
