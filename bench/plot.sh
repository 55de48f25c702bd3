#!/bin/sh
# Draws a `qgemv bench --json` record: achieved GB/s per layer shape and
# format as clustered bars, the dense baseline as a grey bar beside them,
# and the streaming read bandwidth measured in the same run as a dashed
# horizontal line (the roofline).
#
#   bench/plot.sh RESULTS.json OUT.png
#
# Needs jq and gnuplot (Debian: jq, gnuplot-nox).
set -eu

usage() { echo "usage: $0 RESULTS.json OUT.png" >&2; exit 2; }
[ $# -eq 2 ] || usage
in=$1
out=$2
[ -r "$in" ] || { echo "$0: cannot read '$in'" >&2; exit 1; }
for tool in jq gnuplot; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$0: needs $tool (Debian: apt-get install jq gnuplot-nox)" >&2; exit 1; }
done
jq -e '.tool == "qgemv bench" and (.rows | type == "array")' "$in" >/dev/null 2>&1 ||
  { echo "$0: '$in' is not a qgemv bench --json record" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One line per shape group (layers of one shape, m and dtype share a
# group: k and v, gate and up), one column per format, then the baseline.
# Unmeasured cells are "?", gnuplot's missing value.
jq -r '
  [.rows[] | select(.ok)] as $rows
  | ($rows | map(.m) | unique | length > 1) as $many_m
  | ($rows | map(.dtype) | unique | length > 1) as $many_dtype
  | ($rows | map(.preset) | unique | length > 1) as $many_preset
  | (reduce $rows[].format_label as $f ([]; if index([$f]) then . else . + [$f] end)) as $formats
  | def key: "\(.preset)|\(.n)x\(.k)|\(.m)|\(.dtype)";
    (reduce $rows[] as $r ([]; ($r | key) as $k | if index([$k]) then . else . + [$k] end)) as $keys
  | ([$rows[] | select(.baseline.present == true)] | length > 0) as $has_base
  | ([$rows[] | select(.baseline.present == true) | .baseline.name] | first // "dense") as $base_name
  | (["shape"] + $formats + (if $has_base then ["dense baseline (" + $base_name + ")"] else [] end) | @tsv),
    ($keys[] as $k
     | [$rows[] | select(key == $k)] as $g
     | ($g | reduce .[].layer as $l ([]; if index([$l]) or $l == "-" then . else . + [$l] end)) as $layers
     | ([(if $many_preset and $g[0].preset then $g[0].preset + " " else "" end)
         + (if ($layers | length) > 0 then ($layers | join(",")) + " " else "" end)
         + "\($g[0].n)x\($g[0].k)"
         + (if $many_m then " m=\($g[0].m)" else "" end)
         + (if $many_dtype then " " + $g[0].dtype else "" end)]
        + [$formats[] as $f | ([$g[] | select(.format_label == $f) | .gbs] | first // "?")]
        + (if $has_base then [[$g[] | select(.baseline.present == true) | .baseline.gbs] | first // "?"] else [] end)
       | map(tostring) | @tsv))
' "$in" >"$tmp/data.tsv"

groups=$(($(wc -l <"$tmp/data.tsv") - 1))
[ "$groups" -gt 0 ] || { echo "$0: '$in' has no measured rows" >&2; exit 1; }
columns=$(head -n 1 "$tmp/data.tsv" | awk -F '\t' '{ print NF }')
has_base=$(jq -r '[.rows[] | select(.ok and .baseline.present == true)] | length > 0' "$in")
read_gbs=$(jq -r '.read_bandwidth_gbs // 0' "$in")
# room above the tallest bar and the roofline line, for its label
ymax=$(jq -r '[.read_bandwidth_gbs // 0, (.rows[] | select(.ok) | .gbs, (.baseline.gbs // 0))] | max * 1.15' "$in")
title=$(jq -r '
  .machine.device as $d
  | "qgemv \(.version) bench on \($d.name) (\($d.backend)"
    + (if $d.isa then ", ISA \($d.isa), \($d.threads) threads" else "" end) + ")"
    + (if .commit then ", commit \(.commit[0:10])" else "" end)
    + ", " + (.started // "" | .[0:10])' "$in" | sed 's/"/\\"/g')
width=$((400 + 110 * groups))
[ "$width" -ge 900 ] || width=900

cat >"$tmp/plot.gp" <<EOF
set terminal pngcairo size $width,600 noenhanced font "sans,10"
set output "$out"
set datafile separator "\t"
set datafile missing "?"
set title "$title"
set ylabel "achieved GB/s (weights + x + y bytes / median time)"
set yrange [0:$ymax]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key above
set grid ytics
set xtics rotate by 25 right nomirror
EOF
if [ "$(awk -v r="$read_gbs" 'BEGIN { print (r > 0) }')" = 1 ]; then
  cat >>"$tmp/plot.gp" <<EOF
set arrow 1 from graph 0, first $read_gbs to graph 1, first $read_gbs nohead dt 2 lw 2 lc rgb "#c00000"
set style textbox opaque noborder
set label 1 sprintf("read bandwidth %.1f GB/s (same run)", $read_gbs) at graph 0.01, first $read_gbs offset 0,0.8 tc rgb "#c00000" boxed front
EOF
fi
last=$columns
[ "$has_base" = true ] && last=$((columns - 1))
{
  printf 'plot for [i=2:%d] "%s" using i:xtic(1) title columnheader(i)' "$last" "$tmp/data.tsv"
  [ "$has_base" = true ] &&
    printf ', "%s" using %d title columnheader(%d) lc rgb "#808080" fill pattern 4' "$tmp/data.tsv" "$columns" "$columns"
  printf '\n'
} >>"$tmp/plot.gp"

gnuplot "$tmp/plot.gp"
echo "$0: wrote $out"
