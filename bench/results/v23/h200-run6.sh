#!/bin/bash
# v23 run 6 (issue 13): two tiles per warp at m = 1 where the plan takes
# one (8192 x 28672, 4096 x 14336: fewer tiles than 4 per SM). The
# override t=2 now reaches them (it gave no plan there before); plan-sweep
# group long_t2, twice, with --graph. NF4 takes two tiles at 28672 x 8192
# (54.5 us, 54% of the read) and one at 8192 x 28672 (63.3 us, 46%).
# Predicted: NF4 5-10% faster at 8192 x 28672 with 16 warps in 128 CTAs
# (ks=8,t=2,w=16), Q2_0 within 3%; the 8-warp geometries slower.
# Here: bench/cuda-module.sh /tmp/b90 T2OV (the pack's module); then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/plan-sweep.sh \
#     bench/results/v23/h200-run6.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run6.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run6; source "$here/run-common.sh"
SWEEP_BENCH_ARGS=--graph SWEEP_DEADLINE=230 OUT=$O/sweep timeout 320 bash "$here/plan-sweep.sh" long_t2 long_t2 \
  > "$O/sweep-log.txt" 2>&1
step sweep; cat "$O/sweep/summary.txt"
