#!/bin/bash
# Builds and packs the next session's first device call (bench/NOTES.md
# v52, "First in the next session"), from the repository root:
#   bash bench/results/v52/prepare53.sh a|b [BUILD]  (BUILD default /tmp/b90)
# BUILD: a tree configured with `configure --enable-werror
# --with-cuda-arch=sm_90` and built (make -j2 && make -j2
# tests/test_cuda_backend). Modules (bench/cuda-module.sh, about a minute
# each), then the library's again: for call a, lf0 (QGC_EXP_LF=0: Q2_0's
# staging in the old order, main before v52) and lf128 (QGC_EXP_LF128=1:
# g128 loads first a part at a time); for call b, s2x3 (QGC_EXP_S2X=3:
# v52's rule for f32 x where a warp's stream fits its ring). Two calls,
# two packs: the tree (23 MB) and the pack must stay under the device
# tool's 64 MiB, which holds two extra modules, not three. The pack
# (.gpu/pack) holds the library, the call's modules, its script and
# outhash; its libqgemv and module are compressed, so the call's command
# starts with
#   xz -d .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so.xz .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0.xz
# and then: source .gpu/pack/env.sh && LEFT=540 timeout 560 bash .gpu/pack/bin/run53a.sh
# (or run53b.sh).
set -euo pipefail
call=${1:?usage: prepare53.sh a|b [BUILD]}
B=${2:-/tmp/b90}
M=/tmp/mods53
export CUDA_MODULE_DIR=$M
case $call in
  a) mods="lf0:-DQGC_EXP_LF=0 lf128:-DQGC_EXP_LF128=1" ;;
  b) mods="s2x3:-DQGC_EXP_S2X=3" ;;
  *) echo "prepare53.sh: call a or b" >&2; exit 2 ;;
esac
files=()
for m in $mods; do
  bash bench/cuda-module.sh "$B" "${m%%:*}" "${m#*:}"
  cp "$M/qgemv-cuda-${m%%:*}.so.xz" "$M/${m%%:*}.so.xz"
  files+=("$M/${m%%:*}.so.xz")
done
bash bench/cuda-module.sh "$B" base
cc -O2 -std=c11 bench/outhash.c -Iinclude -I"$B" -L"$B/.libs" -lqgemv -lm -o "$M/outhash"
rm -rf .gpu/pack
bash ../shared/gpu/pack.sh "$B" "$B/tests/.libs/test_cuda_backend" bench/gpu-ab.sh bench/run-common.sh \
  "bench/results/v52/run53$call.sh" "${files[@]}" "$M/outhash"
xz -T0 .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0
du -sb .gpu/pack
