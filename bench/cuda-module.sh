#!/bin/bash
# Builds the CUDA module with extra defines (experiment switches,
# kernels_matvec.cuh) in a configured build tree, for A/B runs on the GPU
# machine (bench/gpu-ab.sh takes the result):
#   bench/cuda-module.sh BUILD NAME [-DFLAG ...]
# writes OUTDIR/qgemv-cuda-NAME.so and .so.xz (OUTDIR: CUDA_MODULE_DIR,
# default /tmp/mods) and leaves BUILD's module at that variant: build NAME
# "base" with no flags last to restore the library's. The .cu objects do
# not track the .cuh headers, so every CUDA object is rebuilt.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: cuda-module.sh BUILD NAME [-DFLAG ...]" >&2; exit 2; }
build=$1 name=$2
shift 2
out=${CUDA_MODULE_DIR:-/tmp/mods}
mkdir -p "$out"
rm -f "$build"/src/backend-cuda/*.lo "$build"/src/backend-cuda/.libs/*.o
# The build's own flags plus the defines; CPPFLAGS too, so that a layout
# switch (layout.h) reaches repack.c as well
conf() { sed -n "s/^$1 = //p" "$build/Makefile" | head -n 1; }
make -C "$build" -j"$(nproc)" src/backend-cuda/qgemv-cuda.la CUDA_CPPFLAGS="$(conf CUDA_CPPFLAGS) $*" \
  CPPFLAGS="$(conf CPPFLAGS) $*" \
  > "$out/build-$name.log" 2>&1 || { tail -20 "$out/build-$name.log" >&2; exit 1; }
cp "$build/src/backend-cuda/.libs/qgemv-cuda.so" "$out/qgemv-cuda-$name.so"
xz -T0 -f -k "$out/qgemv-cuda-$name.so"
echo "$out/qgemv-cuda-$name.so.xz"
