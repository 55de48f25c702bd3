#!/bin/bash
# v24 run 4 (issue 13): compute-sanitizer memcheck and racecheck of
# test_cuda_backend (quick) on 17397af's module (the new geometries:
# two tiles per warp in 8 warps, the k-split of 2 for fill, and the GPU
# test at 14331 x 2048); then plan-sweep group models with --graph at
# other models' shapes (11008 x 4096, 4096 x 11008, 18944 x 3584, 3584 x
# 18944), whose plans make a part of a wave or just over one.
# Predicted: 0 errors; at 11008 x 4096 a one-wave geometry (ks=4,w=12:
# 115 CTAs) 10-25% faster than the plan's 172 units, at 18944 x 3584
# ks=1,t=1,w=9 (132 CTAs) or ks=2,t=2,w=10 (119) 5-15% faster.
# Here: bench/cuda-module.sh /tmp/b90 FINAL; make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/run-common.sh \
#     bench/plan-sweep.sh bench/results/v24/h200-run4.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run4; source "$here/run-common.sh"
GPU_DEADLINE=300 OUT=$O/san timeout 330 bash "$here/gpu-pack-run.sh" sanitize > "$O/sanitize-log.txt" 2>&1
step sanitize; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:|exit" "$O/sanitize-log.txt" | head -12
SWEEP_BENCH_ARGS=--graph SWEEP_DEADLINE=$((540 - SECONDS - 40)) OUT=$O/sweep timeout $((560 - SECONDS)) \
  bash "$here/plan-sweep.sh" models > "$O/sweep-log.txt" 2>&1
step sweep; cat "$O/sweep/summary.txt"
