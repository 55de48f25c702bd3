#!/bin/bash
# The lut lab's sanitizer call (issue 13 asks memcheck and racecheck of any
# kernel that lands): compute-sanitizer over a few lut variants at one small
# shape, one process per (tool, format, variant), so a report names its case.
# Run after lut-run.sh, on the GPU machine:
#   run(command="source .gpu/pack/env.sh && bash .gpu/pack/bin/lut-check.sh", carry=[".gpu/pack"])
# LUT_CHECK lists "fmt:variant:S" cases (default below; S the k-split, run at
# any unit count); LUT_CHECK_SHAPE the shape, small by default so that racecheck
# (slow on a kernel whose every lookup is a shared load) finishes: 2048 x 4096
# is one or two row units, S CTAs each.
# Outputs: san-TOOL-FMT-VARIANT.txt in LUT_CHECK_WORK (default
# /tmp/lut-check), packed after every case into $OUT/lut-check.tgz (the
# device tool brings back at most 8 files a call); a summary on stdout.
set -u
dest=${OUT:-/tmp/lut-out}
out=${LUT_CHECK_WORK:-/tmp/lut-check}
mkdir -p "$dest" "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lut=${LUT:-$here/lut}
shape=${LUT_CHECK_SHAPE:-2048x4096}
cases=${LUT_CHECK:-"nf4:prmt-w16-b16-nb8-pref2:8 nf4:cl-prmt-w16-b16-nb8-pref2:8 nf4:cl-norm-prmt-w16-b16-nb8-pref2:8 nf4:m8-prmt-w16-b16-nb4-pref2:4 nf4:s2-shf-w8-b32-nb4-pref-2cta:8 q2g128:prmt-w16-b16-nb8-pref2:8 q2g128:cl-prmt-w16-b16-nb8-pref2:8 q2g64:cl-norm-prmt-w16-b16-nb8-pref2:8 q2g128:cl-sc16-prmt-w16-b16-nb8-pref2:8 q2g64:sc16-prmt-w16-b16-nb8-pref2:8 nf4:cl-a64-prmt-w16-b16-nb8-pref2:8 nf4:a64-prmt-w16-b16-nb8-pref2:8 q2g128:cl-a64-sc16-prmt-w16-b16-nb8-pref2:8 nf4:cl-a64-s2-shf-w8-b32-nb4-pref-2cta:8"}
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -n 1)
[ -n "$san" ] || { echo "no compute-sanitizer on this machine"; exit 1; }
budget=${LUT_CHECK_S:-500}
for tool in memcheck racecheck; do
  for c in $cases; do
    f=${c%%:*} v=${c#*:} sp=${v##*:} v=${v%:*}
    [ "$SECONDS" -lt "$budget" ] || { echo "skip $tool $f $v (budget)"; continue; }
    log="$out/san-$tool-$f-$v.txt"
    timeout "${LUT_CHECK_CASE_S:-150}" "$san" --tool "$tool" --error-exitcode 9 "$lut" --no-time --shapes "$shape" --fmts "$f" --only "$v" --S "$sp" \
      > "$log" 2>&1
    rc=$?
    echo "$tool $f $v: rc $rc ($SECONDS s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)" \
      "$(grep -cE ' pass| FAIL' "$log") runs, $(grep -c FAIL "$log") FAIL"
    tar -czf "$dest/lut-check.tgz" -C "$out" . 2>/dev/null
  done
done
