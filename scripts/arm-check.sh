#!/bin/sh
# The Arm proof of the CPU backend: cross-build libqgemv and the CPU level
# suites (tests/test_cpu_levels, tests/test_adversarial) for AArch64 with
# aarch64-linux-gnu-gcc, then run them under qemu-aarch64 with every level
# they run required, so
# that it cannot pass by skipping NEON (qemu's default CPU has the
# dot-product instructions of the neondot level).
#
# Needs (Debian 12, as root):
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
#     pkg-config libhwloc-dev:arm64 check:arm64 libgomp1:arm64
# and a generated ./configure (./autogen.sh). Also: make arm-check.
#
# Usage: scripts/arm-check.sh [BUILD_DIR]   (default: a fresh temp dir)
# Environment: ARM_CHECK_LEVELS (default "neon neondot scalar": the levels
# run under emulation, separated by spaces or commas, each required; "ref"
# works too but is slow there; a name that is not a level fails the
# suites), ARM_CHECK_JOBS.
set -eu

host=aarch64-linux-gnu
srcdir=$(cd "$(dirname "$0")/.." && pwd)
levels=${ARM_CHECK_LEVELS:-neon neondot scalar}
jobs=${ARM_CHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "arm-check: $1 not found: $2" >&2; exit 1; }
}
need $host-gcc "apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
need qemu-aarch64 "apt-get install qemu-user"
need pkg-config "apt-get install pkg-config"
pcdir=/usr/lib/$host/pkgconfig
[ -e /usr/lib/$host/libgomp.so.1 ] || {
  echo "arm-check: no arm64 OpenMP runtime: apt-get install libgomp1:arm64" >&2
  exit 1
}
for pc in hwloc check; do
  [ -f $pcdir/$pc.pc ] || {
    echo "arm-check: no arm64 $pc in $pcdir: dpkg --add-architecture arm64 && apt-get update &&" \
      "apt-get install libhwloc-dev:arm64 check:arm64" >&2
    exit 1
  }
done
name=arm-check
. "$srcdir/scripts/check-build-dir.sh"

# Static libqgemv so that the test is a plain AArch64 executable (no libtool
# wrapper script for the emulator to trip over); hwloc, check and libc come
# from the arm64 multiarch packages, found by the AArch64 loader at
# /lib/ld-linux-aarch64.so.1. Only the arm64 .pc files are searched.
PKG_CONFIG_LIBDIR=$pcdir:/usr/share/pkgconfig
export PKG_CONFIG_LIBDIR
"$src/configure" --host=$host --enable-static --disable-shared --without-cuda --enable-werror \
  >configure.log 2>&1 || { tail -30 configure.log; echo "arm-check: configure failed" >&2; exit 1; }
make -j"$jobs" libqgemv.la tests/test_cpu_levels tests/test_adversarial >build.log 2>&1 ||
  { tail -40 build.log; echo "arm-check: build failed" >&2; exit 1; }

# A real AArch64 binary: ELF e_machine (offset 18, little-endian) is 183.
machine=$(od -An -tu2 -j18 -N2 tests/test_cpu_levels | tr -d ' ')
[ "$machine" = 183 ] || { echo "arm-check: tests/test_cpu_levels is not an AArch64 executable" >&2; exit 1; }

for suite in test_cpu_levels test_adversarial; do
  echo "arm-check: running tests/$suite under qemu-aarch64 (levels: $levels)"
  env -u QGEMV_CPU_ISA -u QGEMV_NUM_THREADS QGEMV_TEST_LEVELS="$levels" QGEMV_TEST_REQUIRE="$levels" \
    qemu-aarch64 tests/$suite
done
echo "arm-check: passed"
