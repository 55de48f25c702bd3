#!/bin/bash
# v23 run 4 (issue 13): qgemv bench --graph (new: a sample's calls
# replayed from a CUDA graph) with the library's kernels (80f67a3's
# device code).
# 1. tests/test_tool_graph.sh for real (it skips without a GPU).
# 2. The llama3-8b step with --graph, then on the stream, the README's
#    command otherwise. Predicted (runs 2, 3): k and v (1024 x 4096)
#    15-35% faster in the graph, q and o 0-6%, the rest within 3%; the
#    step 2-6% faster.
# 3. The issue's five shapes at m = 1, 8 with --graph, bf16 and f32.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh \
#   bench/results/v23/h200-run4.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run4; source "$here/run-common.sh"
export QGEMV_BENCH_COMMIT=${QGEMV_BENCH_COMMIT:-b6d0a50}
QGEMV_TOOL=$(command -v qgemv) srcdir=. timeout 120 sh tests/test_tool_graph.sh > "$O/test-tool-graph.txt" 2>&1
step test_tool_graph; tail -2 "$O/test-tool-graph.txt"
for mode in graph stream; do
  flag=; [ $mode = graph ] && flag=--graph
  timeout 150 qgemv bench --backend cuda --preset llama3-8b --format all --dtype bf16 --min-time 0.2 $flag \
    --json "$O/llama3-8b-$mode.json" > "$O/llama3-8b-$mode.txt" 2>&1
  step "llama3-8b $mode"; grep -E 'step|^q |^k |^gate|^down' "$O/llama3-8b-$mode.txt" | head -16
done
timeout 200 qgemv bench --backend cuda --graph --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 \
  --shape 4096x14336 --shape 4096x4096 --format all --dtype bf16,f32 --m 1,8 --min-time 0.1 --no-baseline \
  --json "$O/shapes-graph.json" > "$O/shapes-graph.txt" 2>&1
step shapes; grep -E 'x[0-9]+ ' "$O/shapes-graph.txt" | head -70
