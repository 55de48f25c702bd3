#!/bin/bash
# v49, call 3 (bench/NOTES.md v49): which resident form is fastest for
# Q2_0 at the issue's large and middle shapes, f32 and bf16 x, m = 1 in
# graphs: tiles (auto's choice there), lut and share forced; NF4 share at
# the middle shapes beside its lut. From the repository root after
# `source .gpu/pack/env.sh`, OUT set. Packs /tmp/r49c into $OUT/r49c.tar.xz.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r49c; source "$here/run-common.sh"
shapes="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096"
for pass in 1 2; do
  for lay in tiles lut share; do
    fmt=q2_0g64,q2_0
    [ $lay != tiles ] && fmt=all
    QGEMV_CUDA_LAYOUT=$lay timeout 100 qgemv bench --backend cuda $shapes --format $fmt --dtype f32,bf16 --m 1 \
      --graph --no-baseline --min-time 0.2 --json "$O/$lay-$pass.json" >"$O/$lay-$pass.txt" 2>&1
    step "bench $lay pass $pass"
    grep -E '^-|streaming' "$O/$lay-$pass.txt"
  done
done
