/* qgemv bench: the types shared by its parts (options, timing, the
 * quantized and dense measurements, and the table/JSON/CSV writers). */
#ifndef QGEMV_TOOL_BENCH_H
#define QGEMV_TOOL_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tool.h"

/* ---- options (bench_opts.c) ---- */

typedef struct bench_layer {
  const char *preset; /* "llama3-8b", or NULL for --shape */
  const char *name;   /* "q", "gate"; "-" for --shape */
  int64_t n, k;
} bench_layer;

#define BENCH_MAX_LAYERS 64
#define BENCH_MAX_LIST 8
/* --format when not given (names of the library's format list). */
#define BENCH_DEFAULT_FORMATS "nf4,q2_0"

typedef struct bench_opts {
  const char *spec; /* --backend; NULL: QGEMV_BACKEND, else auto */
  bench_layer layers[BENCH_MAX_LAYERS];
  int nlayers;
  qgemv_format_info formats[BENCH_MAX_LIST]; /* from the library's list */
  int nformats;
  qgemv_dtype dtypes[2];
  int ndtypes;
  int64_t ms[BENCH_MAX_LIST];
  int nms;
  bool rmsnorm;
  int64_t iters;        /* > 0: exactly this many timed samples */
  double min_time;      /* else: sample for at least this long */
  uint64_t working_set; /* bytes to rotate over; 0: max(4 x LLC, 1 GiB) */
  bool baseline;        /* measure the dense baseline */
  const char *json_path, *csv_path;
  bool quiet;
} bench_opts;

/* Parses argv; returns -1 to go on, else the exit status (0 after --help). */
int bench_parse(int argc, char **argv, bench_opts *o);

/* ---- timing (bench_time.c) ---- */

/* One timed operation: call(arg, copy) queues it on weight copy `copy`;
 * sync(arg) waits for everything queued. Both return 0 or -1. */
typedef struct bench_callee {
  int (*call)(void *arg, int copy);
  int (*sync)(void *arg);
  void *arg;
  int copies;
} bench_callee;

typedef struct bench_timing {
  double median, min, max; /* seconds per call */
  int samples;             /* timed batches */
  int64_t calls;           /* timed calls in all */
} bench_timing;

int bench_time(const bench_callee *c, int64_t iters, double min_time, bench_timing *out);

/* Copies of `bytes` each to rotate over so that a working set of `target`
 * bytes is exceeded (at least 2, at most BENCH_MAX_COPIES). */
#define BENCH_MAX_COPIES 16384
int bench_copies(uint64_t bytes, uint64_t target);

/* ---- one measured configuration ---- */

typedef struct bench_measure {
  bool ok;
  char error[256]; /* why not ok: a failure, or why a baseline is absent */
  char name[48];   /* what was measured: "NF4", "OpenBLAS sgemv f32" */
  bench_timing t;
  double bytes; /* that must move per call: weights + x (+ gamma) + y */
  int copies;
  uint64_t working_set; /* copies x weight bytes */
} bench_measure;

/* The quantized matvec (bench_quant.c). */
void bench_quant(qgemv_ctx *ctx, const bench_opts *o, uint64_t working_set, int64_t n, int64_t k,
                 qgemv_format_info f, qgemv_dtype dtype, int64_t m, bench_measure *out);
/* The dense baseline of the backend (bench_dense.c): cuBLAS bf16 through
 * the library, or OpenBLAS f32 on the CPU; !ok with the reason if absent. */
void bench_dense(qgemv_ctx *ctx, const qgemv_device_info *info, const bench_opts *o, uint64_t working_set,
                 int64_t n, int64_t k, int64_t m, bench_measure *out);

/* ---- the run and its rows ---- */

typedef struct bench_row {
  const bench_layer *layer;
  qgemv_format_info format;
  qgemv_dtype dtype;
  int64_t m;
  int same_as;         /* index of an earlier row measured identically; -1 */
  bench_measure q;     /* the quantized matvec */
  int baseline;        /* index into bench_run.baselines; -1 when not asked */
} bench_row;

typedef struct bench_baseline {
  int64_t n, k, m;
  bench_measure d;
} bench_baseline;

typedef struct bench_run {
  const bench_opts *o;
  qgemv_device_info info;
  double read_gbs;
  uint64_t working_set;
  double load_avg; /* 1-minute load when the run began; < 0 unknown */
  char started[32];
  bench_row *rows;
  int nrows;
  bench_baseline *baselines;
  int nbaselines;
} bench_run;

double row_gbs(const bench_row *r);
double row_pct_read(const bench_run *run, const bench_row *r);
const bench_measure *row_baseline(const bench_run *run, const bench_row *r); /* NULL: not asked */
double row_speedup(const bench_run *run, const bench_row *r);                /* NaN if unknown */
double measure_gbs(const bench_measure *m); /* NaN unless ok */

/* A preset's layers summed: the matvec time of one transformer block's
 * decode step, per format, dtype and m. */
typedef struct bench_step {
  const char *preset;
  qgemv_format_info format;
  qgemv_dtype dtype;
  int64_t m;
  int layers;
  bool complete, dense_complete; /* every layer (and baseline) measured */
  double seconds, dense_seconds, bytes;
} bench_step;
int bench_steps(const bench_run *run, bench_step *out, int max);

/* ---- output (bench_table.c, bench_json.c, bench_csv.c) ---- */

void bench_table_header(FILE *f, const bench_run *run);
void bench_table_row(FILE *f, const bench_run *run, int i);
void bench_table_footer(FILE *f, const bench_run *run);
void bench_write_json(FILE *f, const bench_run *run);
void bench_write_csv(FILE *f, const bench_run *run);

#endif
