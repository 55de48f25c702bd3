#!/bin/sh
# qgemv bench --graph: refused, saying what to use, where the backend is
# not CUDA; on a CUDA device, every row timed from graph replays and the
# record saying so. (That a captured chain gives the stream's bits is
# test_cuda_backend's test_pdl_chain.)
. "${srcdir:-.}/tests/test_tool_lib.sh"

expect_status 1 "$tool" bench --backend cpu --graph --shape 64x1024 --iters 1 --no-baseline --working-set 1M
grep -q -- '--graph needs the CUDA backend (this run.s is cpu)' "$scratch/err" || fail "--graph on the CPU: $(cat "$scratch/err")"

"$tool" bench --backend cuda --shape 64x1024 --iters 1 --no-baseline --working-set 1M --quiet >/dev/null 2>"$scratch/err" ||
  skip "no CUDA device to capture on: $(head -n 1 "$scratch/err")"
have jq || skip "jq is not installed: cannot check the JSON (apt-get install jq)"
expect_status 0 "$tool" bench --backend cuda --graph --shape 1024x4096 --shape 4097x4096 --format all --dtype f32,bf16 \
  --m 1,3 --iters 5 --no-baseline --working-set 256M --json "$scratch/g.json"
grep -q "replayed from a CUDA graph" "$scratch/out" || fail "the table does not say the calls were graphed"
jq_true "$scratch/g.json" '.options.graph == true'
jq_true "$scratch/g.json" '[.rows[] | .ok and .median_s > 0 and .samples == 5] | all'
jq_true "$scratch/g.json" "(.rows | length) == $(($(format_names | wc -l) * 8))"
echo "PASS: bench --graph"
