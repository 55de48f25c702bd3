#!/bin/bash
# v52, call 1 (bench/NOTES.md v52). Three questions in one call:
# 1. Where does the fused norm's 1.07-1.47x go at the middle and small
#    shapes on the tiles, and Q2_0 f32 x's 1.3x over bf16 x at 8192 x
#    28672 (bench/norm-timeline.sh with the timeline module tl.so.xz;
#    the plain lines of the 8192 x 28672 cases answer the second).
# 2. The weight stream's evict-first extended (QGC_EXP_WEF2: the LUT's
#    scale loads and L2 prefetch, the share form's weight loads): b, the
#    pack's module (wef2), against a0 base.so.xz (main's), m = 1, graphs,
#    the shapes where the LUT (NF4) and the share form take the call, plus
#    28672 x 8192 Q2_0 on the tiles as the control (unchanged code).
# 3. Q2_0 m = 1 in the LUT against the tiles today (f32 x: the tiles'
#    three bf16 terms), the four large shapes.
# Packed beside gpu-ab.sh, run-common.sh, norm-timeline.sh, timeline.py,
# base.so.xz, tl.so.xz. There, after `source .gpu/pack/env.sh`, OUT set:
#   LEFT=400 timeout 430 bash .gpu/pack/bin/run52a.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r52a}; source "$here/run-common.sh"
NORM_CASES="nf4 f32 4096x4096;q2_0g64 bf16 4096x4096;q2_0g64 bf16 14336x4096;q2_0g64 f32 14336x4096;nf4 f32 14336x4096;q2_0g64 f32 8192x28672;q2_0g64 bf16 8192x28672" \
  OUT=$O timeout 150 bash "$here/norm-timeline.sh" tl.so.xz > "$O/norm-tl.txt" 2>&1
step "norm timeline"
grep -E '^==|period|stage|loop' "$O/norm-tl.txt" | head -80
shapes="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 1024x4096 --shape 2048x4096 --shape 1024x14336"
AB_PASSES=2 AB_DEADLINE=$(($(left) - 110)) timeout $(($(left) - 80)) bash "$here/gpu-ab.sh" base.so.xz \
  $shapes --format nf4,q2_0g64 --dtype bf16,f32 --m 1 --graph >"$O/ab-wef2.txt" 2>"$O/ab-wef2.err"
step "A/B: a0 main, b wef2"
cat "$O/ab-wef2.txt"; mv "$OUT/ab.tar.xz" "$O/ab-wef2.tar.xz" 2>/dev/null
mkdir -p /tmp/base52 && xz -dc "$here/base.so.xz" > /tmp/base52/qgemv-cuda.so
for lay in tiles lut; do
  QGEMV_PLUGIN_PATH=/tmp/base52 QGEMV_CUDA_LAYOUT=$lay timeout $(($(left) > 40 ? ($(left) - 20) / 2 : 10)) \
    qgemv bench --backend cuda --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 \
    --format q2_0g64,q2_0g128 --dtype f32,bf16 --m 1 --graph --no-baseline --min-time 0.1 >"$O/q2-$lay.txt" 2>&1
  step "Q2_0 m = 1 under $lay"
  grep '^-' "$O/q2-$lay.txt"
done
timeout 40 qgemv verify --backend cuda >"$O/verify-wef2.txt" 2>&1
step "verify (wef2)"
tail -n 1 "$O/verify-wef2.txt"
