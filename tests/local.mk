# Check suites, one binary per concern. Tests find the uninstalled device
# modules through QGEMV_PLUGIN_PATH (each module's local.mk adds its build
# directory to module_build_dirs) and start from a clean environment.
qg_empty =
qg_space = $(qg_empty) $(qg_empty)
module_build_path = $(subst $(qg_space),:,$(strip $(module_build_dirs)))
AM_TESTS_ENVIRONMENT = \
	QGEMV_PLUGIN_PATH='$(module_build_path)'; export QGEMV_PLUGIN_PATH; \
	unset QGEMV_BACKEND QGEMV_DEVICE QGEMV_CPU_ISA QGEMV_NUM_THREADS;

if HAVE_CHECK
# Shared by every suite.
check_LTLIBRARIES = tests/libtestutil.la
tests_libtestutil_la_SOURCES = tests/testutil.c tests/testutil.h tests/expect.h $(common_random_sources)
tests_libtestutil_la_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
TEST_LDADD = tests/libtestutil.la libqgemv.la $(CHECK_LIBS) -lm
TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(OPENMP_CFLAGS)

# The longest suite first, so that make -j runs the others beside it
# rather than after it (check-valgrind: about 6 of its minutes).
if HAVE_CUDA
TESTS += tests/test_cuda_layout
endif
include tests/core.mk
include tests/cpu.mk
include tests/cuda.mk
include tests/hardening.mk
include tests/model.mk
else
TESTS += tests/no-check.sh
endif
dist_noinst_SCRIPTS += tests/no-check.sh
# The tool's tests are shell scripts: they need no Check.
include tests/tool.mk
# Shell tests run under the shell, also when check-valgrind wraps the
# compiled suites in valgrind (which would report the shell's own leaks).
TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)

# Every suite under valgrind (no fork, so valgrind follows the tests):
# invalid accesses and definite leaks fail.
VALGRIND_LOG_COMPILER = $(LIBTOOL) --mode=execute valgrind -q --error-exitcode=1 \
	--leak-check=full --errors-for-leak-kinds=definite
check-valgrind:
	$(MAKE) $(AM_MAKEFLAGS) check CK_FORK=no QGEMV_TEST_QUICK=1 LOG_COMPILER='$(VALGRIND_LOG_COMPILER)'
.PHONY: check-valgrind

# After `make install`: a program outside the tree builds with pkg-config.
EXTRA_DIST += examples/minimal.c examples/model_gguf.c
installcheck-local:
	PKG_CONFIG_PATH='$(DESTDIR)$(libdir)/pkgconfig'; export PKG_CONFIG_PATH; \
	$(CC) -std=c11 -o installcheck-minimal $(srcdir)/examples/minimal.c \
	  `$(PKG_CONFIG) --cflags --libs qgemv` -lm -Wl,-rpath,'$(DESTDIR)$(libdir)' && \
	./installcheck-minimal && rm -f installcheck-minimal && \
	$(CC) -std=c11 -o installcheck-model $(srcdir)/examples/model_gguf.c \
	  `$(PKG_CONFIG) --cflags --libs qgemv` -lm -Wl,-rpath,'$(DESTDIR)$(libdir)' && \
	./installcheck-model $(srcdir)/tests/data/ggml-q2_0.gguf && rm -f installcheck-model
