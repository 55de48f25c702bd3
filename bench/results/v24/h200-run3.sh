#!/bin/bash
# v24 run 3 (issue 13): the record of 17397af (the plan of dc63e56: NF4's
# two tiles per warp in 8 warps at k-split 4, the k-split of 2 for fill at
# 14336 x 4096): gpu-pack-run.sh check bench (the suites, verify, the
# issue shapes on the stream, the norm, the llama3-8b step), then
# test_tool_graph.sh, the llama3-8b step with --graph and on the stream,
# and the five shapes with --graph (m = 1, 8).
# Here: bench/cuda-module.sh /tmp/b90 FINAL; make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/ncu-insn.py \
#     bench/run-common.sh bench/results/v24/h200-run3.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run3; source "$here/run-common.sh"
QGEMV_BENCH_COMMIT=17397af GPU_DEADLINE=260 OUT=$O/rec timeout 300 \
  bash "$here/gpu-pack-run.sh" check bench > "$O/rec-log.txt" 2>&1
step record; grep -E "Checks:|combinations|rc=|exit" "$O/rec-log.txt" | head -24
grep -A12 "decode step" "$O/rec-log.txt" | head -14
QGEMV_TOOL=$(command -v qgemv) srcdir=. timeout 60 sh tests/test_tool_graph.sh > "$O/test-tool-graph.txt" 2>&1
step test_tool_graph; tail -2 "$O/test-tool-graph.txt"
for mode in graph stream; do
  flag=; [ $mode = graph ] && flag=--graph
  QGEMV_BENCH_COMMIT=17397af timeout 100 qgemv bench --backend cuda --preset llama3-8b --format all --dtype bf16 \
    --min-time 0.2 $flag --json "$O/llama3-8b-$mode.json" > "$O/llama3-8b-$mode.txt" 2>&1
  step "llama3-8b $mode"; grep -E 'step' "$O/llama3-8b-$mode.txt" | head -6
done
QGEMV_BENCH_COMMIT=17397af timeout 150 qgemv bench --backend cuda --graph --shape 28672x8192 --shape 8192x28672 \
  --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --format all --dtype bf16,f32 --m 1,8 --min-time 0.1 \
  --no-baseline --json "$O/shapes-graph.json" > "$O/shapes-graph.txt" 2>&1
step shapes; grep -E 'x[0-9]+ ' "$O/shapes-graph.txt" | head -70
