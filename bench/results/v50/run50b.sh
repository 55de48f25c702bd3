#!/bin/bash
# v50, call 2 (bench/NOTES.md v50): (1) Q2_0 with bf16 x on the tiles: the
# integer mma (QGEMV_CUDA_PLAN x=int, and x=auto) against the direct mode
# (the pack's default) at the issue's shapes, m = 1 and 8, in graphs;
# (2) NF4's LUT at the middle shapes, its automatic geometry (R 1024)
# against QGEMV_CUDA_LAYOUT=lut's (R 512), alternating; (3) qgemv verify
# under x=int. Packed beside gpu-ab.sh and run-common.sh. There, after
# `source .gpu/pack/env.sh`, OUT set: `timeout 560 bash .gpu/pack/bin/run50b.sh`.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r50b; source "$here/run-common.sh"
shapes="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --shape 1024x4096"
QGEMV_CUDA_LAYOUT=tiles AB_PASSES=2 AB_DEADLINE=250 timeout 330 bash "$here/gpu-ab.sh" @x=int @x=auto \
  $shapes --format q2_0,q2_0g64 --dtype bf16 --m 1,8 --graph >"$O/ab-i4.txt" 2>"$O/ab-i4.err"
step "A/B, Q2_0 bf16 x on the tiles: a0 x=int, a1 x=auto, b direct"
cat "$O/ab-i4.txt"; mv "$OUT/ab.tar.xz" "$O/ab-i4.tar.xz"
for pass in 1 2; do
  for lay in auto lut; do
    QGEMV_CUDA_LAYOUT=${lay/auto/} timeout 40 qgemv bench --backend cuda --shape 14336x4096 --shape 4096x14336 \
      --format nf4 --dtype f32,bf16 --m 1 --graph --no-baseline --min-time 0.05 --working-set 512M \
      >"$O/lut-$lay-$pass.txt" 2>&1
    step "NF4 middle shapes, layout $lay, pass $pass"
    grep -E '^-' "$O/lut-$lay-$pass.txt"
  done
done
QGEMV_CUDA_LAYOUT=tiles QGEMV_CUDA_PLAN=x=int timeout 60 qgemv verify --backend cuda >"$O/verify-xint.txt" 2>&1
step "verify, tiles, x=int"
tail -n 2 "$O/verify-xint.txt"
