#!/bin/bash
# The next session's first call (bench/NOTES.md v52): what v52's
# loads-first staging (Q2_0 g64, B per CTA, sm_90) does where v52 did not
# time it, and g128's part-at-a-time variant. a0 lf0.so.xz (the old
# order), a1 lf128.so.xz (g128 a part at a time), b the library. outhash
# first (the same bits with each module), then:
# 1. m = 1 at the large shapes, plain and with the norm (the two-tile
#    kernels, whose 4 bytes of spill v52 added);
# 2. m = 8 and 16 at 28672 x 8192 and 14336 x 4096, f32 x and the norm
#    (B per CTA in phases);
# 3. g128 at the middle and small shapes, m = 1, f32 x and the norm (a1's
#    question; a0 and b are the same code for g128).
# Packed by prepare53.sh. There, after `source .gpu/pack/env.sh`, OUT set:
#   LEFT=540 timeout 560 bash .gpu/pack/bin/run53a.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r53a}; source "$here/run-common.sh"
timeout 60 "$here/outhash" cuda > "$O/outhash-lib.txt" 2>&1
for m in lf0 lf128; do
  mkdir -p /tmp/$m && xz -dc "$here/$m.so.xz" > /tmp/$m/qgemv-cuda.so
  QGEMV_PLUGIN_PATH=/tmp/$m timeout 60 "$here/outhash" cuda > "$O/outhash-$m.txt" 2>&1
  cmp "$O/outhash-lib.txt" "$O/outhash-$m.txt" && echo "outhash $m: the same bits"
done
step "outhash"
ab() { # NAME DEADLINE_LEFT ARGS...
  local name=$1 keep=$2
  shift 2
  AB_PASSES=2 AB_DEADLINE=$(($(left) - keep)) timeout $(($(left) - keep + 30)) bash "$here/gpu-ab.sh" lf0.so.xz \
    lf128.so.xz "$@" >"$O/ab-$name.txt" 2>"$O/ab-$name.err"
  step "A/B $name: a0 lf0, a1 lf128, b the library"
  cat "$O/ab-$name.txt"; mv "$OUT/ab.tar.xz" "$O/ab-$name.tar.xz" 2>/dev/null
}
ab large 360 --shape 28672x8192 --shape 8192x28672 --format q2_0g64 --dtype bf16,f32 --m 1 --graph
ab large-norm 260 --shape 28672x8192 --shape 8192x28672 --format q2_0g64 --dtype bf16,f32 --m 1 --graph --rmsnorm
ab batched 120 --shape 28672x8192 --shape 14336x4096 --format q2_0g64 --dtype f32 --m 8,16 --graph
ab g128 20 --shape 14336x4096 --shape 4096x4096 --format q2_0 --dtype bf16,f32 --m 1 --graph --rmsnorm
