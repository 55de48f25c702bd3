# The qgemv command: main, shared helpers, one file per subcommand part.
bin_PROGRAMS += tools/qgemv
tools_qgemv_SOURCES = \
	tools/qgemv.c tools/tool.h tools/common.c $(common_random_sources) \
	tools/opts.c tools/opts.h \
	tools/json.c tools/json.h \
	tools/targets.c tools/targets.h \
	tools/cmd_info.c tools/cmd_inspect.c \
	tools/cmd_verify.c tools/verify.h tools/verify_check.c tools/verify_model.c \
	tools/cmd_bench.c tools/bench.h tools/bench_opts.c tools/bench_time.c tools/bench_graph.c \
	tools/bench_quant.c tools/bench_dense.c tools/bench_rows.c tools/bench_model.c \
	tools/bench_table.c tools/bench_json.c tools/bench_csv.c tools/bench_record.c
# OpenBLAS (optional) is the CPU dense baseline of qgemv bench; without it
# QG_HAVE_OPENBLAS is undefined and the flags are empty.
# OpenMP: random weights are made and quantized by row chunks in parallel.
tools_qgemv_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS) $(OPENBLAS_CFLAGS)
tools_qgemv_LDFLAGS = $(OPENMP_CFLAGS)
tools_qgemv_LDADD = libqgemv.la -lm
if HAVE_OPENBLAS
tools_qgemv_LDADD += $(OPENBLAS_LIBS)
endif

dist_man1_MANS = doc/qgemv.1
# Draws a bench JSON record (tested by tests/test_tool_plot.sh).
dist_noinst_SCRIPTS += bench/plot.sh
