#!/bin/sh
# qgemv verify --backend all passes here (skipped targets are fine) and
# its JSON parses; a named backend that cannot open is a failure (1).
. "${srcdir:-.}/tests/test_tool_lib.sh"

combos=$((8 * $(format_names | wc -l))) # per format: x and y dtype x RMSNorm
[ "$combos" -ge 24 ] || fail "qgemv info lists $((combos / 8)) formats"
expect_status 0 "$tool" verify --backend cpu
grep -q " 0 of $combos combinations failed" "$scratch/out" || fail "verify --backend cpu: $(tail -n 1 "$scratch/out")"

expect_status 0 "$tool" verify --backend all --json "$scratch/verify.json"
grep -q '^cpu/ref ' "$scratch/out" || fail "verify --backend all did not run the ref level"
expect_status 1 "$tool" verify --backend nosuchbackend

have jq || skip "jq is not installed: cannot check the JSON (apt-get install jq)"
jq_true "$scratch/verify.json" '.ok == true and .failed == 0'
jq_true "$scratch/verify.json" '[.targets[] | select(.status == "passed")] | length >= 2'
jq_true "$scratch/verify.json" "[.targets[] | select(.status == \"passed\") | .results | length == $combos] | all"
jq_true "$scratch/verify.json" '[.targets[] | select(.status == "skipped") | .reason | length > 0] | all'
jq_true "$scratch/verify.json" '[.targets[].results[] | .worst_over_bound <= 1 and .pass] | all'
echo "PASS: verify"
