# Check suites of this area (included from tests/local.mk).
# The qgemv command: shell scripts that run the built tool from the build
# tree (QGEMV_TOOL) and read data from $(srcdir); exit 77 = SKIP.
AM_TESTS_ENVIRONMENT += QGEMV_TOOL='$(abs_top_builddir)/tools/qgemv'; export QGEMV_TOOL;
tool_tests = \
	tests/test_tool_help.sh \
	tests/test_tool_options.sh \
	tests/test_tool_info.sh \
	tests/test_tool_verify.sh \
	tests/test_tool_bench.sh \
	tests/test_tool_graph.sh \
	tests/test_tool_plot.sh \
	tests/test_tool_ncu_insn.sh \
	tests/test_tool_timeline.sh
TESTS += $(tool_tests)
dist_check_SCRIPTS = $(tool_tests)
# Sourced by the scripts above; a bench record made by the tool for the
# plot test (see tests/data/README).
EXTRA_DIST += tests/test_tool_lib.sh tests/data/bench-cpu-small.json tests/data/README
