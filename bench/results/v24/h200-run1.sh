#!/bin/bash
# v24 run 1 (issue 13): (a) NF4 at one activation row, k-split 4, where
# the tiles are too few for two per warp in 16 warps: two tiles per warp in
# 8 warps, the same CTAs (QGC_EXP_NF4_T2W8, the pack's plan; T2OV = 9d337e0's
# module, the plan before). v23 run 6 measured the geometry through the
# override t=2,w=8 at 8192 x 28672: NF4 bf16 0.97, f32 0.96.
# Predicted: 8192 x 28672 NF4 3-4% faster, 8192 x 8192 and 8192 x 14336
# (the other shapes whose plan it changes) 0-4%; the quick suite and verify
# pass. (b) 14336 x 4096 makes 112 CTAs for 132 SMs at its k-split of 4;
# at a k-split of 2 with one tile per warp in 14 warps, 128 (plan-sweep
# group mid). v20's ks sweep had ks=2 (two tiles, 64 CTAs) at m = 1 1.5x
# slower but NF4 f32 m = 8 34.3 against 43.9 us and Q2_0 f32 m = 8 23.3
# against 33.2. Predicted: ks=2,t=1 (NF4: 14 warps, 128 CTAs) and
# ks=2,t=1,w=14 (Q2_0) 5-12% faster at m = 1.
# Here: bench/cuda-module.sh /tmp/b90 T2W8 (the pack's module); make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/run-common.sh bench/gpu-ab.sh \
#     bench/plan-sweep.sh bench/results/v24/h200-run1.sh /tmp/mods/qgemv-cuda-T2OV.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run1; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 100 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
CK_FORK=no timeout 40 "$here/test_hardening_cuda" > "$O/hardening.txt" 2>&1
step test_hardening_cuda; tail -1 "$O/hardening.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=3 AB_DEADLINE=$((SECONDS + 100)) OUT=$O/ab timeout 200 bash "$here/gpu-ab.sh" qgemv-cuda-T2OV.so.xz \
  --shape 8192x28672 --shape 8192x8192 --shape 8192x14336 --format nf4 --dtype bf16,f32 --m 1 --graph \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 40)) OUT=$O/abn timeout 100 bash "$here/gpu-ab.sh" qgemv-cuda-T2OV.so.xz \
  --shape 8192x28672 --format nf4 --dtype bf16,f32 --m 1,8 --rmsnorm --graph > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
step ab_norm; cat "$O/ab-norm.txt"
SWEEP_BENCH_ARGS=--graph SWEEP_DEADLINE=150 OUT=$O/sweep timeout 240 bash "$here/plan-sweep.sh" mid \
  > "$O/sweep-log.txt" 2>&1
step sweep; cat "$O/sweep/summary.txt"
