#!/bin/bash
# Builds and packs v31's run 2 (bench/results/v31/h200-run2.sh, the first
# thing for the next device time, NOTES-cpu v31-v32) in one call, from the
# project root; about 5 minutes here when the builds exist, 15 when not:
#   bash bench/results/v32/prepare-run2.sh [CUDA_BUILD] [V30_BUILD]
# CUDA_BUILD: a build tree of HEAD configured --with-cuda-arch=sm_90
# (default /tmp/b90; made if absent); V30_BUILD: a CPU-only build of
# da869dd (v30), whose avx512vnni the run measures HEAD's against (default
# /tmp/bv30; made from a worktree if absent). Then, on the device:
#   source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -euo pipefail
root=$(pwd)
[ -f configure.ac ] && [ -f bench/run-common.sh ] || { echo "prepare-run2: run from the project root" >&2; exit 2; }
B=${1:-/tmp/b90} V30=${2:-/tmp/bv30}
[ -x configure ] || ./autogen.sh > /dev/null
if [ ! -f "$B/Makefile" ]; then
  mkdir -p "$B" && (cd "$B" && "$root/configure" --enable-werror --with-cuda-arch=sm_90 > configure.log)
fi
make -C "$B" -j"$(nproc)" > /dev/null
make -C "$B" -j"$(nproc)" tests/test_adversarial tests/test_cpu_levels tests/test_x86_emu > /dev/null
make -C bench/cpu-lab amx-probe q2-amx-hot BUILD="$B" > /dev/null
if [ ! -f "$V30/.libs/libqgemv.so.0.0.0" ]; then
  [ -d /tmp/w-v30 ] || git worktree add /tmp/w-v30 da869dd > /dev/null
  (cd /tmp/w-v30 && { [ -x configure ] || ./autogen.sh; }) > /dev/null
  mkdir -p "$V30" && (cd "$V30" && /tmp/w-v30/configure --without-cuda > configure.log && make -j"$(nproc)" > /dev/null)
fi
xz -c "$V30/.libs/libqgemv.so.0.0.0" > /tmp/libqgemv-v30.so.xz
# the AMX level must be in the packed library, and the labs must be native
grep -q avx512amx "$B/.libs/libqgemv.so" || { echo "prepare-run2: $B's library has no avx512amx level" >&2; exit 1; }
for p in bench/cpu-lab/amx-probe bench/cpu-lab/q2-amx-hot; do
  n=$(objdump -d --no-show-raw-insn "$p" | grep -c 'tdpbsud' || true) # not grep -q: pipefail
  [ "$n" -gt 0 ] || { echo "prepare-run2: $p is not a native AMX build" >&2; exit 1; }
done
bash ../shared/gpu/pack.sh "$B" bench/run-common.sh bench/cpu-lab/amx-probe bench/cpu-lab/q2-amx-hot \
  bench/results/v31/h200-run2.sh "$B/tests/.libs/test_adversarial" "$B/tests/.libs/test_cpu_levels" \
  "$B/tests/test_x86_emu" /tmp/libqgemv-v30.so.xz
du -sh .gpu/pack
