# Check suites of this area (included from tests/local.mk).
# Every CPU ISA level against the oracle, batched and thread invariants per
# level, level selection errors.
check_PROGRAMS += tests/test_cpu_levels
tests_test_cpu_levels_SOURCES = tests/test_cpu_levels.c
tests_test_cpu_levels_CFLAGS = $(TEST_CFLAGS)
tests_test_cpu_levels_LDADD = $(TEST_LDADD)
TESTS += tests/test_cpu_levels

# The Arm proof: cross-build for AArch64 and run test_cpu_levels and
# test_adversarial under qemu-aarch64 with the levels it names (neon,
# neondot, scalar) required (packages listed in the script).
EXTRA_DIST += scripts/arm-check.sh scripts/check-build-dir.sh
arm-check:
	$(SHELL) $(top_srcdir)/scripts/arm-check.sh

# The AVX-512 and AMX proof on AVX2 machines: the library built with those
# intrinsics emulated (src/backend-cpu/x86_emu.h, SIMDe), then the whole
# suite with avx512, avx512vnni and avx512amx required.
EXTRA_DIST += scripts/x86-emu-check.sh
x86-emu-check:
	$(SHELL) $(top_srcdir)/scripts/x86-emu-check.sh

# Inputs crafted against integer activations, on every level.
check_PROGRAMS += tests/test_adversarial
tests_test_adversarial_SOURCES = tests/test_adversarial.c
tests_test_adversarial_CFLAGS = $(TEST_CFLAGS)
tests_test_adversarial_LDADD = $(TEST_LDADD)
TESTS += tests/test_adversarial

# The avx2 level's activation quantizer term against the portable one, on
# internals (both compiled into the test; x86-64 only, else it is empty).
check_PROGRAMS += tests/test_xfix_avx2
tests_test_xfix_avx2_SOURCES = tests/test_xfix_avx2.c src/backend-cpu/cpu_xfix.c src/backend-cpu/xfix_avx2.c
tests_test_xfix_avx2_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/backend-cpu
tests_test_xfix_avx2_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_xfix_avx2_LDADD = $(CHECK_LIBS) -lm
TESTS += tests/test_xfix_avx2

# x86_emu.h (scripts/x86-emu-check.sh's emulation of AVX-512 and AMX)
# against the real instructions; SKIP where the CPU lacks them.
check_PROGRAMS += tests/test_x86_emu
tests_test_x86_emu_SOURCES = tests/test_x86_emu.c
tests_test_x86_emu_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/backend-cpu
TESTS += tests/test_x86_emu
