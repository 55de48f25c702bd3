#!/bin/bash
# v22 run 7 (issue 13): plan-sweep group ng2t2 (NF4's two column groups at
# two tiles per warp, QGEMV_CUDA_PLAN t=2, at the shapes the plan leaves at
# one tile: 8192 x 28672, 14336 x 4096, 4096 x 14336, 4096 x 4096; f32 x
# m = 8, 16 and bf16 x m = 16) at the commit that lets t=2 through.
# Predicted: where units stay one wave (8192 x 28672 at 8 warps: 128
# units) 5-10% faster, like 28672 x 8192; at 4096 rows (k-split 8, one row
# group per CTA) about even.
# Here: bench/cuda-module.sh /tmp/b90 V22b; then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/gpu-pack-run.sh bench/plan-sweep.sh bench/results/v22/h200-run7.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run7.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp}
SWEEP_GROUPS=ng2t2 GPU_DEADLINE=300 OUT=/tmp/run7 timeout 330 bash "$here/gpu-pack-run.sh" sweep > /tmp/run7-log.txt 2>&1
echo "sweep rc=$?"
cp /tmp/run7/sweep/summary.txt "$O/h200-run7-sweep-summary.txt" 2>/dev/null
cp /tmp/run7/sweep/plans.txt "$O/h200-run7-sweep-plans.txt" 2>/dev/null
tar -C /tmp -cJf "$O/run7.tar.xz" run7 run7-log.txt
cat "$O/h200-run7-sweep-summary.txt"
