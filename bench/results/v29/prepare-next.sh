#!/bin/bash
# Builds and packs what NOTES v29 puts first in the next session's device
# time, in one call (run from the project root, about 10 minutes here):
#   bash bench/results/v29/prepare-next.sh [CUDA_BUILD] [OLD_BUILD]
# CUDA_BUILD: a build tree of HEAD configured --with-cuda-arch=sm_90
# (default /tmp/b90; made if absent); OLD_BUILD: a CPU-only build of
# 0ae572f, whose library h200host-cpu.sh measures against (default
# /tmp/bold; made from a worktree if absent). Then, on the device:
#   source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run5.sh; OUT=$OUT bash .gpu/pack/bin/h200host-cpu.sh
set -euo pipefail
root=$(pwd)
[ -f configure.ac ] && [ -f bench/cuda-module.sh ] || { echo "prepare-next: run from the project root" >&2; exit 2; }
B=${1:-/tmp/b90} OLD=${2:-/tmp/bold}
[ -x configure ] || ./autogen.sh
if [ ! -f "$B/Makefile" ]; then
  mkdir -p "$B" && (cd "$B" && "$root/configure" --enable-werror --with-cuda-arch=sm_90 > configure.log)
fi
make -C "$B" -j"$(nproc)" > /dev/null
for v in "TEX1 -DQGC_EXP_NF4_TEX=1" "TEX5 -DQGC_EXP_NF4_TEX=5" "TEXF -DQGC_EXP_NF4_TEX=15" "base"; do
  # shellcheck disable=SC2086
  bash bench/cuda-module.sh "$B" $v
done
if [ ! -f "$OLD/.libs/libqgemv.so.0.0.0" ]; then
  [ -d /tmp/w-old ] || git worktree add /tmp/w-old 0ae572f
  (cd /tmp/w-old && [ -x configure ] || ./autogen.sh) > /dev/null
  mkdir -p "$OLD" && (cd "$OLD" && /tmp/w-old/configure --without-cuda > configure.log && make -j"$(nproc)" > /dev/null)
fi
xz -c "$OLD/.libs/libqgemv.so.0.0.0" > /tmp/libqgemv-old.so.xz
bash ../shared/gpu/pack.sh "$B" bench/run-common.sh bench/gpu-ab.sh bench/gpu-pack-run.sh bench/ncu-insn.py \
  bench/results/v28/h200-run5.sh bench/results/v29/h200host-cpu.sh /tmp/mods/qgemv-cuda-TEX{1,5,F}.so.xz \
  /tmp/libqgemv-old.so.xz
du -sh .gpu/pack
