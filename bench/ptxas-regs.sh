#!/bin/bash
# Registers and spills per matvec kernel as ptxas reports them, compiled
# here (no GPU needed) from one of the module's .cu files with extra
# defines, for a quick look at an experiment switch before a device run:
#   bench/ptxas-regs.sh BUILD FILE.cu [ARCH] [-DFLAG ...]
# BUILD: a configured build tree (for config.h); FILE.cu: a file in
# src/backend-cuda (e.g. matvec_nf4.cu); ARCH: sm_90 (default) or sm_121.
# Prints "KERNEL+ARGS registers spill-stores spill-loads" per kernel of
# namespace qgc (matvec, tail, share, lut: the name and its mangled
# template arguments, e.g. share_kernelILi2ELb1ELi0 for <2, true, 0>), with
# the module's own flags (-O3, --maxrregcount=128).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: ptxas-regs.sh BUILD FILE.cu [ARCH] [-DFLAG ...]" >&2; exit 2; }
build=$1 file=$2
shift 2
arch=sm_90
case ${1:-} in sm_*) arch=$1; shift ;; esac
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
obj=$(mktemp /tmp/ptxas-regs.XXXXXX.o)
trap 'rm -f "$obj"' EXIT
"$nvcc" -gencode=arch=compute_${arch#sm_},code=$arch -O3 -std=c++17 --maxrregcount=128 \
  -DQG_CUDA_ARCHS="\"$arch\"" -I"$src/include" -I"$build" -I/usr/local/cuda/include "$@" -Xptxas -v -c \
  -o "$obj" "$src/src/backend-cuda/$file" 2>&1 |
  awk '/Compiling entry function/ { fn = $0; sub(/.*function .*qgc[0-9]+/, "", fn); sub(/EEEvNS_[0-9]+[A-Za-z]*Params.*/, "", fn) }
       /spill stores/ { st = $5; ld = $9 }
       /Used [0-9]+ registers/ && fn != "" { for (i = 1; i <= NF; i++) if ($i == "Used") r = $(i + 1);
                                            print fn, r, st, ld; fn = "" }'
