# The built-in CPU backend, part of libqgemv (src/core/local.mk).
# Each x86 level file carries __attribute__((target)) on its functions and
# compiles to its name only off x86-64; level_neon.c likewise off AArch64;
# so the list is the same for every architecture and needs no configure
# check.
libqgemv_la_SOURCES += \
	src/backend-cpu/cpu.h \
	src/backend-cpu/cpu_backend.c \
	src/backend-cpu/cpu_detect.c \
	src/backend-cpu/cpu_interleave.c src/backend-cpu/cpu_interleave.h \
	src/backend-cpu/cpu_normalize.c \
	src/backend-cpu/cpu_threads.c src/backend-cpu/cpu_threads.h \
	src/backend-cpu/cpu_xfix.c src/backend-cpu/cpu_xfix.h \
	src/backend-cpu/kernel_tmpl.h \
	src/backend-cpu/levels.c \
	src/backend-cpu/level_ref.c \
	src/backend-cpu/level_scalar.c \
	src/backend-cpu/level_avx2.c \
	src/backend-cpu/level_avx512.c \
	src/backend-cpu/level_neon.c \
	src/backend-cpu/nf4_avx2.c \
	src/backend-cpu/nf4_avx512.c \
	src/backend-cpu/prefetch.h \
	src/backend-cpu/q2_avx2.c \
	src/backend-cpu/q2_sdot.c \
	src/backend-cpu/q2_vnni.c src/backend-cpu/q2_vnni_sums.h \
	src/backend-cpu/q2_amx.c \
	src/backend-cpu/xfix_avx2.c \
	src/backend-cpu/rows16.h \
	src/backend-cpu/x86_intrin.h src/backend-cpu/x86_emu.h
