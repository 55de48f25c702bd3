#!/bin/bash
# The next session's second call (bench/NOTES.md v52): v52's plan rule
# from s2x1e0 (QGC_EXP_S2X=3, s2x3.so.xz as a0): f32 x with all of k's B
# per CTA where a warp's whole stream fits its two ring stages takes no
# stage before the wait and issues the ring after x's first loads; every
# other launch the library's order, with x's loads volatile (so the
# shapes where the rule does not fire measure that alone). b the library.
# outhash and verify with the module first. Packed by `prepare53.sh b`.
# There, after `source .gpu/pack/env.sh`, OUT set:
#   LEFT=540 timeout 560 bash .gpu/pack/bin/run53b.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r53b}; source "$here/run-common.sh"
mkdir -p /tmp/s2x3 && xz -dc "$here/s2x3.so.xz" > /tmp/s2x3/qgemv-cuda.so
timeout 60 "$here/outhash" cuda > "$O/outhash-lib.txt" 2>&1
QGEMV_PLUGIN_PATH=/tmp/s2x3 timeout 60 "$here/outhash" cuda > "$O/outhash-s2x3.txt" 2>&1
cmp "$O/outhash-lib.txt" "$O/outhash-s2x3.txt" && echo "outhash s2x3: the same bits"
QGEMV_PLUGIN_PATH=/tmp/s2x3 timeout 30 qgemv verify --backend cuda >"$O/verify-s2x3.txt" 2>&1
step "outhash, verify"; tail -n 1 "$O/verify-s2x3.txt"
ab() { # NAME DEADLINE_LEFT ARGS...
  local name=$1 keep=$2
  shift 2
  AB_PASSES=2 AB_DEADLINE=$(($(left) - keep)) timeout $(($(left) - keep + 30)) bash "$here/gpu-ab.sh" s2x3.so.xz \
    "$@" >"$O/ab-$name.txt" 2>"$O/ab-$name.err"
  step "A/B $name: a0 s2x3, b the library"
  cat "$O/ab-$name.txt"; mv "$OUT/ab.tar.xz" "$O/ab-$name.tar.xz" 2>/dev/null
}
ab plain 250 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336 --shape 28672x8192 --format nf4,q2_0g64 \
  --dtype f32,bf16 --m 1 --graph
ab norm 20 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336 --format nf4,q2_0g64 --dtype f32,bf16 --m 1 \
  --graph --rmsnorm
