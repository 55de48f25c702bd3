#!/bin/bash
# v27 run 2 (issue 13). The library at v26's HEAD (its CUDA code ran in
# run 1: suite 36/36, verify 24/24). (1) plan-sweep t2few: NF4 and Q2_0
# g128 bf16 m = 1 at six shapes where the plan takes two tiles per warp at
# a k-split of 2 in 12-14 warps, 6-12 warps (run 1: at 25600 x 5120
# ks=2,t=2,w=8, two rounds of units, 17.1 us against the plan's 17.8 in
# one round of 14 warps; at 20480 x 5120 17.1 against 14.3). Predicted:
# fewer warps win only where the busiest SM's tiles grow by less than
# about 15%. (2) compute-sanitizer memcheck and racecheck of the quick
# suite on the library's module (v26 ran them on NEW2, whose Q2_0 bf16
# batched plans differ).
# Here: the build of run 1 (make in /tmp/b90 at 2e0e80f's CUDA code); then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/plan-sweep.sh bench/gpu-pack-run.sh bench/results/v27/h200-run2.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run2; source "$here/run-common.sh"
OUT=$O/sweep SWEEP_BENCH_ARGS=--graph SWEEP_DEADLINE=100 timeout 160 bash "$here/plan-sweep.sh" t2few \
  > "$O/sweep-log.txt" 2>&1
step sweep; cat "$O/sweep/summary.txt"
GPU_DEADLINE=$((600 - SECONDS)) OUT=$O/san timeout $((590 - SECONDS)) bash "$here/gpu-pack-run.sh" sanitize \
  > "$O/sanitize-log.txt" 2>&1
step sanitize; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:|exit|passed" "$O/sanitize-log.txt" | head -12
