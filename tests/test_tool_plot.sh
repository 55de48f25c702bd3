#!/bin/sh
# bench/plot.sh draws a recorded bench JSON (tests/data) into a PNG.
. "${srcdir:-.}/tests/test_tool_lib.sh"

have jq || skip "jq is not installed (apt-get install jq)"
have gnuplot || skip "gnuplot is not installed (apt-get install gnuplot-nox)"
gnuplot -e 'set terminal pngcairo' 2>/dev/null || skip "this gnuplot has no pngcairo terminal"

sh "$srcdir/bench/plot.sh" "$srcdir/tests/data/bench-cpu-small.json" "$scratch/plot.png" || fail "plot.sh failed"
[ -s "$scratch/plot.png" ] || fail "plot.sh wrote no PNG"
magic=$(od -An -tx1 -N8 "$scratch/plot.png" | tr -d ' \n')
[ "$magic" = 89504e470d0a1a0a ] || fail "plot.sh output is not a PNG (starts $magic)"

# usage errors
sh "$srcdir/bench/plot.sh" >/dev/null 2>&1 && fail "plot.sh without arguments succeeded"
echo '{}' >"$scratch/not-bench.json"
sh "$srcdir/bench/plot.sh" "$scratch/not-bench.json" "$scratch/x.png" >/dev/null 2>&1 && fail "plot.sh took a non-bench JSON"
echo "PASS: plot"
