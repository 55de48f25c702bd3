/* The qgemv command: shared helpers of its subcommands. */
#ifndef QGEMV_TOOL_H
#define QGEMV_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/random.h"
#include "qgemv.h"

int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_inspect(int argc, char **argv);

/* A quantized host weight made from random data. */
typedef struct host_weight {
  qgemv_weight_desc desc;
  void *data;
  float *scales;
  size_t bytes; /* data + scales */
} host_weight;
int host_weight_make(rng *r, dist_kind d, qgemv_format f, int32_t group, int64_t n, int64_t k, host_weight *out);
void host_weight_free(host_weight *w);

/* Host activations of a dtype from f32 values. */
void *to_dtype(const float *src, size_t count, qgemv_dtype t);

/* "a, b, c" for help texts: the names (or labels) of the library's formats
 * ("nf4, ...", "NF4, ..."), the names of its CPU levels ("ref, ..."). */
const char *format_names(char *buf, size_t size, bool labels);
const char *cpu_level_names(char *buf, size_t size);
/* The library's list entry of a (format, group) pair (NF4 group 0 is 64);
 * false when it lists none. format_label: its label ("Q2_0/g64"), or "?". */
bool format_info_of(qgemv_format format, int32_t group, qgemv_format_info *out);
const char *format_label(qgemv_format format, int32_t group);
const char *dtype_label(qgemv_dtype t);
double seconds_now(void);
/* Prints "qgemv: <what>: <status>: <last error>" to stderr. */
void report_failure(const char *what, qgemv_status s);

/* Output files of --json/--csv: "-" is stdout. out_open prints why it
 * cannot open; out_close reports a failed write and returns -1. */
FILE *out_open(const char *cmd, const char *path);
int out_close(const char *cmd, FILE *f, const char *path);

/* The environment variables that change what the library does. */
extern const char *const tool_env_vars[];
extern const int tool_env_var_count;

/* The whole command line as typed (for JSON records); set by main. */
extern const char *tool_command;
/* prog and argv[1..] joined as a shell command line (quoted where
 * needed); malloc'ed. */
char *command_line(const char *prog, int argc, char **argv);
/* The current UTC time as ISO 8601 ("2025-01-31T12:00:00Z"). */
void utc_timestamp(char *buf, size_t size);

#endif
