# The qgemv command.
bin_PROGRAMS += tools/qgemv
tools_qgemv_SOURCES = tools/qgemv.c tools/tool.h tools/common.c tools/cmd_info.c tools/cmd_verify.c tools/cmd_bench.c
tools_qgemv_LDADD = libqgemv.la -lm
