# Check suites of this area (included from tests/local.mk).
# The foundation's suites, one binary per concern: byte-exact formats and
# conversions, argument errors, the oracle and the CPU backend against it,
# batched / thread invariants, backend selection and module loading.
core_suites = \
	tests/test_formats \
	tests/test_api_errors \
	tests/test_oracle \
	tests/test_batched \
	tests/test_selection
check_PROGRAMS += $(core_suites)
TESTS += $(core_suites)

tests_test_formats_SOURCES = tests/test_formats.c
tests_test_formats_CFLAGS = $(TEST_CFLAGS)
tests_test_formats_LDADD = $(TEST_LDADD)

tests_test_api_errors_SOURCES = tests/test_api_errors.c
tests_test_api_errors_CFLAGS = $(TEST_CFLAGS)
tests_test_api_errors_LDADD = $(TEST_LDADD)

tests_test_oracle_SOURCES = tests/test_oracle.c
tests_test_oracle_CFLAGS = $(TEST_CFLAGS)
tests_test_oracle_LDADD = $(TEST_LDADD)

tests_test_batched_SOURCES = tests/test_batched.c
tests_test_batched_CFLAGS = $(TEST_CFLAGS)
tests_test_batched_LDADD = $(TEST_LDADD)

tests_test_selection_SOURCES = tests/test_selection.c
tests_test_selection_CFLAGS = $(TEST_CFLAGS)
tests_test_selection_LDADD = $(TEST_LDADD)
