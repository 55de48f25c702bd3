# Check suites, one binary per concern. Tests find the uninstalled CUDA
# module through QGEMV_PLUGIN_PATH.
AM_TESTS_ENVIRONMENT = \
	QGEMV_PLUGIN_PATH='$(abs_top_builddir)/src/backend-cuda/.libs'; export QGEMV_PLUGIN_PATH; \
	unset QGEMV_BACKEND QGEMV_DEVICE QGEMV_CPU_ISA QGEMV_NUM_THREADS;
