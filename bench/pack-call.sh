#!/bin/bash
# Packs one device call (bench/NOTES.md: "First in the next session"):
# experiment modules built here, the library, the call's script and
# outhash, into .gpu/pack. From the repository root:
#   bash bench/pack-call.sh BUILD SCRIPT [NAME:FILE.so.xz | NAME:-DFLAG[,-DFLAG...]]...
# BUILD: a tree configured with `configure --enable-werror
# --with-cuda-arch=sm_90` and built (make -j2 && make -j2
# tests/test_cuda_backend). SCRIPT: the call's script (bench/results/vNN/
# runNN.sh, which sources run-common.sh). Each NAME becomes NAME.so.xz
# beside the script: a module built here with the flags
# (bench/cuda-module.sh, about two minutes each, one at a time), or a
# module file kept from before (e.g. the last session's library). The
# library's module is built again last. The pack's libqgemv and module
# are compressed (the device tool's 64 MiB: the tree, 23 MB, plus the pack
# holds three extra modules), so the call's command starts with
#   xz -d .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so.xz .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0.xz
# and goes on: source .gpu/pack/env.sh && LEFT=540 timeout 560 bash .gpu/pack/bin/SCRIPT
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: pack-call.sh BUILD SCRIPT [NAME:FILE.so.xz | NAME:-DFLAG[,-DFLAG...]]..." >&2; exit 2; }
B=$1 script=$2
shift 2
M=${CUDA_MODULE_DIR:-/tmp/pack-call-mods}
export CUDA_MODULE_DIR=$M
mkdir -p "$M"
files=()
for spec in "$@"; do
  name=${spec%%:*} what=${spec#*:}
  case $what in
    -D*) # shellcheck disable=SC2046
      bash bench/cuda-module.sh "$B" "$name" $(tr ',' ' ' <<<"$what")
      cp "$M/qgemv-cuda-$name.so.xz" "$M/$name.so.xz" ;;
    *) [ -f "$what" ] || { echo "pack-call.sh: no module file '$what'" >&2; exit 2; }
      cp "$what" "$M/$name.so.xz" ;;
  esac
  files+=("$M/$name.so.xz")
done
bash bench/cuda-module.sh "$B" base
cc -O2 -std=c11 bench/outhash.c -Iinclude -I"$B" -L"$B/.libs" -lqgemv -lm -o "$M/outhash"
rm -rf .gpu/pack
bash ../shared/gpu/pack.sh "$B" "$B/tests/.libs/test_cuda_backend" bench/gpu-ab.sh bench/run-common.sh \
  "$script" "${files[@]}" "$M/outhash"
xz -T0 .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so .gpu/pack/root/usr/local/lib/libqgemv.so.0.0.0
du -sb .gpu/pack
