#!/bin/bash
# v49, call 6 (bench/NOTES.md v49): the norm's squares summed in f32 a step
# of 16 (ssqf32.so.xz: QGC_SHARE_SSQ_F32=1, one f64 conversion a step
# instead of 16) against the pack's module, with --rmsnorm under share;
# `qgemv verify` with that module under share. From the repository root
# after `source .gpu/pack/env.sh`, OUT set. Packs /tmp/r49f into
# $OUT/r49f.tar.xz.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r49f; source "$here/run-common.sh"
B=$here
QGEMV_CUDA_LAYOUT=share AB_PASSES=1 timeout 70 bash $B/gpu-ab.sh ssqf32.so.xz --shape 1024x4096 --shape 1024x14336 \
  --shape 4096x4096 --rmsnorm --format nf4,q2_0 --dtype f32,bf16 --m 1 --graph >"$O/ab-ssq.txt" 2>"$O/ab-ssq.err"
step "A/B with the norm under share: a0 squares in f32 a step, b the pack's"
cat "$O/ab-ssq.txt"; mv "$OUT/ab.tar.xz" "$O/ab-ssq.tar.xz"
d=/tmp/ssqmod && mkdir -p $d && xz -dc $B/ssqf32.so.xz >$d/qgemv-cuda.so
QGEMV_PLUGIN_PATH=$d QGEMV_CUDA_LAYOUT=share timeout 40 qgemv verify --backend cuda >"$O/verify-ssq.txt" 2>&1
step "verify under share, the squares in f32"
tail -n 1 "$O/verify-ssq.txt"
