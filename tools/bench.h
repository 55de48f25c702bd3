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
  const char *preset; /* "llama3-8b", a model's block ("blk.0"), or NULL */
  const char *name;   /* "q", "gate"; "-" for --shape; a model's tensor */
  int64_t n, k;
} bench_layer;

/* Where a layer's weight comes from with --model (else random data). */
typedef struct bench_source {
  const char *tensor; /* the tensor in the file; NULL: random */
  bool own;           /* a weight timed in its own format, not --format */
  qgemv_format_info format;
} bench_source;

#define BENCH_MAX_LAYERS 1024
#define BENCH_MAX_STEPS 1024
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
  bool graph; /* --graph: each sample's calls replayed from a CUDA graph */
  bench_source sources[BENCH_MAX_LAYERS]; /* parallel to layers */
  const char *model_path; /* --model FILE */
  bool formats_given;     /* --format named (a model's float matrices then run) */
  qgemv_model *model;     /* open while the run lasts */
} bench_opts;

/* Parses argv; returns -1 to go on, else the exit status (0 after --help). */
int bench_parse(int argc, char **argv, bench_opts *o);

/* ---- timing (bench_time.c) ---- */

typedef struct bench_graph bench_graph;

/* One timed operation: call(arg, copy) queues it on weight copy `copy`;
 * sync(arg) waits for everything queued. Both return 0 or -1. With a
 * graph, a sample's calls are captured once and the sample replays them. */
typedef struct bench_callee {
  int (*call)(void *arg, int copy);
  int (*sync)(void *arg);
  void *arg;
  int copies;
  bench_graph *graph; /* NULL: the calls are queued on the stream each time */
} bench_callee;

typedef struct bench_timing {
  double median, min, max; /* seconds per call */
  int samples;             /* timed batches */
  int64_t calls;           /* timed calls in all */
} bench_timing;

/* 0; -1 when a call or the host's memory failed; -2 when the CUDA graph
 * (capture, instantiation or a replay) did. */
int bench_time(const bench_callee *c, int64_t iters, double min_time, bench_timing *out);

/* ---- CUDA graphs (bench_graph.c) ---- */

/* Makes a stream of the tool's own the context's stream, to capture on;
 * NULL with the reason in err when the context is not CUDA's or the
 * driver has no graph calls. */
bench_graph *bench_graph_open(qgemv_ctx *ctx, char *err, size_t errsize);
/* Gives the context its own stream back and frees everything. */
void bench_graph_close(bench_graph *g);
/* Captures `count` calls of c on consecutive copies from *next into the
 * graph that bench_graph_replay then runs (replacing the one before):
 * 0, or -1. */
int bench_graph_capture(bench_graph *g, const bench_callee *c, int count, int *next);
/* Runs the captured calls and waits for them: seconds, or < 0. */
double bench_graph_replay(bench_graph *g);
/* Frees the captured graph. */
void bench_graph_drop(bench_graph *g);

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

/* The quantized matvec (bench_quant.c). A layer's weight is made and
 * uploaded once, as the copies the timing rotates over, and then measured
 * for each dtype and m. */
typedef struct bench_weight {
  int64_t n, k;
  qgemv_format_info format;
  const char *form; /* the resident form the backend chose (qgemv_weight_form) */
  qgemv_weight **ws; /* the copies; NULL when making or uploading failed */
  int copies;
  size_t resident; /* bytes one copy occupies on the device */
  char error[256]; /* why ws is NULL */
} bench_weight;
/* Uploaded for the largest m measured (qgemv_weight_upload_for_m), as an
 * engine would: --m 1 alone measures the backend's m = 1 form. */
int bench_weight_upload(qgemv_ctx *ctx, uint64_t working_set, int64_t max_m, int64_t n, int64_t k, qgemv_format_info f,
                        bench_weight *out); /* 0, or -1 with out->error */
/* The same for a given host weight. */
int bench_weight_upload_desc(qgemv_ctx *ctx, uint64_t working_set, int64_t max_m, const qgemv_weight_desc *d,
                             bench_weight *out);
