#!/bin/bash
# Builds and packs the next session's first device call (bench/NOTES.md
# v52, "First in the next session"), from the repository root:
#   bash bench/results/v52/prepare53.sh [BUILD]      (BUILD default /tmp/b90)
# BUILD: a tree configured with `configure --enable-werror
# --with-cuda-arch=sm_90` and built (make -j2 && make -j2
# tests/test_cuda_backend). Modules (bench/cuda-module.sh, about a minute
# each): lf0 (QGC_EXP_LF=0: Q2_0's staging in the old order, main before
# v52), lf128 (QGC_EXP_LF128=1: g128 loads first a part at a time), then
# the library's again. The pack (.gpu/pack) then holds the library, the
# two modules, run53a.sh and outhash; its libqgemv and module are
# compressed to stay under the device tool's 64 MiB, so the call's
# command starts with
#   xz -d .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so.xz .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0.xz
# and then: source .gpu/pack/env.sh && LEFT=540 timeout 560 bash .gpu/pack/bin/run53a.sh
set -euo pipefail
B=${1:-/tmp/b90}
M=/tmp/mods53
export CUDA_MODULE_DIR=$M
bash bench/cuda-module.sh "$B" lf0 -DQGC_EXP_LF=0
bash bench/cuda-module.sh "$B" lf128 -DQGC_EXP_LF128=1
bash bench/cuda-module.sh "$B" base
cp "$M/qgemv-cuda-lf0.so.xz" "$M/lf0.so.xz"
cp "$M/qgemv-cuda-lf128.so.xz" "$M/lf128.so.xz"
cc -O2 -std=c11 bench/outhash.c -Iinclude -I"$B" -L"$B/.libs" -lqgemv -lm -o "$M/outhash"
rm -rf .gpu/pack
bash ../shared/gpu/pack.sh "$B" "$B/tests/.libs/test_cuda_backend" bench/gpu-ab.sh bench/run-common.sh \
  bench/results/v52/run53a.sh "$M/lf0.so.xz" "$M/lf128.so.xz" "$M/outhash"
xz -T0 .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0
du -sb .gpu/pack
