#!/bin/bash
# v28 run 5 (issue 13): is it the shared loads' requests that fill NF4's
# L1 pipe (77% busy in every launch of runs 1-2)? Modules TEX1, TEX5, TEXF
# = -DQGC_EXP_NF4_TEX=1 / 5 / 15: weight row g + 8's lookups of step 0 /
# steps 0 and 2 / every step (1/8, 1/4, 1/2 of the 16 per tile-block) by
# tex1Dfetch of the 256 entries (the texture path's own requests into
# L1TEX) instead of LDS.64. Predicted: if the LSU requests are the
# ceiling, TEX1 and TEX5 faster (up to ~10-20% for TEX5) until the
# texture path's rate (about 4 texels per clock per SM) or its latency
# holds them; TEXF slower. verify on each, A/B at 28672 x 8192 and 8192 x
# 28672, NF4 bf16 and f32, m = 1, three passes, --graph; ncu of TEX5.
# Here: bench/cuda-module.sh /tmp/b90 TEX1 -DQGC_EXP_NF4_TEX=1; ... TEX5
# -DQGC_EXP_NF4_TEX=5; ... TEXF -DQGC_EXP_NF4_TEX=15; ... base; then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/gpu-ab.sh bench/gpu-pack-run.sh bench/ncu-insn.py \
#     bench/results/v28/h200-run5.sh /tmp/mods/qgemv-cuda-TEX{1,5,F}.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run5; source "$here/run-common.sh"
for m in TEX1 TEX5 TEXF; do
  mkdir -p /tmp/m-$m; xz -dc "$here/qgemv-cuda-$m.so.xz" > /tmp/m-$m/qgemv-cuda.so
  QGEMV_PLUGIN_PATH=/tmp/m-$m timeout 30 qgemv verify --backend cuda > "$O/verify-$m.txt" 2>&1
  step "verify-$m"; tail -1 "$O/verify-$m.txt"
done
AB_PASSES=3 AB_DEADLINE=$((SECONDS + 60)) OUT=$O/ab timeout 100 bash "$here/gpu-ab.sh" qgemv-cuda-TEX1.so.xz \
  qgemv-cuda-TEX5.so.xz qgemv-cuda-TEXF.so.xz --shape 28672x8192 --shape 8192x28672 --format nf4 --dtype bf16,f32 \
  --m 1 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab-tex; cat "$O/ab.txt"
if [ $((SECONDS - t0)) -lt 100 ]; then
  QGEMV_PLUGIN_PATH=/tmp/m-TEX5 PROFILE_CASES="nf4 bf16 28672x8192" OUT=$O/ncu timeout 120 \
    bash "$here/gpu-pack-run.sh" profile > "$O/ncu-log.txt" 2>&1
  step ncu-tex5; grep -E "Duration|Issue Slots|L1/TEX Cache|Eligible Warps|warp instructions|tex" "$O"/ncu/ncu-*.txt | head -12
fi
