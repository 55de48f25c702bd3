# Check suites of this area (included from tests/local.mk).
# Model files (issue 11): the GGUF fixture written by ggml itself
# (tests/data/ggml-q2_0.gguf, found through QGEMV_TEST_DATA), corrupted
# files, safetensors and bitsandbytes NF4 files made in the tests, and
# matvec on loaded weights against the oracle on each backend (the CUDA
# one SKIPs, 77, without a usable GPU).
AM_TESTS_ENVIRONMENT += QGEMV_TEST_DATA='$(abs_top_srcdir)/tests/data'; export QGEMV_TEST_DATA;
model_suites = \
	tests/test_model_gguf \
	tests/test_model_corrupt \
	tests/test_model_safetensors \
	tests/test_model_bnb \
	tests/test_model_matvec_cpu \
	tests/test_model_matvec_cuda
check_PROGRAMS += $(model_suites)
TESTS += $(model_suites)
EXTRA_DIST += tests/data/ggml-q2_0.gguf

model_test_sources = tests/modelfile.c tests/modelfile.h

tests_test_model_gguf_SOURCES = tests/test_model_gguf.c $(model_test_sources)
tests_test_model_gguf_CFLAGS = $(TEST_CFLAGS)
tests_test_model_gguf_LDADD = $(TEST_LDADD)

tests_test_model_corrupt_SOURCES = tests/test_model_corrupt.c $(model_test_sources)
tests_test_model_corrupt_CFLAGS = $(TEST_CFLAGS)
tests_test_model_corrupt_LDADD = $(TEST_LDADD)

tests_test_model_safetensors_SOURCES = tests/test_model_safetensors.c $(model_test_sources)
tests_test_model_safetensors_CPPFLAGS = $(AM_CPPFLAGS)
tests_test_model_safetensors_CFLAGS = $(TEST_CFLAGS)
tests_test_model_safetensors_LDADD = $(TEST_LDADD)

tests_test_model_bnb_SOURCES = tests/test_model_bnb.c $(model_test_sources)
tests_test_model_bnb_CFLAGS = $(TEST_CFLAGS)
tests_test_model_bnb_LDADD = $(TEST_LDADD)

# One source, one binary per backend.
tests_test_model_matvec_cpu_SOURCES = tests/test_model_matvec.c $(model_test_sources)
tests_test_model_matvec_cpu_CPPFLAGS = $(AM_CPPFLAGS) -DMODEL_BACKEND='"cpu"'
tests_test_model_matvec_cpu_CFLAGS = $(TEST_CFLAGS)
tests_test_model_matvec_cpu_LDADD = $(TEST_LDADD)
tests_test_model_matvec_cuda_SOURCES = tests/test_model_matvec.c $(model_test_sources)
tests_test_model_matvec_cuda_CPPFLAGS = $(AM_CPPFLAGS) -DMODEL_BACKEND='"cuda"'
tests_test_model_matvec_cuda_CFLAGS = $(TEST_CFLAGS)
tests_test_model_matvec_cuda_LDADD = $(TEST_LDADD)

# The model-file commands of the tool (a shell test, like tests/tool.mk's).
TESTS += tests/test_tool_model.sh
EXTRA_DIST += tests/test_tool_model.sh
