/* qgemv bench: plans the rows, measures them a layer and format at a time
 * (one weight uploaded for the group's dtypes and m's, then freed, so that
 * memory stays near one working set), and writes the table, JSON and CSV
 * as rows finish. The read bandwidth and the dense baselines are measured
 * in the same run, so every ratio compares figures taken under one load. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* ---- progress on stderr, once the run has taken more than a second ---- */

static struct {
  bool on, tty, shown;
  double start;
} progress;

static void progress_begin(bool quiet) {
  progress.on = !quiet;
  progress.tty = isatty(STDERR_FILENO);
  progress.start = seconds_now();
}

static void progress_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress_note(const char *fmt, ...) {
  if (!progress.on || seconds_now() - progress.start < 1.0) return;
  /* on a terminal, one line rewritten in place; in a log, a line each */
  fputs(progress.tty ? "\r\033[K" : "", stderr);
  fputs("qgemv bench: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs(progress.tty ? "" : "\n", stderr);
  fflush(stderr);
  progress.shown = true;
}

/* Clears an in-place progress line before stdout writes under it. */
static void progress_clear(void) {
  if (progress.tty && progress.shown) fputs("\r\033[K", stderr);
  progress.shown = false;
}

/* ---- the plan ---- */

/* Rows layer by layer, then format, dtype and m: the rows of a layer and
 * format follow each other, so that they share one uploaded weight. */
static int plan(bench_run *run) {
  const bench_opts *o = run->o;
  size_t count = (size_t)o->nlayers * (size_t)o->nms * (size_t)o->ndtypes * (size_t)o->nformats;
  run->rows = calloc(count, sizeof *run->rows);
  run->baselines = calloc((size_t)o->nlayers * (size_t)o->nms, sizeof *run->baselines);
  if (!run->rows || !run->baselines) return -1;
  for (int l = 0; l < o->nlayers; l++)
    for (int f = 0; f < (o->sources[l].own ? 1 : o->nformats); f++) /* a model's weight: its own format */
      for (int d = 0; d < o->ndtypes; d++)
        for (int mi = 0; mi < o->nms; mi++)
          run->rows[run->nrows++] = (bench_row){.layer = &o->layers[l],
                                                .format = o->sources[l].own ? o->sources[l].format : o->formats[f],
                                                .dtype = o->dtypes[d], .m = o->ms[mi], .same_as = -1, .baseline = -1};
  return 0;
}

static bool same_weight(const bench_row *a, const bench_row *b) {
  return a->layer->n == b->layer->n && a->layer->k == b->layer->k && a->format.format == b->format.format &&
         a->format.group == b->format.group;
}

/* An earlier row of the same shape, format, dtype and m (k and v, gate and
 * up): its measurement stands for this one. */
static int earlier_twin(const bench_run *run, int i) {
  const bench_row *r = &run->rows[i];
  for (int j = 0; j < i; j++) {
    const bench_row *p = &run->rows[j];
    if (p->same_as < 0 && same_weight(p, r) && p->m == r->m && p->dtype == r->dtype) return j;
  }
  return -1;
}

/* The dense baselines of rows begin .. end-1 (one shape): each row's
 * baseline of its m, those not yet measured measured together, as they
 * share the dense weight copies. */
static void group_baselines(bench_run *run, qgemv_ctx *ctx, int begin, int end) {
  const bench_layer *l = run->rows[begin].layer;
  int fresh = run->nbaselines;
  for (int i = begin; i < end; i++) {
    bench_row *r = &run->rows[i];
    int b = 0;
    while (b < run->nbaselines && !(run->baselines[b].n == l->n && run->baselines[b].k == l->k &&
                                    run->baselines[b].m == r->m))
      b++;
    if (b == run->nbaselines) run->baselines[run->nbaselines++] = (bench_baseline){.n = l->n, .k = l->k, .m = r->m};
    r->baseline = b;
  }
  int count = run->nbaselines - fresh; /* at most o->nms: one per m */
  if (count == 0) return;
  int64_t ms[BENCH_MAX_LIST];
  bench_measure outs[BENCH_MAX_LIST];
  for (int i = 0; i < count; i++) ms[i] = run->baselines[fresh + i].m;
  progress_note("dense baseline %lldx%lld ...", (long long)l->n, (long long)l->k);
  bench_dense(ctx, &run->info, run->o, run->working_set, l->n, l->k, ms, count, outs);
  for (int i = 0; i < count; i++) run->baselines[fresh + i].d = outs[i];
}

/* Writes row i wherever it goes, as soon as it is measured. */
static void emit_row(bench_run *run, int i, FILE *table, bench_record *rec) {
  run->done = i + 1;
  if (table) {
    progress_clear();
    bench_table_row(table, run, i);
    fflush(table);
  }
  bench_record_row(rec, run, i);
}

/* Rows begin .. end-1: one layer and format, so one weight, made and
 * uploaded (unless every row has an earlier twin) after the group's dense
 * baselines, so that only one working set is held at a time. */
static int measure_group(bench_run *run, qgemv_ctx *ctx, int begin, int end, FILE *table, bench_record *rec) {
  if (run->o->baseline) group_baselines(run, ctx, begin, end);
  bool needed = false;
  for (int i = begin; i < end; i++) {
    bench_row *r = &run->rows[i];
    r->same_as = earlier_twin(run, i);
    needed |= r->same_as < 0;
  }
  const bench_row *first = &run->rows[begin];
  bench_weight w = {0};
  if (needed) {
    progress_note("%s %lldx%lld %s: making and uploading the weight copies ...", first->layer->name,
                  (long long)first->layer->n, (long long)first->layer->k,
                  first->format.label);
    if (layer_source(run->o, first->layer)->tensor)
      bench_model_weight(ctx, run->o, run->working_set, first->layer, first->format, &w);
    else
      bench_weight_upload(ctx, run->working_set, bench_max_m(run->o), first->layer->n, first->layer->k, first->format, &w);
  }
  int failed = 0;
  for (int i = begin; i < end; i++) {
    bench_row *r = &run->rows[i];
    if (r->same_as >= 0) {
      r->q = run->rows[r->same_as].q;
    } else {
      progress_note("[%d/%d] %s %lldx%lld %s %s m=%lld ...", i + 1, run->nrows, r->layer->name,
                    (long long)r->layer->n, (long long)r->layer->k, r->format.label,
                    dtype_label(r->dtype), (long long)r->m);
      bench_quant(ctx, run->o, run->graph, &w, r->dtype, r->m, &r->q);
    }
    failed += !r->q.ok;
    emit_row(run, i, table, rec);
  }
  bench_weight_free(&w);
  return failed;
}

static int measure_all(bench_run *run, qgemv_ctx *ctx, FILE *table, bench_record *rec) {
  int failed = 0;
  for (int begin = 0, end; begin < run->nrows; begin = end) {
    end = begin + 1;
    while (end < run->nrows && run->rows[end].layer == run->rows[begin].layer &&
           same_weight(&run->rows[end], &run->rows[begin]))
      end++;
    failed += measure_group(run, ctx, begin, end, table, rec);
  }
  return failed;
}

/* ---- the command ---- */

static int run_bench(bench_run *run, bench_record *rec) {
  const bench_opts *o = run->o;
  bool json_out = o->json_path && strcmp(o->json_path, "-") == 0, csv_out = o->csv_path && strcmp(o->csv_path, "-") == 0;
  FILE *table = o->quiet || json_out || csv_out ? NULL : stdout;
  qgemv_ctx *ctx;
  qgemv_status s = qgemv_open(o->spec, &ctx);
  if (s != QGEMV_OK) return report_failure("bench: open", s), 1;
  qgemv_ctx_info(ctx, &run->info);
  if (o->graph) {
    char why[256];
    if (!(run->graph = bench_graph_open(ctx, why, sizeof why))) {
      fprintf(stderr, "qgemv bench: %s\n", why);
      qgemv_close(ctx);
      return 1;
    }
  }
  /* DESIGN.md section 9: rotate over at least 8x the last-level cache and
   * at least 1 GiB, the read probe's own rule, so that weights come from
   * memory as the probe's bytes do (a cache that keeps part of a cyclic
   * working set, as large L3s do, would otherwise favour the kernels). */
  uint64_t eight_llc = 8 * run->info.llc_bytes;
  run->working_set = o->working_set ? o->working_set : eight_llc > (1ull << 30) ? eight_llc : (1ull << 30);
  double load[1];
  run->load_avg = getloadavg(load, 1) == 1 ? load[0] : -1;
  utc_timestamp(run->started, sizeof run->started);
  progress_begin(o->quiet);
  int failed = 0;
  if ((s = qgemv_measure_read_bandwidth(ctx, 0, &run->read_gbs)) != QGEMV_OK) {
    report_failure("bench: read bandwidth", s);
    run->read_gbs = NAN;
    failed++;
  }
  if (plan(run) != 0) {
    fprintf(stderr, "qgemv bench: out of memory\n");
    bench_graph_close(run->graph);
    qgemv_close(ctx);
    return 1;
  }
  if (table) bench_table_header(table, run);
  bench_record_start(rec, run);
  failed += measure_all(run, ctx, table, rec);
  /* Shared machines (VMs, a busy host) change their read bandwidth within a
   * run; a second probe shows by how much the rows' ceiling moved. */
  if (isfinite(run->read_gbs) && qgemv_measure_read_bandwidth(ctx, 0, &run->read_gbs_end) != QGEMV_OK)
    run->read_gbs_end = NAN;
  progress_clear();
  if (table) bench_table_footer(table, run);
  bench_graph_close(run->graph);
  qgemv_close(ctx);
  return failed ? 1 : 0;
}

int cmd_bench(int argc, char **argv) {
  static bench_opts o; /* BENCH_MAX_LAYERS layers: kept off the stack */
  int rc = bench_parse(argc, argv, &o);
  if (rc < 0 && o.model_path) rc = bench_model_layers(&o);
  /* Open the outputs first: a bad path should fail before a long run. */
  bench_record rec;
  if (rc < 0 && bench_record_open(&rec, &o) != 0) rc = 1;
  if (rc >= 0) {
    bench_model_close(&o);
    return rc;
  }
  bench_run run = {.o = &o, .read_gbs_end = NAN};
  rc = run_bench(&run, &rec);
  if (bench_record_close(&rec, &run) != 0) rc = 1;
  free(run.rows);
  free(run.baselines);
  bench_model_close(&o);
  return rc;
}
