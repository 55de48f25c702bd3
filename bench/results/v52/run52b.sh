#!/bin/bash
# v52, call 2 (bench/NOTES.md v52). The pack's module (b) is the library
# with the LUT's scale loads evict-first (call 1's gain, 0.96-0.98x at the
# large NF4 shapes, kept alone: the prefetch's hint cost 1% and the share
# form's moved nothing). Two questions:
# 1. That change alone: b against base.so.xz (2548e08, main before it), NF4
#    m = 1 at the two large shapes (the LUT).
# 2. The tiles' ring during the staging (call 1's timeline: with B per CTA
#    a warp has one ring stage in flight from the wait until the staging's
#    barrier, 1.2-2.8 us): s2x1.so.xz issues the second stage once a
#    thread's first pass of x loads is issued (x ahead of it in the
#    queues); s2x1e0.so.xz also issues no stage before the wait (x ahead of
#    every weight byte). Against b, m = 1, graphs, where the tiles take m =
#    1 (Q2_0 everywhere, NF4 at 4096 x 4096), plain and with the norm.
# Then qgemv verify with each experiment module.
# Packed beside gpu-ab.sh, run-common.sh, base.so.xz, s2x1.so.xz,
# s2x1e0.so.xz. There, after `source .gpu/pack/env.sh`, OUT set:
#   LEFT=480 timeout 500 bash .gpu/pack/bin/run52b.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r52b}; source "$here/run-common.sh"
AB_PASSES=2 AB_DEADLINE=$(($(left) - 400)) timeout $(($(left) - 380)) bash "$here/gpu-ab.sh" base.so.xz \
  --shape 28672x8192 --shape 8192x28672 --format nf4 --dtype bf16,f32 --m 1 --graph >"$O/ab-lut.txt" 2>"$O/ab-lut.err"
step "A/B LUT scales: a0 2548e08, b the pack's"
cat "$O/ab-lut.txt"; mv "$OUT/ab.tar.xz" "$O/ab-lut.tar.xz" 2>/dev/null
AB_PASSES=2 AB_DEADLINE=$(($(left) - 170)) timeout $(($(left) - 140)) bash "$here/gpu-ab.sh" s2x1.so.xz s2x1e0.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 \
  --format q2_0g64 --dtype bf16,f32 --m 1 --graph >"$O/ab-s2x.txt" 2>"$O/ab-s2x.err"
step "A/B plain: a0 s2x1, a1 s2x1e0, b the pack's"
cat "$O/ab-s2x.txt"; mv "$OUT/ab.tar.xz" "$O/ab-s2x.tar.xz" 2>/dev/null
QGEMV_CUDA_LAYOUT=tiles AB_PASSES=2 AB_DEADLINE=$(($(left) - 90)) timeout $(($(left) - 75)) bash "$here/gpu-ab.sh" \
  s2x1.so.xz s2x1e0.so.xz --shape 14336x4096 --shape 4096x4096 --format nf4,q2_0g64 --dtype bf16,f32 --m 1 --graph \
  --rmsnorm >"$O/ab-s2x-norm.txt" 2>"$O/ab-s2x-norm.err"
step "A/B tiles, norm: a0 s2x1, a1 s2x1e0, b the pack's"
cat "$O/ab-s2x-norm.txt"; mv "$OUT/ab.tar.xz" "$O/ab-s2x-norm.tar.xz" 2>/dev/null
AB_PASSES=2 AB_DEADLINE=$(($(left) - 50)) timeout $(($(left) - 40)) bash "$here/gpu-ab.sh" s2x1.so.xz s2x1e0.so.xz \
  --shape 4096x4096 --format nf4 --dtype bf16,f32 --m 1 --graph >"$O/ab-s2x-nf4.txt" 2>"$O/ab-s2x-nf4.err"
step "A/B NF4 4096 x 4096 plain (the tiles): a0 s2x1, a1 s2x1e0, b the pack's"
cat "$O/ab-s2x-nf4.txt"; mv "$OUT/ab.tar.xz" "$O/ab-s2x-nf4.tar.xz" 2>/dev/null
for m in s2x1 s2x1e0; do
  mkdir -p /tmp/$m && xz -dc "$here/$m.so.xz" > /tmp/$m/qgemv-cuda.so
  QGEMV_PLUGIN_PATH=/tmp/$m timeout 20 qgemv verify --backend cuda >"$O/verify-$m.txt" 2>&1
  step "verify ($m)"; tail -n 1 "$O/verify-$m.txt"
done
