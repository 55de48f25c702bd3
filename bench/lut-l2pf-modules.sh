#!/bin/bash
# The LUT kernel's L2 prefetch experiment (QGC_EXP_LUT_L2PF in
# src/backend-cuda/lut_kernels.cuh; bench/NOTES.md v40): builds the CUDA
# module once per prefetch distance D (batches ahead) in a configured build
# tree, recompiling only lut_matvec.cu, and leaves each as OUT/pfD.so.xz for
# bench/gpu-ab.sh; then rebuilds the tree's module without the switch. Here:
#   bash bench/lut-l2pf-modules.sh BUILD_DIR OUT_DIR [D ...]   (default D: 2 4 8)
#   bash ../shared/gpu/pack.sh BUILD_DIR bench/gpu-ab.sh OUT_DIR/pf*.so.xz
# there (the pack's own module, without prefetch, is gpu-ab's b):
#   source .gpu/pack/env.sh; QGEMV_CUDA_LAYOUT=lut bash .gpu/pack/bin/gpu-ab.sh \
#     pf2.so.xz pf4.so.xz pf8.so.xz --graph --shape 28672x8192 ... --m 1
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: lut-l2pf-modules.sh BUILD_DIR OUT_DIR [D ...]" >&2; exit 2; }
build=$1 out=$2
shift 2
[ -f "$build/config.status" ] || { echo "lut-l2pf-modules.sh: $build is not a configured build tree" >&2; exit 2; }
dists=("$@")
[ ${#dists[@]} -gt 0 ] || dists=(2 4 8)
mkdir -p "$out"
obj=src/backend-cuda/lut_matvec
module() { # NVCCFLAGS for the one object
  rm -f "$build/$obj.lo" "$build/src/backend-cuda/.libs/lut_matvec.o"
  make -C "$build" -j"$(nproc)" NVCCFLAGS="$1" src/backend-cuda/qgemv-cuda.la > /dev/null
}
for d in "${dists[@]}"; do
  module "-DQGC_EXP_LUT_L2PF=$d"
  xz -T0 -c "$build/src/backend-cuda/.libs/qgemv-cuda.so" > "$out/pf$d.so.xz"
  echo "$out/pf$d.so.xz: QGC_EXP_LUT_L2PF=$d"
done
module ""
