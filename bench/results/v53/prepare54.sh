#!/bin/bash
# Packs the next session's first call (run54.sh; bench/NOTES.md v53) from
# the repository root:
#   bash bench/results/v53/prepare54.sh [BUILD]   (BUILD default /tmp/b90,
# configured --enable-werror --with-cuda-arch=sm_90 and built, with
# tests/test_cuda_backend). Modules (bench/cuda-module.sh, about two
# minutes each, one at a time: they share BUILD): old (QGC_EXP_LF=0
# QGC_EXP_PH0=0: every kernel as before v52, i.e. v53's lf0) and noph0
# (QGC_EXP_PH0=0: v53's loads-first bound without phase 0 early), then the
# library's again. The pack's libqgemv and module are compressed (the
# device tool's 64 MiB), so the call's command is
#   xz -d .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so.xz .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0.xz && source .gpu/pack/env.sh && LEFT=540 timeout 560 bash .gpu/pack/bin/run54.sh
set -euo pipefail
B=${1:-/tmp/b90}
M=/tmp/mods54
export CUDA_MODULE_DIR=$M
files=()
for m in "old:-DQGC_EXP_LF=0 -DQGC_EXP_PH0=0" "noph0:-DQGC_EXP_PH0=0"; do
  # shellcheck disable=SC2086
  bash bench/cuda-module.sh "$B" "${m%%:*}" ${m#*:}
  cp "$M/qgemv-cuda-${m%%:*}.so.xz" "$M/${m%%:*}.so.xz"
  files+=("$M/${m%%:*}.so.xz")
done
bash bench/cuda-module.sh "$B" base
cc -O2 -std=c11 bench/outhash.c -Iinclude -I"$B" -L"$B/.libs" -lqgemv -lm -o "$M/outhash"
rm -rf .gpu/pack
bash ../shared/gpu/pack.sh "$B" "$B/tests/.libs/test_cuda_backend" bench/gpu-ab.sh bench/run-common.sh \
  bench/results/v53/run54.sh "${files[@]}" "$M/outhash"
xz -T0 .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0
du -sb .gpu/pack
