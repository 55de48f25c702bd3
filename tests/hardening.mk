# Check suites of this area (included from tests/local.mk).
# Hardening (issue 6): adversarial inputs, non-finite data, threads and
# resource cycles, memory exhaustion, refusal of bad modules.
hardening_suites = \
	tests/test_hardening_inputs \
	tests/test_hardening_nonfinite \
	tests/test_hardening_threads \
	tests/test_hardening_memory \
	tests/test_hardening_loader \
	tests/test_hardening_cuda
check_PROGRAMS += $(hardening_suites)
TESTS += $(hardening_suites)

# test_hardening_cuda fills the GPU's memory on purpose. Under `make -j
# check` on a GPU machine every test beside it that touches the GPU failed
# to allocate (seen on the H200), so its log waits for every other test's.
# (Named through a variable: a literal target would replace automake's own
# rule for that log instead of adding prerequisites to it.)
hardening_cuda_log = tests/test_hardening_cuda.log
$(hardening_cuda_log): $(filter-out $(hardening_cuda_log),$(TEST_LOGS))

tests_test_hardening_inputs_SOURCES = tests/test_hardening_inputs.c
tests_test_hardening_inputs_CFLAGS = $(TEST_CFLAGS)
tests_test_hardening_inputs_LDADD = $(TEST_LDADD)

tests_test_hardening_nonfinite_SOURCES = tests/test_hardening_nonfinite.c
tests_test_hardening_nonfinite_CFLAGS = $(TEST_CFLAGS)
tests_test_hardening_nonfinite_LDADD = $(TEST_LDADD)

tests_test_hardening_threads_SOURCES = tests/test_hardening_threads.c
tests_test_hardening_threads_CFLAGS = $(TEST_CFLAGS) -pthread
tests_test_hardening_threads_LDFLAGS = -pthread
tests_test_hardening_threads_LDADD = $(TEST_LDADD)

tests_test_hardening_memory_SOURCES = tests/test_hardening_memory.c
tests_test_hardening_memory_CFLAGS = $(TEST_CFLAGS)
tests_test_hardening_memory_LDADD = $(TEST_LDADD)

# Device memory exhaustion; SKIPs (77) without a usable CUDA backend.
tests_test_hardening_cuda_SOURCES = tests/test_hardening_cuda.c
tests_test_hardening_cuda_CFLAGS = $(TEST_CFLAGS)
tests_test_hardening_cuda_LDADD = $(TEST_LDADD)

# The loader: its refusals, against real shared objects named qgemv-cuda.so
# built from one source (tests/fakemod/fakemod.c) in five variants; and
# discovery and auto's choice, against fake device modules that load
# (tests/fakemod/fakedev.c), each in a directory of its own.
tests_test_hardening_loader_SOURCES = tests/test_hardening_loader.c
tests_test_hardening_loader_CPPFLAGS = $(AM_CPPFLAGS) -DHARD_BUILDDIR='"$(abs_top_builddir)"'
tests_test_hardening_loader_CFLAGS = $(TEST_CFLAGS)
tests_test_hardening_loader_LDADD = $(TEST_LDADD)

fakemod_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/src/core
# -rpath makes libtool build a shared object although nothing installs it.
fakemod_ldflags = -module -avoid-version -shared -rpath /nowhere
check_LTLIBRARIES += \
	tests/fakemod-abi/qgemv-cuda.la \
	tests/fakemod-vtable/qgemv-cuda.la \
	tests/fakemod-null/qgemv-cuda.la \
	tests/fakemod-notable/qgemv-cuda.la \
	tests/fakemod-noentry/qgemv-cuda.la
tests_fakemod_abi_qgemv_cuda_la_SOURCES = tests/fakemod/fakemod.c
tests_fakemod_abi_qgemv_cuda_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEMOD_ABI
tests_fakemod_abi_qgemv_cuda_la_LDFLAGS = $(fakemod_ldflags)
tests_fakemod_vtable_qgemv_cuda_la_SOURCES = tests/fakemod/fakemod.c
tests_fakemod_vtable_qgemv_cuda_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEMOD_VTABLE
tests_fakemod_vtable_qgemv_cuda_la_LDFLAGS = $(fakemod_ldflags)
tests_fakemod_null_qgemv_cuda_la_SOURCES = tests/fakemod/fakemod.c
tests_fakemod_null_qgemv_cuda_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEMOD_NULL
tests_fakemod_null_qgemv_cuda_la_LDFLAGS = $(fakemod_ldflags)
tests_fakemod_notable_qgemv_cuda_la_SOURCES = tests/fakemod/fakemod.c
tests_fakemod_notable_qgemv_cuda_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEMOD_NOTABLE
tests_fakemod_notable_qgemv_cuda_la_LDFLAGS = $(fakemod_ldflags)
tests_fakemod_noentry_qgemv_cuda_la_SOURCES = tests/fakemod/fakemod.c
tests_fakemod_noentry_qgemv_cuda_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEMOD_NOENTRY
tests_fakemod_noentry_qgemv_cuda_la_LDFLAGS = $(fakemod_ldflags)

# Device modules of auto priority 20 and 10, a second of priority 20 (ties),
# one of priority 0 (never chosen by auto), and one named cpu that aborts
# if it is ever loaded (it must be shadowed by the built-in backend).
check_LTLIBRARIES += \
	tests/fakedev-hi/qgemv-fakehi.la \
	tests/fakedev-lo/qgemv-fakelo.la \
	tests/fakedev-twin/qgemv-faketwin.la \
	tests/fakedev-manual/qgemv-fakemanual.la \
	tests/fakedev-trap/qgemv-cpu.la
tests_fakedev_hi_qgemv_fakehi_la_SOURCES = tests/fakemod/fakedev.c
tests_fakedev_hi_qgemv_fakehi_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEDEV_NAME='"fakehi"' -DFAKEDEV_PRIORITY=20
tests_fakedev_hi_qgemv_fakehi_la_LDFLAGS = $(fakemod_ldflags)
tests_fakedev_lo_qgemv_fakelo_la_SOURCES = tests/fakemod/fakedev.c
tests_fakedev_lo_qgemv_fakelo_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEDEV_NAME='"fakelo"' -DFAKEDEV_PRIORITY=10
tests_fakedev_lo_qgemv_fakelo_la_LDFLAGS = $(fakemod_ldflags)
tests_fakedev_twin_qgemv_faketwin_la_SOURCES = tests/fakemod/fakedev.c
tests_fakedev_twin_qgemv_faketwin_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEDEV_NAME='"faketwin"' -DFAKEDEV_PRIORITY=20
tests_fakedev_twin_qgemv_faketwin_la_LDFLAGS = $(fakemod_ldflags)
tests_fakedev_manual_qgemv_fakemanual_la_SOURCES = tests/fakemod/fakedev.c
tests_fakedev_manual_qgemv_fakemanual_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEDEV_NAME='"fakemanual"' \
	-DFAKEDEV_PRIORITY=0
tests_fakedev_manual_qgemv_fakemanual_la_LDFLAGS = $(fakemod_ldflags)
tests_fakedev_trap_qgemv_cpu_la_SOURCES = tests/fakemod/fakedev.c
tests_fakedev_trap_qgemv_cpu_la_CPPFLAGS = $(fakemod_cppflags) -DFAKEDEV_NAME='"cpu"' -DFAKEDEV_PRIORITY=1000 \
	-DFAKEDEV_ABORT_ON_LOAD
tests_fakedev_trap_qgemv_cpu_la_LDFLAGS = $(fakemod_ldflags)
