#!/bin/bash
# v50, call 3 (bench/NOTES.md v50): the fused norm against the plain call
# under the automatic layout (weights uploaded for m = 1), at the issue's
# shapes and 1024 x 4096, every format, f32 and bf16 x, m = 1, in graphs:
# the pack's module with --rmsnorm against normb2.so.xz (QGC_EXP_NORM_B2=1:
# Q2_0's norm with bf16 x and gamma as two cut bf16 terms in B instead of
# gamma in A), alternating; then the plain call twice. Packed beside
# gpu-ab.sh, run-common.sh and normb2.so.xz. There, after `source
# .gpu/pack/env.sh`, OUT set: `timeout 560 bash .gpu/pack/bin/run50c.sh`.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r50c; source "$here/run-common.sh"
shapes="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --shape 1024x4096"
AB_PASSES=2 AB_DEADLINE=300 timeout 380 bash "$here/gpu-ab.sh" normb2.so.xz \
  $shapes --rmsnorm --format nf4,q2_0g64,q2_0 --dtype f32,bf16 --m 1 --graph >"$O/ab-norm.txt" 2>"$O/ab-norm.err"
step "A/B with the norm, auto layout: a0 normb2, b the pack's"
cat "$O/ab-norm.txt"; mv "$OUT/ab.tar.xz" "$O/ab-norm.tar.xz"
for pass in 1 2; do
  timeout 70 qgemv bench --backend cuda $shapes --format nf4,q2_0g64,q2_0 --dtype f32,bf16 --m 1 --graph \
    --no-baseline --min-time 0.05 --working-set 512M --json "$O/plain-$pass.json" >"$O/plain-$pass.txt" 2>&1
  step "the plain call, auto layout, pass $pass"
  grep -E '^-' "$O/plain-$pass.txt"
done
