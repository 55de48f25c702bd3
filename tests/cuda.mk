# Check suites of this area (included from tests/local.mk).
# The CUDA backend (issue 3): every operation on the GPU against the oracle
# (exits 77, SKIP, where no GPU is usable), the kernels' data paths emulated
# on the CPU (runs wherever the module is built, GPU or not), and the
# architectures in the module's fat binaries (read by tests/fatbin_list,
# itself tested on a section written by hand).
check_PROGRAMS += tests/test_cuda_backend tests/fatbin_list
TESTS += tests/test_cuda_backend tests/test_fatbin_list.sh tests/test_cuda_fatbin.sh
dist_noinst_SCRIPTS += tests/test_fatbin_list.sh tests/test_cuda_fatbin.sh
tests_test_cuda_backend_SOURCES = tests/test_cuda_backend.c src/backend-cuda/share_repack.c
tests_test_cuda_backend_CFLAGS = $(TEST_CFLAGS)
tests_test_cuda_backend_LDADD = $(TEST_LDADD)
tests_fatbin_list_SOURCES = tests/fatbin_list.c
# The plan's tuning override (QGEMV_CUDA_PLAN): plain C, tested everywhere.
check_PROGRAMS += tests/test_cuda_plan_tune
TESTS += tests/test_cuda_plan_tune
tests_test_cuda_plan_tune_SOURCES = tests/test_cuda_plan_tune.c src/backend-cuda/plan_tune.c
tests_test_cuda_plan_tune_CFLAGS = $(TEST_CFLAGS)
tests_test_cuda_plan_tune_LDADD = $(CHECK_LIBS)
# The lookup-table layout (lut_repack.c, plain C): the repack, the
# kernel's arithmetic emulated on the CPU against the oracle, the geometry;
# tested everywhere, GPU or not.
check_PROGRAMS += tests/test_cuda_lut_layout
TESTS += tests/test_cuda_lut_layout
tests_test_cuda_lut_layout_SOURCES = tests/test_cuda_lut_layout.c src/backend-cuda/lut_repack.c
tests_test_cuda_lut_layout_CFLAGS = $(TEST_CFLAGS)
tests_test_cuda_lut_layout_LDADD = $(TEST_LDADD)
# The share layout (share_repack.c, plain C): the repack, the kernel's
# arithmetic emulated on the CPU against the oracle, the geometry; tested
# everywhere, GPU or not.
check_PROGRAMS += tests/test_cuda_share_layout
TESTS += tests/test_cuda_share_layout
tests_test_cuda_share_layout_SOURCES = tests/test_cuda_share_layout.c src/backend-cuda/share_repack.c src/backend-cuda/lut_repack.c
tests_test_cuda_share_layout_CFLAGS = $(TEST_CFLAGS)
tests_test_cuda_share_layout_LDADD = $(TEST_LDADD)

if HAVE_CUDA
check_PROGRAMS += tests/test_cuda_layout
# (in TESTS first: tests/local.mk)
tests_test_cuda_layout_SOURCES = tests/test_cuda_layout.cu tests/test_cuda_layout_repack.c tests/test_cuda_layout_tune.c
tests_test_cuda_layout_LDADD = $(TEST_LDADD) $(CUDA_LIBDIR)/libcudart_static.a -ldl -lrt -lpthread -lstdc++
QGC_NVCC_EXTRA = -I$(top_srcdir)/tests $(CHECK_CFLAGS)
# nvcc's header list for the .cu object (see src/backend-cuda/local.mk)
DISTCLEANFILES += tests/$(DEPDIR)/test_cuda_layout.Po
if AMDEP
-include tests/$(DEPDIR)/test_cuda_layout.Po
endif
endif
