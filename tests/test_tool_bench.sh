#!/bin/sh
# qgemv bench on a tiny shape: the table, and JSON and CSV that parse.
. "${srcdir:-.}/tests/test_tool_lib.sh"

nformats=$(format_names | wc -l)
[ "$nformats" -ge 3 ] || fail "qgemv info lists $nformats formats"
# A small working set keeps the test fast; the rows say it may be cached.
args="--backend cpu --shape 128x1024 --shape 64x1024 --format all --m 1,3 --min-time 0.05 --working-set 8M"
# shellcheck disable=SC2086
expect_status 0 "$tool" bench $args --json "$scratch/b.json" --csv "$scratch/b.csv"
grep -q '^layer ' "$scratch/out" || fail "bench printed no table header"
rows=$((4 * nformats)) # 2 shapes x 2 m per format
[ "$(grep -c '128x1024' "$scratch/out")" -eq $((rows / 2)) ] || fail "bench table lacks the 128x1024 rows"
[ "$(wc -l <"$scratch/b.csv")" -eq $((rows + 1)) ] || fail "CSV should have a header and $rows rows"
head -n 1 "$scratch/b.csv" | grep -q '^preset,layer,n,k,format,dtype,m,' || fail "CSV header"
# the probe again after the rows, beside the start's
grep -q '^streaming read bandwidth at the end [0-9.]* GB/s ([-+][0-9]*% from the start.s [0-9.]*' "$scratch/out" ||
  fail "bench printed no end-of-run read bandwidth"

# --iters and --json to stdout (the table then stays off stdout)
expect_status 0 "$tool" bench --backend cpu --shape 64x1024 --format nf4 --dtype f32 --rmsnorm --iters 3 --no-baseline \
  --working-set 1M --json - --quiet
cp "$scratch/out" "$scratch/stdout.json"

have jq || skip "jq is not installed: cannot check the JSON (apt-get install jq)"
jq_true "$scratch/b.json" '.tool == "qgemv bench" and .version != null and .read_bandwidth_gbs > 0'
jq_true "$scratch/b.json" '.read_bandwidth_end_gbs > 0'
jq_true "$scratch/b.json" '.machine.device.backend == "cpu" and .machine.device.threads > 0'
jq_true "$scratch/b.json" '.command | test("bench --backend cpu --shape 128x1024")'
jq_true "$scratch/b.json" "(.rows | length == $rows) and .finished"
jq_true "$scratch/b.json" '[.rows[] | .ok and .gbs > 0 and .median_s > 0 and .samples >= 5 and .pct_read > 0] | all'
jq_true "$scratch/b.json" "[.rows[] | .format] | unique == ($(format_names | jq -R . | jq -sc 'sort'))"
jq_true "$scratch/b.json" '[.rows[] | .m] | unique == [1, 3]'
jq_true "$scratch/b.json" '[.rows[] | .baseline | .present or (.reason | length > 0)] | all'
jq_true "$scratch/b.json" '[.rows[] | select(.baseline.present) | .speedup > 0] | all'
jq_true "$scratch/stdout.json" '.rows | length == 1'
jq_true "$scratch/stdout.json" '.rows[0] | .samples == 3 and .dtype == "f32" and .rmsnorm and .baseline == null'
jq_true "$scratch/stdout.json" '.options.iters == 3'

# Rows are recorded as they finish: a run killed part way leaves JSON that
# parses, marked unfinished, with the rows measured, and CSV with them (a
# row more if the kill fell between its CSV line and the JSON rewrite).
"$tool" bench --backend cpu --shape 128x1024 --format all --dtype f32,bf16 --m 1,2 --min-time 1 --no-baseline \
  --working-set 8M --json "$scratch/k.json" --csv "$scratch/k.csv" --quiet &
pid=$!
waited=0
until jq -e '.rows | length >= 2' "$scratch/k.json" >/dev/null 2>&1; do
  [ "$waited" -lt 120 ] || { kill -9 "$pid"; fail "bench recorded no 2 rows in 120 s"; }
  sleep 1
  waited=$((waited + 1))
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
jq_true "$scratch/k.json" '.finished == false and (.rows | length) >= 2 and (.rows | length) < 12'
jq_true "$scratch/k.json" 'has("read_bandwidth_end_gbs") and .read_bandwidth_end_gbs == null'
jq_true "$scratch/k.json" '[.rows[] | .ok and .gbs > 0] | all'
rows=$(jq '.rows | length' "$scratch/k.json")
lines=$(($(wc -l <"$scratch/k.csv") - 1))
[ "$lines" -ge "$rows" ] && [ "$lines" -le $((rows + 1)) ] || fail "the killed run's CSV has $lines rows, its JSON $rows"

# the commit is recorded when given
expect_status 0 env QGEMV_BENCH_COMMIT=0123456789abcdef "$tool" bench --shape 64x1024 --format nf4 --iters 1 \
  --no-baseline --working-set 1M --json "$scratch/c.json" --quiet
jq_true "$scratch/c.json" '.commit == "0123456789abcdef"'
echo "PASS: bench"
