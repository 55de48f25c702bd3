#!/bin/bash
# v53's one call (machines were scarce: v52's two planned calls in one):
# a0 lf0.so.xz (QGC_EXP_LF=0: Q2_0 g64's staging in the old order, main
# before v52), a1 ph0.so.xz (QGC_EXP_PH0=1: with B per CTA in phases, the
# first unit's phase 0 staged before the ring's rest), b the library
# (v52's loads-first staging). outhash with each module first (the same
# bits), verify with ph0. Then:
# 1. m = 1 at the large shapes, Q2_0 g64, plain and with the norm (v52's
#    loads-first where it was not timed; ph0 where k = 28672 is phased);
# 2. batched f32 x, m = 8 and 16 (B per CTA in phases);
# 3. NF4 f32 at 8192 x 28672, m = 1 and 8 (ph0 only: NF4 keeps the old
#    order, so a0 is the library there).
# Packed as README.md says. There, after `source .gpu/pack/env.sh`, OUT set:
#   LEFT=540 timeout 560 bash .gpu/pack/bin/run53c.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r53c}; source "$here/run-common.sh"
# the checks only in a long call (LEFT >= 400): a short one times first
if [ "${LEFT:-540}" -ge 400 ]; then
  timeout 60 "$here/outhash" cuda > "$O/outhash-lib.txt" 2>&1
  for m in lf0 ph0; do
    mkdir -p /tmp/$m && xz -dc "$here/$m.so.xz" > /tmp/$m/qgemv-cuda.so
    QGEMV_PLUGIN_PATH=/tmp/$m timeout 60 "$here/outhash" cuda > "$O/outhash-$m.txt" 2>&1
    cmp "$O/outhash-lib.txt" "$O/outhash-$m.txt" && echo "outhash $m: the same bits"
  done
  QGEMV_PLUGIN_PATH=/tmp/ph0 timeout 30 qgemv verify --backend cuda >"$O/verify-ph0.txt" 2>&1
  step "outhash, verify"; tail -n 1 "$O/verify-ph0.txt"
fi
ab() { # NAME KEEP ARGS... (KEEP: percent of LEFT kept for the steps after it)
  local name=$1 keep=$((${LEFT:-540} * $2 / 100))
  shift 2
  AB_PASSES=2 AB_DEADLINE=$(($(left) - keep)) timeout $(($(left) - keep + 30)) bash "$here/gpu-ab.sh" lf0.so.xz \
    ph0.so.xz "$@" >"$O/ab-$name.txt" 2>"$O/ab-$name.err"
  step "A/B $name: a0 lf0, a1 ph0, b the library"
  cat "$O/ab-$name.txt"; mv "$OUT/ab.tar.xz" "$O/ab-$name.tar.xz" 2>/dev/null
}
ab large 60 --shape 28672x8192 --shape 8192x28672 --format q2_0g64 --dtype bf16,f32 --m 1 --graph
ab large-norm 40 --shape 28672x8192 --shape 8192x28672 --format q2_0g64 --dtype bf16,f32 --m 1 --graph --rmsnorm
ab batched 14 --shape 28672x8192 --shape 14336x4096 --shape 8192x28672 --format q2_0g64 --dtype f32 --m 8,16 --graph
ab nf4 3 --shape 8192x28672 --format nf4 --dtype f32 --m 1,8 --graph
