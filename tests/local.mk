# Check suites, one binary per concern. Tests find the uninstalled CUDA
# module through QGEMV_PLUGIN_PATH and start from a clean environment.
AM_TESTS_ENVIRONMENT = \
	QGEMV_PLUGIN_PATH='$(abs_top_builddir)/src/backend-cuda/.libs'; export QGEMV_PLUGIN_PATH; \
	unset QGEMV_BACKEND QGEMV_DEVICE QGEMV_CPU_ISA QGEMV_NUM_THREADS;

if HAVE_CHECK
# Shared by every suite.
check_LTLIBRARIES = tests/libtestutil.la
tests_libtestutil_la_SOURCES = tests/testutil.c tests/testutil.h
tests_libtestutil_la_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
TEST_LDADD = tests/libtestutil.la libqgemv.la $(CHECK_LIBS) -lm
TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(OPENMP_CFLAGS)

include tests/core.mk
include tests/cpu.mk
include tests/cuda.mk
include tests/tool.mk
else
TESTS += tests/no-check.sh
endif
dist_noinst_SCRIPTS += tests/no-check.sh
