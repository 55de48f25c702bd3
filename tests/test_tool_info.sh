#!/bin/sh
# qgemv info: text, and JSON (stdout and a file) that jq parses.
. "${srcdir:-.}/tests/test_tool_lib.sh"

expect_status 0 "$tool" info
for what in 'formats' 'backends:' 'cpu: 1 device' 'environment:' 'QGEMV_BACKEND'; do
  grep -q "$what" "$scratch/out" || fail "qgemv info does not show '$what'"
done
have jq || skip "jq is not installed: cannot check the JSON (apt-get install jq)"

expect_status 0 "$tool" info --json
cp "$scratch/out" "$scratch/info.json"
jq_true "$scratch/info.json" '.version | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")'
jq_true "$scratch/info.json" '.build | length > 0'
jq_true "$scratch/info.json" '.formats | length >= 3 and (map(.name) | index("nf4") == 0)'
jq_true "$scratch/info.json" '[.formats[] | .group > 0 and .block_bytes > 0 and .scale_bytes >= 0 and (.label | length > 0)] | all'
jq_true "$scratch/info.json" "(.formats | map(.name)) == ($(format_names | jq -R . | jq -sc .))"
jq_true "$scratch/info.json" '[.backends[] | select(.name == "cpu")][0] | .usable and .device_count == 1'
jq_true "$scratch/info.json" '[.backends[] | select(.name == "cpu")][0].devices[0] | .units > 0 and .threads > 0 and .llc_bytes >= 0'
jq_true "$scratch/info.json" '[.backends[] | select(.name == "cpu")][0].isa_levels | map(.name) == ["ref", "scalar", "avx2", "avx512", "avx512vnni", "avx512amx", "neon", "neondot"]'
jq_true "$scratch/info.json" '[.backends[] | select(.name == "cpu")][0].isa_levels | map(select(.default)) | length == 1'
jq_true "$scratch/info.json" '.backends | map(select(.usable | not) | .reason | length > 0) | all'
jq_true "$scratch/info.json" '.default_backend | test("^[a-z]+:[0-9]+$")'
jq_true "$scratch/info.json" '.environment | has("QGEMV_CPU_ISA")'

expect_status 0 env QGEMV_CPU_ISA=ref "$tool" info --json "$scratch/file.json"
jq_true "$scratch/file.json" '.environment.QGEMV_CPU_ISA == "ref"'
echo "PASS: info text and JSON"
