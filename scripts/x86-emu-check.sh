#!/bin/sh
# The AVX-512 and AMX levels proved on a machine without them: build the CPU
# library with -DQG_X86_EMU (src/backend-cpu/x86_emu.h: those intrinsics
# emulated on AVX2, mostly by SIMDe; the AMX tiles in C), check that the
# library holds no AVX-512 or AMX instruction, then run the whole suite
# with the emulated levels required, so that it cannot pass by skipping
# them: test_cpu_levels and test_adversarial on avx512, avx512vnni and
# avx512amx (against the oracle, and avx512amx against avx512vnni bit for
# bit), every other suite on the default level, avx512amx here.
#
# It proves the levels' arithmetic and layouts, not their speed or GCC's
# encodings of the real instructions: the GPU machine's host (AVX-512 and
# AMX) runs the same suites natively.
#
# Needs (Debian 12, as root): apt-get install libsimde-dev, the packages of
# the ordinary build, an x86-64 CPU with AVX2, FMA and F16C, and a
# generated ./configure (./autogen.sh). Also: make x86-emu-check.
#
# Usage: scripts/x86-emu-check.sh [BUILD_DIR]   (default: a fresh temp dir)
# Environment: X86_EMU_CHECK_JOBS; X86_EMU_CHECK_SANITIZERS=1 builds with
# ASan and UBSan (--enable-sanitizers, -O1, without -Werror as CI's
# sanitizer build), so that the AVX-512 and AMX kernels' memory accesses
# are checked too, which no native run does; several times slower.
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
levels="avx512 avx512vnni avx512amx"
jobs=${X86_EMU_CHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}

[ "$(uname -m)" = x86_64 ] || { echo "x86-emu-check: needs an x86-64 machine" >&2; exit 1; }
for flag in avx2 fma f16c; do
  grep -qw $flag /proc/cpuinfo ||
    { echo "x86-emu-check: this CPU lacks $flag, which the emulation runs on" >&2; exit 1; }
done
[ -f /usr/include/simde/x86/avx512.h ] ||
  { echo "x86-emu-check: SIMDe missing: apt-get install libsimde-dev" >&2; exit 1; }
name=x86-emu-check
. "$srcdir/scripts/check-build-dir.sh"

# -mavx2 -mfma -mf16c: SIMDe then builds each 512-bit operation from two
# native 256-bit ones. -Wno-psabi: GCC notes that 512-bit vector values
# passed without AVX-512 use another ABI, which is so within this build.
if [ "${X86_EMU_CHECK_SANITIZERS:-0}" = 1 ]; then
  mode="--enable-sanitizers" opt=-O1
else
  mode="--enable-werror" opt=-O2
fi
"$src/configure" --without-cuda $mode CPPFLAGS="-DQG_X86_EMU" \
  CFLAGS="$opt -g -mavx2 -mfma -mf16c -Wno-psabi" >configure.log 2>&1 ||
  { tail -30 configure.log; echo "x86-emu-check: configure failed" >&2; exit 1; }
make -j"$jobs" >build.log 2>&1 || { tail -40 build.log; echo "x86-emu-check: build failed" >&2; exit 1; }

# Emulated means no instruction of the emulated sets in the library: no zmm
# or opmask register, no EVEX broadcast, no tile instruction.
lib=.libs/libqgemv.so
[ -f $lib ] || { echo "x86-emu-check: $lib not built" >&2; exit 1; }
native=$(objdump -d --no-show-raw-insn $lib | awk -F'\t' 'NF >= 2 { print $2 }' |
  grep -cE '%zmm|%k[0-7]|\{1to[0-9]+\}|^(tile|tdp|ldtilecfg|sttilecfg)' || true)
[ "$native" = 0 ] ||
  { echo "x86-emu-check: $lib holds $native AVX-512 or AMX instructions; QG_X86_EMU did not take" >&2; exit 1; }

echo "x86-emu-check: make check with $levels emulated and required"
env -u QGEMV_CPU_ISA -u QGEMV_TEST_LEVELS QGEMV_TEST_REQUIRE="$levels" make -j"$jobs" check >check.log 2>&1 || {
  cat test-suite.log 2>/dev/null | tail -60
  echo "x86-emu-check: make check failed" >&2
  exit 1
}
grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' check.log
for suite in test_cpu_levels test_adversarial; do
  echo "x86-emu-check: tests/$suite on $levels alone"
  env -u QGEMV_CPU_ISA -u QGEMV_NUM_THREADS QGEMV_TEST_LEVELS="$levels" QGEMV_TEST_REQUIRE="$levels" tests/$suite
done
echo "x86-emu-check: passed"
