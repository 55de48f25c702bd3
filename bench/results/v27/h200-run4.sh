#!/bin/bash
# v27 run 4 (issue 13): where does a warp of one tile without a k-split
# wait? Run 1's ncu put 11% of ks=1,t=1,w=10's samples on a barrier
# executed once per warp (1% for the plan's ks=2,t=2,w=12), and run 3
# ruled out bytes in flight. Timelines (-DQGC_EXP_TIMELINE=1, module TL;
# bench/lab/timeline.py: per CTA wait, stage, first, loop, bar = warp 0's
# wait at the combine barrier for the other warps, epi) of 20480 x 5120
# Q2_0 g128 bf16 m = 1 under both overrides, and of NF4 bf16 m = 1 at
# 28672 x 8192 (9% barrier in run 1's ncu). Predicted: bar about 1.5 us of
# ks=1's 15 us and under 0.3 us for ks=2,t=2; if so, the warps of a CTA
# finish unevenly (load order, not the amount of work), and smaller units
# taken in turn would even them out.
# Here: bench/cuda-module.sh /tmp/b90 TL -DQGC_EXP_TIMELINE=1; ... base; then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/lab/timeline.py \
#     bench/results/v27/h200-run4.sh /tmp/mods/qgemv-cuda-TL.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run4; source "$here/run-common.sh"
mkdir -p "$O/TL" && xz -dc "$here/qgemv-cuda-TL.so.xz" > "$O/TL/qgemv-cuda.so"
tl() { # NAME PLAN SHAPE FORMAT
  QGEMV_CUDA_PLAN=$2 QGEMV_PLUGIN_PATH=$O/TL QGEMV_CUDA_TIMELINE=$O/tl-$1.bin timeout 60 qgemv bench \
    --backend cuda --shape "$3" --format "$4" --dtype bf16 --m 1 --no-baseline --quiet > "$O/tl-$1-bench.txt" 2>&1
  python3 "$here/timeline.py" "$O/tl-$1.bin" > "$O/tl-$1.txt" 2>&1
  rm -f "$O/tl-$1.bin"
  echo "== $1 ($2)"; cat "$O/tl-$1.txt"
}
tl q2ks1t1w10 ks=1,t=1,w=10 20480x5120 q2_0
tl q2ks2t2w12 ks=2,t=2,w=12 20480x5120 q2_0
tl nf4big "" 28672x8192 nf4
step timelines
