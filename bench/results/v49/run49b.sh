#!/bin/bash
# v49, call 2 (bench/NOTES.md v49): the share kernel at 256 threads against
# main's compiled-in 256 (f2ffce2, main.so.xz) with v48's two experiment
# switches (bound256.so.xz: QGC_SHARE_BOUND=256; ptrstep.so.xz:
# QGC_SHARE_PTR_STEP=1), all at st=256 under QGEMV_CUDA_LAYOUT=share; then
# the issue's shapes at m = 1 and llama3-8b's step under auto (share-run.sh
# "large llama"). From the repository root after `source
# .gpu/pack/env.sh`, OUT set; LEFT: seconds this script may take (default
# 540). Packs /tmp/r49b into $OUT/r49b.tar.xz at exit (run-common.sh).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r49b; source "$here/run-common.sh"
B=$here

# a0 main (256 compiled in), a1 bound256, a2 ptrstep, b the pack's, all 256
QGEMV_CUDA_LAYOUT=share AB_PASSES=2 AB_DEADLINE=150 timeout 200 bash $B/gpu-ab.sh main.so.xz bound256.so.xz@st=256 \
  ptrstep.so.xz@st=256 @st=256 --shape 1024x4096 --shape 1536x4096 --shape 1024x8192 --shape 2048x4096 \
  --shape 4096x4096 --format all --dtype f32,bf16 --m 1 --graph >"$O/ab-switch.txt" 2>"$O/ab-switch.err"
step "A/B of the switches at 256 under share"
cat "$O/ab-switch.txt"; mv "$OUT/ab.tar.xz" "$O/ab-switch.tar.xz"

# the issue's shapes and llama3-8b's step (share-run.sh leaves $OUT/share)
SHARE_STEPS="large llama" timeout $((${LEFT:-540} - (SECONDS - t0) - 10)) bash $B/share-run.sh >"$O/share-run.txt" 2>&1
step "share-run.sh large llama"
cat "$O/share-run.txt"; cp -r "$OUT/share" "$O/"; rm -f "$OUT/share.tar.xz"
