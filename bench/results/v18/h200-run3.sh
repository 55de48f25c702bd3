#!/bin/bash
# v18 run 3 (issue 13): where a batched launch's time goes, by subtraction
# (switches in kernels_matvec.cuh, y wrong): NOB (-DQGC_EXP_NOB=1: B per
# CTA's words loaded for a chunk's first scale block only), DEC1
# (-DQGC_EXP_DECODE=1: no decode), NOBDEC1 (both), LO
# (-DQGC_EXP_LOADS_ONLY=1: the ring, staging and epilogue only), each
# against the pack's module (the library), f32 and bf16 x, m = 1, 8, 16,
# at the two large shapes. Question: is f32 x batched held by the B side
# (per column group, two 16-byte shared loads per 64-part and tile-row
# group, four mma), by the decode, or by neither (the staging and the
# launch's shape)? Predicted: NOB takes 15-30% off f32 m = 8 if the B side
# holds it, under 5% at m = 1.
# Here (faac109; bench/cuda-module.sh does what /tmp/mkmod.sh did):
#   bench/cuda-module.sh /tmp/b90 NOB -DQGC_EXP_NOB=1; ... DEC1 -DQGC_EXP_DECODE=1;
#   ... NOBDEC1 -DQGC_EXP_NOB=1 -DQGC_EXP_DECODE=1; ... LO -DQGC_EXP_LOADS_ONLY=1;
#   bench/cuda-module.sh /tmp/b90 base
# NOB as run (faac109) fell into B per warp's staging for blocks past the
# first; fixed in 0ef5f43, not run again.
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/gpu-ab.sh bench/results/v18/h200-run3.sh \
#     /tmp/mods/qgemv-cuda-{NOB,DEC1,NOBDEC1,LO}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run3
rm -rf "$O"
mkdir -p "$O"
t0=$SECONDS
AB_DEADLINE=$((SECONDS + 200)) OUT=$O/ab timeout 450 bash "$here/gpu-ab.sh" qgemv-cuda-NOB.so.xz qgemv-cuda-DEC1.so.xz \
  qgemv-cuda-NOBDEC1.so.xz qgemv-cuda-LO.so.xz --shape 28672x8192 --shape 8192x28672 --format all --dtype f32,bf16 \
  --m 1,8,16 > "$O/ab-sub.txt" 2> "$O/ab-sub-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-sub.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
echo "end ($((SECONDS - t0)) s)"
