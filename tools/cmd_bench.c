/* qgemv bench: plans the rows, measures them one at a time (weights freed
 * after each, so memory stays near one working set), and writes the table,
 * JSON and CSV. The read bandwidth and the dense baselines are measured in
 * the same run, so every ratio compares figures taken under one load. */
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

/* Rows layer by layer (then m, dtype, format), so that a layer's formats
 * share one baseline measured just before them. */
static int plan(bench_run *run) {
  const bench_opts *o = run->o;
  size_t count = (size_t)o->nlayers * (size_t)o->nms * (size_t)o->ndtypes * (size_t)o->nformats;
  run->rows = calloc(count, sizeof *run->rows);
  run->baselines = calloc((size_t)o->nlayers * (size_t)o->nms, sizeof *run->baselines);
  if (!run->rows || !run->baselines) return -1;
  for (int l = 0; l < o->nlayers; l++)
    for (int mi = 0; mi < o->nms; mi++)
      for (int d = 0; d < o->ndtypes; d++)
        for (int f = 0; f < o->nformats; f++)
          run->rows[run->nrows++] = (bench_row){.layer = &o->layers[l], .format = o->formats[f],
                                                .dtype = o->dtypes[d], .m = o->ms[mi], .same_as = -1, .baseline = -1};
  return 0;
}

/* An earlier row of the same shape, format, dtype and m (k and v, gate and
 * up): its measurement stands for this one. */
static int earlier_twin(const bench_run *run, int i) {
  const bench_row *r = &run->rows[i];
  for (int j = 0; j < i; j++) {
    const bench_row *p = &run->rows[j];
    if (p->same_as < 0 && p->layer->n == r->layer->n && p->layer->k == r->layer->k && p->m == r->m &&
        p->dtype == r->dtype && p->format.format == r->format.format && p->format.group == r->format.group)
      return j;
  }
  return -1;
}

/* The baseline of a row's shape and m, measured on first use. */
static int baseline_for(bench_run *run, qgemv_ctx *ctx, const bench_row *r) {
  int b = 0;
  while (b < run->nbaselines && !(run->baselines[b].n == r->layer->n && run->baselines[b].k == r->layer->k &&
                                  run->baselines[b].m == r->m))
    b++;
  if (b == run->nbaselines) {
    bench_baseline *nb = &run->baselines[run->nbaselines++];
    *nb = (bench_baseline){.n = r->layer->n, .k = r->layer->k, .m = r->m};
    progress_note("dense baseline %lldx%lld m=%lld ...", (long long)nb->n, (long long)nb->k, (long long)nb->m);
    bench_dense(ctx, &run->info, run->o, run->working_set, nb->n, nb->k, nb->m, &nb->d);
  }
  return b;
}

static int measure_all(bench_run *run, qgemv_ctx *ctx, FILE *table) {
  int failed = 0;
  for (int i = 0; i < run->nrows; i++) {
    bench_row *r = &run->rows[i];
    if (run->o->baseline) r->baseline = baseline_for(run, ctx, r);
    int twin = earlier_twin(run, i);
    if (twin >= 0) {
      r->q = run->rows[twin].q;
      r->same_as = twin;
    } else {
      progress_note("[%d/%d] %s %lldx%lld %s %s m=%lld ...", i + 1, run->nrows, r->layer->name,
                    (long long)r->layer->n, (long long)r->layer->k, r->format.label,
                    dtype_label(r->dtype), (long long)r->m);
      bench_quant(ctx, run->o, run->working_set, r->layer->n, r->layer->k, r->format, r->dtype, r->m, &r->q);
    }
    failed += !r->q.ok;
    if (table) {
      progress_clear();
      bench_table_row(table, run, i);
      fflush(table);
    }
  }
  return failed;
}

/* ---- the command ---- */

static int write_record(const char *path, FILE *f, const bench_run *run, void (*writer)(FILE *, const bench_run *)) {
  if (!f) return 0;
  writer(f, run);
  return out_close("bench", f, path);
}

static int run_bench(bench_run *run, FILE *json, FILE *csv) {
  const bench_opts *o = run->o;
  FILE *table = o->quiet || json == stdout || csv == stdout ? NULL : stdout;
  qgemv_ctx *ctx;
  qgemv_status s = qgemv_open(o->spec, &ctx);
  if (s != QGEMV_OK) return report_failure("bench: open", s), 1;
  qgemv_ctx_info(ctx, &run->info);
  /* DESIGN.md section 9: rotate over at least 4x the last-level cache and
   * at least 1 GiB, so that weights come from memory. */
  uint64_t four_llc = 4 * run->info.llc_bytes;
  run->working_set = o->working_set ? o->working_set : four_llc > (1ull << 30) ? four_llc : (1ull << 30);
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
    qgemv_close(ctx);
    return 1;
  }
  if (table) bench_table_header(table, run);
  failed += measure_all(run, ctx, table);
  progress_clear();
  if (table) bench_table_footer(table, run);
  qgemv_close(ctx);
  return failed ? 1 : 0;
}

int cmd_bench(int argc, char **argv) {
  bench_opts o;
  int rc = bench_parse(argc, argv, &o);
  if (rc >= 0) return rc;
  /* Open the outputs first: a bad path should fail before a long run. */
  FILE *json = o.json_path ? out_open("bench", o.json_path) : NULL;
  FILE *csv = o.csv_path ? out_open("bench", o.csv_path) : NULL;
  if ((o.json_path && !json) || (o.csv_path && !csv)) {
    if (json && json != stdout) fclose(json);
    if (csv && csv != stdout) fclose(csv);
    return 1;
  }
  bench_run run = {.o = &o};
  rc = run_bench(&run, json, csv);
  if (run.rows) {
    if (write_record(o.json_path, json, &run, bench_write_json) != 0) rc = 1;
    if (write_record(o.csv_path, csv, &run, bench_write_csv) != 0) rc = 1;
  } else { /* nothing measured: leave the files empty */
    if (json && json != stdout) fclose(json);
    if (csv && csv != stdout) fclose(csv);
  }
  free(run.rows);
  free(run.baselines);
  return rc;
}
