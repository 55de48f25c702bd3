#!/bin/bash
# Packs v53's second call (run53b.sh) from the repository root:
#   bash bench/results/v53/prepare53b.sh [BUILD]   (BUILD default /tmp/b90,
# configured --enable-werror --with-cuda-arch=sm_90 and built, with
# tests/test_cuda_backend). Modules s2x3 (QGC_EXP_S2X=3) and ph0
# (QGC_EXP_PH0=1), then the library's again (bench/cuda-module.sh, about
# two minutes each, one at a time: they share BUILD). The pack's libqgemv
# and module are compressed (the device tool's 64 MiB), so the call's
# command starts with
#   xz -d .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so.xz .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0.xz
set -euo pipefail
B=${1:-/tmp/b90}
M=/tmp/mods53b
export CUDA_MODULE_DIR=$M
files=()
for m in "s2x3:-DQGC_EXP_S2X=3" "ph0:-DQGC_EXP_PH0=1"; do
  [ -n "${SKIP_BUILT:-}" ] && [ -f "$M/${m%%:*}.so.xz" ] || {
    bash bench/cuda-module.sh "$B" "${m%%:*}" "${m#*:}"
    cp "$M/qgemv-cuda-${m%%:*}.so.xz" "$M/${m%%:*}.so.xz"
  }
  files+=("$M/${m%%:*}.so.xz")
done
bash bench/cuda-module.sh "$B" base
cc -O2 -std=c11 bench/outhash.c -Iinclude -I"$B" -L"$B/.libs" -lqgemv -lm -o "$M/outhash"
rm -rf .gpu/pack
bash ../shared/gpu/pack.sh "$B" "$B/tests/.libs/test_cuda_backend" bench/gpu-ab.sh bench/run-common.sh \
  bench/results/v53/run53b.sh "${files[@]}" "$M/outhash"
xz -T0 .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0
du -sb .gpu/pack
