#!/bin/bash
# v27 run 3 (issue 13): is one tile per warp without a k-split slow
# because each warp has too few bytes in flight? Run 1's ncu at 20480 x
# 5120 Q2_0 g128 bf16 m = 1: ks=1,t=1,w=10 (18.4 us under ncu, 15.4 in a
# graph) against the plan's ks=2,t=2,w=12 (17.4, 14.3): both latency-bound
# (issue slots 38-41% busy, 0.8-1.0 eligible warps per scheduler), but
# ks=1 spends 11% of its samples at the unit's end barrier (warps waiting
# for the slowest) against 1%. A warp's ring holds kStages slots of T
# chunks (2.3 KB each): t=1 in 10 warps keeps about 46 KB per SM in
# flight, t=2 in 12 warps about 110 KB. Predicted: a ring of 3 or 4 slots
# (modules ST3, ST4: -DQGC_EXP_STAGES=3/4) takes ks=1,t=1,w=10 and the
# other one-tile geometries 10-20% faster and leaves t=2 within 3%
# (v12: STAGES=3 at 28672 x 8192, 28 warps, was 0.99x). Q2_0 g128 bf16,
# m = 1, five shapes, two passes, --graph.
# Here: bench/cuda-module.sh /tmp/b90 ST3 -DQGC_EXP_STAGES=3; ... ST4
# -DQGC_EXP_STAGES=4; ... base; then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/gpu-ab.sh bench/results/v27/h200-run3.sh \
#     /tmp/mods/qgemv-cuda-ST3.so.xz /tmp/mods/qgemv-cuda-ST4.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run3; source "$here/run-common.sh"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 200)) OUT=$O/ab timeout 300 bash "$here/gpu-ab.sh" @ks=1,t=1,w=10 \
  qgemv-cuda-ST3.so.xz@ks=1,t=1,w=10 qgemv-cuda-ST4.so.xz@ks=1,t=1,w=10 @ks=2,t=2,w=12 \
  qgemv-cuda-ST3.so.xz@ks=2,t=2,w=12 qgemv-cuda-ST3.so.xz qgemv-cuda-ST4.so.xz \
  --shape 20480x5120 --shape 18944x3584 --shape 37888x3584 --shape 25600x5120 --shape 28672x8192 \
  --format q2_0 --dtype bf16 --m 1 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
