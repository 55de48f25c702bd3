#!/bin/bash
# v50, call 1 (bench/NOTES.md v50): v49's run49f.sh (the fused norm's two
# experiment switches and their sum against the default under share, the
# plain call beside, verify with each), then ncu of the middle shapes
# (tiles at 14336 x 4096 Q2_0 g64 bf16, the LUT at 14336 x 4096 NF4 f32,
# 4096 x 4096 Q2_0 g64 bf16) through gpu-pack-run.sh's profile phase.
# Packed beside run49f.sh, gpu-ab.sh, run-common.sh, gpu-pack-run.sh,
# ncu-insn.py and the modules ssqf32/gearly/both.so.xz. There, after
# `source .gpu/pack/env.sh`, OUT set: `timeout 570 bash .gpu/pack/bin/run50a.sh`.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
t0=$SECONDS
OUT=$OUT timeout 400 bash "$here/run49f.sh"
echo "run49f done ($((SECONDS - t0)) s)"
mkdir -p /tmp/r50prof
OUT=/tmp/r50prof GPU_DEADLINE=150 \
  PROFILE_CASES="q2_0g64 bf16 14336x4096,nf4 f32 14336x4096,q2_0g64 bf16 4096x4096" \
  timeout $((560 - (SECONDS - t0))) bash "$here/gpu-pack-run.sh" profile
echo "profile done ($((SECONDS - t0)) s)"
tar -C /tmp -cJf "$OUT/r50prof.tar.xz" --exclude='*.ncu-rep' r50prof
