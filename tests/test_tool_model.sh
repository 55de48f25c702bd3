#!/bin/sh
# qgemv inspect, verify --model and bench --model on the GGUF fixture
# written by ggml (tests/data/ggml-q2_0.gguf): what they print, their JSON,
# and their exit status on a file that is not a model.
. "${srcdir:-.}/tests/test_tool_lib.sh"

model="$srcdir/tests/data/ggml-q2_0.gguf"
[ -r "$model" ] || skip "the fixture $model is missing"

expect_status 0 "$tool" inspect --help
grep -q '^usage: qgemv inspect' "$scratch/out" || fail "inspect --help has no usage line"
expect_status 2 "$tool" inspect
expect_status 1 "$tool" inspect "$scratch/nonexistent.gguf"
grep -q 'nonexistent.gguf' "$scratch/err" || fail "inspect of a missing file does not name it"
printf 'not a model file' >"$scratch/junk"
expect_status 1 "$tool" inspect "$scratch/junk"
grep -q 'neither GGUF' "$scratch/err" || fail "inspect of junk: $(cat "$scratch/err")"

expect_status 0 "$tool" inspect "$model" --json "$scratch/i.json"
grep -q 'GGUF, 6 tensors' "$scratch/out" || fail "inspect: $(head -n 1 "$scratch/out")"
grep -q '^blk.0.ffn_down.weight .* weight .*Q2_0 g64' "$scratch/out" || fail "inspect: ffn_down is not a Q2_0 g64 weight"
grep -q '^token_embd.weight .*Q4_0 .* no .*ggml type Q4_0 (2) is not a qgemv format' "$scratch/out" ||
  fail "inspect: the Q4_0 tensor is not refused by name"
grep -q '^2 weights qgemv runs as stored' "$scratch/out" || fail "inspect: summary $(tail -n 2 "$scratch/out")"

expect_status 0 "$tool" verify --model "$model" --backend cpu --json "$scratch/v.json"
[ "$(grep -c 'identical to qgemv_quantize' "$scratch/out")" -eq 2 ] || fail "verify --model: sources not identical"
grep -q ' 0 failures$' "$scratch/out" || fail "verify --model: $(tail -n 1 "$scratch/out")"
expect_status 1 "$tool" verify --model "$scratch/junk" --backend cpu

expect_status 0 "$tool" bench --model "$model" --backend cpu --min-time 0.01 --working-set 1M --no-baseline \
  --json "$scratch/b.json"
grep -q '^ffn_down.weight  *96x1024  *Q2_0/g64' "$scratch/out" || fail "bench --model: no ffn_down row"
grep -q 'blk.0 .*Q2_0/g64' "$scratch/out" || fail "bench --model: no block sum"
# --format adds the float matrices, quantized
expect_status 0 "$tool" bench --model "$model" --backend cpu --format nf4 --iters 2 --working-set 1M --no-baseline \
  --json "$scratch/bf.json" --quiet
expect_status 1 "$tool" bench --model "$scratch/junk" --backend cpu --quiet

have jq || skip "jq is not installed: cannot check the JSON (apt-get install jq)"
jq_true "$scratch/i.json" '.kind == "gguf" and (.tensors | length) == 6 and .metadata["general.architecture"] == "llama"'
jq_true "$scratch/i.json" '[.tensors[] | select(.use == "weight") | .format] == ["Q2_0/g64", "Q2_0/g64"]'
jq_true "$scratch/i.json" '.tensors[5] | .name == "token_embd.weight" and .ggml_type == 2 and .use == "no"'
jq_true "$scratch/v.json" '.ok and ([.weights[].source] == ["identical", "identical"])'
jq_true "$scratch/v.json" '[.targets[] | select(.status == "ran") | .results[] | .pass] | length == 2 and all'
jq_true "$scratch/b.json" '.tool == "qgemv bench" and (.rows | length) == 2'
jq_true "$scratch/b.json" '[.rows[] | .preset == "blk.0" and .ok and .format == "q2_0g64"] | all'
jq_true "$scratch/b.json" '.steps | length == 1 and .[0].layers == 2 and .[0].seconds > 0'
jq_true "$scratch/bf.json" '[.rows[] | .format] | sort == ["nf4", "nf4", "q2_0g64", "q2_0g64"]'
jq_true "$scratch/bf.json" '[.rows[] | select(.format == "nf4") | .layer] | sort == ["attn_q.weight.f32", "ffn_down.weight.f32"]'
echo "PASS: model-file commands"
