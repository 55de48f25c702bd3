#!/bin/bash
# v49, for the next run (bench/NOTES.md v49): the fused norm in the share
# form, three experiment modules against the pack's (default) module under
# QGEMV_CUDA_LAYOUT=share with --rmsnorm: ssqf32.so.xz (QGC_SHARE_SSQ_F32=1:
# the squares summed in f32 a step of 16), gearly.so.xz
# (QGC_SHARE_GAMMA_EARLY=1: gamma copied into x's staging area before the
# wait) and both.so.xz (both); the plain call beside (no norm) for the
# ratio the issue asks (<= 1.05x); then `qgemv verify` under share with
# each module. From the repository root after `source .gpu/pack/env.sh`,
# OUT set. Packs /tmp/r49f into $OUT/r49f.tar.xz. Modules: `bash
# bench/cuda-module.sh BUILD NAME -DFLAG...` (see bench/results/v49/README.md).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r49f; source "$here/run-common.sh"
B=$here
shapes="--shape 1024x4096 --shape 2048x4096 --shape 4096x4096 --shape 1024x14336"
QGEMV_CUDA_LAYOUT=share AB_PASSES=2 AB_DEADLINE=200 timeout 260 bash $B/gpu-ab.sh ssqf32.so.xz gearly.so.xz both.so.xz \
  $shapes --rmsnorm --format nf4,q2_0 --dtype f32,bf16 --m 1 --graph >"$O/ab-norm.txt" 2>"$O/ab-norm.err"
step "A/B with the norm under share: a0 ssqf32, a1 gearly, a2 both, b the pack's"
cat "$O/ab-norm.txt"; mv "$OUT/ab.tar.xz" "$O/ab-norm.tar.xz"
QGEMV_CUDA_LAYOUT=share timeout 80 qgemv bench --backend cuda $shapes --format nf4,q2_0 --dtype f32,bf16 --m 1 --graph \
  --no-baseline --min-time 0.1 --working-set 512M >"$O/plain.txt" 2>&1
step "the plain call under share, the pack's module"
grep -E '^-' "$O/plain.txt"
for mod in ssqf32 gearly both; do
  d=/tmp/mod-$mod && mkdir -p $d && xz -dc $B/$mod.so.xz >$d/qgemv-cuda.so
  QGEMV_PLUGIN_PATH=$d QGEMV_CUDA_LAYOUT=share timeout 40 qgemv verify --backend cuda >"$O/verify-$mod.txt" 2>&1
  step "verify under share, $mod"
  tail -n 1 "$O/verify-$mod.txt"
done
