#!/bin/bash
# v49, call 5 (bench/NOTES.md v49): where the fused RMSNorm's time goes in
# the share kernel (1.09-1.30x the plain call, call 1): ncu --set full of
# share_kernel, NF4 f32 x at 1024 x 14336 (512 threads) and 1024 x 4096
# (256), plain and with --rmsnorm, under QGEMV_CUDA_LAYOUT=share. From the
# repository root after `source .gpu/pack/env.sh`, OUT set. Packs /tmp/r49e
# into $OUT/r49e.tar.xz.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r49e; source "$here/run-common.sh"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
for shape in 1024x14336 1024x4096; do
  for norm in "" --rmsnorm; do
    f=$O/ncu-$shape${norm:+-norm}
    QGEMV_CUDA_LAYOUT=share timeout 50 "$ncu" --clock-control none -k regex:share_kernel -s 3 -c 1 --set full \
      -o "$f" -f qgemv bench --backend cuda --shape $shape --format nf4 --dtype f32 --m 1 --iters 5 --no-baseline \
      --working-set 64M $norm >"$f.txt" 2>&1
    step "ncu $shape $norm"
    "$ncu" -i "$f.ncu-rep" --page details >>"$f.txt" 2>&1
    grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|Dynamic Shared" "$f.txt" | head -10
  done
done