static inline int64_t bench_max_m(const bench_opts *o) {
  int64_t m = 0;
  for (int i = 0; i < o->nms; i++)
    if (o->ms[i] > m) m = o->ms[i];
  return m;
}
void bench_weight_free(bench_weight *w);

/* --model (bench_model.c): opens the file and appends a layer for every
 * 2-D weight qgemv runs as stored, and, when --format was named, every
 * 2-D float matrix those formats can take; returns -1 to go on, else the
 * exit status. bench_model_weight uploads such a layer's weight (as
 * stored, or quantized to f) like bench_weight_upload. */
int bench_model_layers(bench_opts *o);
static inline const bench_source *layer_source(const bench_opts *o, const bench_layer *l) {
  return &o->sources[l - o->layers];
}
int bench_model_weight(qgemv_ctx *ctx, const bench_opts *o, uint64_t working_set, const bench_layer *l,
                       qgemv_format_info f, bench_weight *out);
void bench_model_close(bench_opts *o);
/* !out->ok with the weight's error when it has no copies */
void bench_quant(qgemv_ctx *ctx, const bench_opts *o, bench_graph *graph, const bench_weight *w, qgemv_dtype dtype,
                 int64_t m, bench_measure *out);
/* The dense baseline of the backend (bench_dense.c): cuBLAS bf16 through
 * the library, or OpenBLAS f32 on the CPU; !ok with the reason if absent.
 * One shape for nms values of m (outs[i] for ms[i]), which share the
 * weight copies. */
void bench_dense(qgemv_ctx *ctx, const qgemv_device_info *info, const bench_opts *o, uint64_t working_set,
                 int64_t n, int64_t k, const int64_t *ms, int nms, bench_measure *outs);

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
  double read_gbs;     /* the probe before the rows: their %read is of it */
  double read_gbs_end; /* the probe again after the rows; NaN until then */
  uint64_t working_set;
  double load_avg; /* 1-minute load when the run began; < 0 unknown */
  char started[32];
  bench_row *rows;
  int nrows;
  int done; /* rows measured so far: rows[0 .. done-1] */
  bench_baseline *baselines;
  int nbaselines;
  bench_graph *graph; /* with --graph */
} bench_run;

double row_gbs(const bench_row *r);
double row_pct_read(const bench_run *run, const bench_row *r);
const bench_measure *row_baseline(const bench_run *run, const bench_row *r); /* NULL: not asked */
double row_speedup(const bench_run *run, const bench_row *r);                /* NaN if unknown */
double measure_gbs(const bench_measure *m); /* NaN unless ok */

/* A preset's layers summed: the matvec time of one transformer block's
 * decode step, per format, dtype and m; not complete while a layer is
 * still to be measured. */
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
/* The record of the rows measured so far, "finished" once all are. */
void bench_write_json(FILE *f, const bench_run *run);
void bench_csv_header(FILE *f);
void bench_csv_row(FILE *f, const bench_run *run, int i);

/* ---- the --json and --csv files, kept up to date as rows finish
 * (bench_record.c), so that an interrupted run leaves valid files with
 * the rows it measured ---- */

typedef struct bench_record {
  const char *json_path, *csv_path;
  bool replace;     /* JSON to a regular file: rewritten whole after each row, then renamed over it */
  unsigned mode;    /* the rewritten file's permissions: 0666 less the umask */
  bool save_failed; /* a rewrite failed (reported once) */
  FILE *json;       /* JSON to standard output or a special file: written once, at the end */
  FILE *csv;        /* a line per row as it finishes */
} bench_record;

/* Before the run, so that a bad path fails at once: 0, or -1 after a message. */
int bench_record_open(bench_record *rec, const bench_opts *o);
/* The JSON record before the first row, and after row i. */
void bench_record_start(bench_record *rec, const bench_run *run);
void bench_record_row(bench_record *rec, const bench_run *run, int i);
/* The final JSON (none if run->rows is NULL: nothing was measured); 0, or
 * -1 after a message. */
int bench_record_close(bench_record *rec, const bench_run *run);

#endif
