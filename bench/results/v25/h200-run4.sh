#!/bin/bash
# v25 run 4 (issue 13): plan-sweep group q2wave on the library (NEW2):
# Q2_0 g128 at 9216 x 4096, 10240 and 20480 x 5120, 18944 x 3584 and
# 22016 x 4096, bf16 and f32 x, m = 1 and 8, one tile per warp in 9-16
# warps at k-splits 1 and 2. Question: why the wider wave search's one
# tile per warp in 10 warps made bf16 x at m = 1 1.26-1.42x slower (run 2)
# while 9 warps at 18944 x 3584 and 12 at 11008 x 4096 did not; the data
# for a Q2_0 rule that keeps f32 x m = 8's 0.56-0.67x. No prediction for
# the warp counts; ks=2,t=1,w=12 at 9216 x 4096 within 5% of the plan.
# Here: the pack of run 3 plus bench/plan-sweep.sh and this script.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run4; source "$here/run-common.sh"
SWEEP_BENCH_ARGS=--graph SWEEP_DEADLINE=250 OUT=$O/sweep timeout 300 bash "$here/plan-sweep.sh" q2wave > "$O/sweep-log.txt" 2>&1
step sweep; cat "$O/sweep/summary.txt"; cp "$O/sweep/all.txt" "$O/all.txt"
