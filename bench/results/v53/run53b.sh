#!/bin/bash
# v53's second call: a0 s2x3.so.xz (QGC_EXP_S2X=3, v52's plan rule: f32 x
# with all of k's B per CTA where a warp's whole stream fits its two ring
# stages takes no stage before the wait and issues the ring after x's
# first loads), a1 ph0.so.xz (QGC_EXP_PH0=1: with B per CTA in phases,
# the first unit's phase 0 staged before the ring's rest), b the library.
# outhash and verify with each module first. Packed by prepare53b.sh.
# There, after `source .gpu/pack/env.sh`, OUT set:
#   LEFT=540 timeout 560 bash .gpu/pack/bin/run53b.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r53b}; source "$here/run-common.sh"
timeout 60 "$here/outhash" cuda > "$O/outhash-lib.txt" 2>&1
for m in s2x3 ph0; do
  mkdir -p /tmp/$m && xz -dc "$here/$m.so.xz" > /tmp/$m/qgemv-cuda.so
  QGEMV_PLUGIN_PATH=/tmp/$m timeout 60 "$here/outhash" cuda > "$O/outhash-$m.txt" 2>&1
  cmp "$O/outhash-lib.txt" "$O/outhash-$m.txt" && echo "outhash $m: the same bits"
  QGEMV_PLUGIN_PATH=/tmp/$m timeout 30 qgemv verify --backend cuda >"$O/verify-$m.txt" 2>&1
  tail -n 1 "$O/verify-$m.txt"
done
step "outhash, verify"
ab() { # NAME DEADLINE_LEFT ARGS...
  local name=$1 keep=$2
  shift 2
  AB_PASSES=2 AB_DEADLINE=$(($(left) - keep)) timeout $(($(left) - keep + 30)) bash "$here/gpu-ab.sh" s2x3.so.xz \
    ph0.so.xz "$@" >"$O/ab-$name.txt" 2>"$O/ab-$name.err"
  step "A/B $name: a0 s2x3, a1 ph0, b the library"
  cat "$O/ab-$name.txt"; mv "$OUT/ab.tar.xz" "$O/ab-$name.tar.xz" 2>/dev/null
}
# m = 1: the phased shapes (k = 28672, f32 x / the norm) and the rule's
ab m1 250 --shape 4096x4096 --shape 8192x28672 --shape 4096x14336 --format nf4,q2_0g64 --dtype f32 --m 1 --graph
ab norm 150 --shape 4096x4096 --shape 8192x28672 --format nf4,q2_0g64 --dtype f32,bf16 --m 1 --graph --rmsnorm
# batched f32 x: B per CTA in phases
ab batched 20 --shape 8192x28672 --shape 28672x8192 --format nf4,q2_0g64 --dtype f32 --m 8 --graph
