#!/bin/bash
# v23 run 1 (issue 13): the weight stream's L2 prefetch (QGEMV_CUDA_PLAN
# pf, pa; off in the plan). pf=N: each warp asks L2 for its next N chunks
# (bulk prefetches) before griddepcontrol.wait, so that DRAM streams the
# weight while the launch waits for the previous one and stages x; pa=N
# (module PA, built with QGC_EXP_L2AHEAD=1): N chunks ahead of the ring in
# the loop.
# Predicted: the 4096-row and 14336 x 4096 shapes 10-30% faster at m = 1
# (v12: 2.2 us of the loads-only period is the wait, staging and first
# chunk, when DRAM idles); 28672 x 8192 and 8192 x 28672 within 2% at
# small pf and slower at pf=64 (the prefetch outgrows L2); pa: 0-5%.
# First: verify under pf=16 (the results must not change: a hint).
# Here: bench/cuda-module.sh /tmp/b90 PA -DQGC_EXP_L2AHEAD=1; bench/cuda-module.sh
# /tmp/b90 PF (the pack's module); HEAD80 = 80f67a3's module; then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/gpu-ab.sh \
#     bench/results/v23/h200-run1.sh /tmp/mods/qgemv-cuda-HEAD80.so.xz /tmp/mods/qgemv-cuda-PA.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run1; source "$here/run-common.sh"
QGEMV_CUDA_PLAN=pf=16 timeout 120 qgemv verify --backend cuda > "$O/verify-pf16.txt" 2>&1
step verify; tail -2 "$O/verify-pf16.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 150)) OUT=$O/ab timeout 300 bash "$here/gpu-ab.sh" qgemv-cuda-HEAD80.so.xz \
  @pf=2 @pf=4 @pf=8 @pf=16 @pf=64 qgemv-cuda-PA.so.xz@pa=4 qgemv-cuda-PA.so.xz@pf=8,pa=8 \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 \
  --format all --dtype bf16 --m 1 > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 60)) OUT=$O/ab2 timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-HEAD80.so.xz \
  @pf=4 @pf=16 \
  --shape 28672x8192 --shape 14336x4096 --shape 4096x4096 --format all --dtype f32 --m 1,8 > "$O/ab2.txt" 2> "$O/ab2-log.txt"
step ab2; cat "$O/ab2.txt"
