# SIMD levels of the CPU backend (added to libqgemv_la_SOURCES).
# Each x86 level file carries __attribute__((target)) on its functions and
# compiles to nothing off x86-64; level_neon.c likewise off AArch64; so the
# list is the same for every architecture and needs no configure check.
libqgemv_la_SOURCES += \
	src/backend-cpu/cpu_detect.c \
	src/backend-cpu/cpu_normalize.c \
	src/backend-cpu/cpu_threads.c src/backend-cpu/cpu_threads.h \
	src/backend-cpu/kernel_tmpl.h \
	src/backend-cpu/level_avx2.c \
	src/backend-cpu/level_avx512.c \
	src/backend-cpu/level_neon.c
