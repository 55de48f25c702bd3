#!/bin/bash
# v23 run 5 (issue 13): the small shapes' plans, swept with --graph. The
# plan's k-splits and warps at 1024 x 4096 and 4096 x 4096 were chosen
# from sweeps on a stream, where (runs 2-4) a call cannot be shorter than
# the host's launch (3-5 us), about these kernels' own time: differences
# under it were hidden. plan-sweep group tiny, twice (the second pass
# says the noise), every format, f32 and bf16 x, m = 1.
# Predicted: most overrides within 3% of the plan; if one is 5% or more
# faster at a shape for every format, the plan's rule there moves.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/plan-sweep.sh \
#   bench/results/v23/h200-run5.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run5; source "$here/run-common.sh"
SWEEP_BENCH_ARGS=--graph SWEEP_DEADLINE=300 OUT=$O/sweep timeout 420 bash "$here/plan-sweep.sh" tiny tiny \
  > "$O/sweep-log.txt" 2>&1
step sweep; cat "$O/sweep/summary.txt"
