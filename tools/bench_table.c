/* qgemv bench: the human-readable table. */
#include <math.h>
#include <string.h>

#include "bench.h"

#define ROW_FMT "%-6s %-11s %-10s %-5s %4s %11s %8s %7s %11s %8s %9s"

void bench_table_header(FILE *f, const bench_run *run) {
  const qgemv_device_info *d = &run->info;
  fprintf(f, "qgemv bench %s: backend %s:%d, %s", qgemv_version(), d->backend, d->index, d->name);
  if (d->isa[0]) fprintf(f, ", ISA %s, %d threads", d->isa, d->threads);
  fprintf(f, "\nstreaming read bandwidth %.1f GB/s (measured in this run); weights rotated over %.0f MB",
          run->read_gbs, (double)run->working_set / 1e6);
  if (run->load_avg >= 0) fprintf(f, "; load average %.2f at start", run->load_avg);
  if (run->o->graph) fprintf(f, "\neach sample's calls replayed from a CUDA graph (--graph); the dense baseline on the stream");
  fprintf(f, "\n\n" ROW_FMT "\n", "layer", "shape", "format", "dtype", "m", "median(us)", "GB/s", "%read", "dense(us)",
          "dense", "speed-up");
  fprintf(f, ROW_FMT "\n", "", "NxK", "", "x,y", "", "", "", "", "", "GB/s", "");
}

static void cell(char *buf, size_t size, const char *fmt, double v) {
  if (isfinite(v))
    snprintf(buf, size, fmt, v);
  else
    snprintf(buf, size, "-");
}

void bench_table_row(FILE *f, const bench_run *run, int i) {
  const bench_row *r = &run->rows[i];
  const bench_measure *b = row_baseline(run, r);
  char shape[32], t[24], g[24], pct[24], dt[24], dg[24], sp[24];
  snprintf(shape, sizeof shape, "%lldx%lld", (long long)r->layer->n, (long long)r->layer->k);
  char m[16];
  snprintf(m, sizeof m, "%lld", (long long)r->m);
  if (!r->q.ok) {
    fprintf(f, "%-6s %-11s %-10s %-5s %4s  error: %s\n", r->layer->name, shape, r->q.name, dtype_label(r->dtype), m,
            r->q.error);
    return;
  }
  cell(t, sizeof t, "%.1f", r->q.t.median * 1e6);
  cell(g, sizeof g, "%.2f", row_gbs(r));
  cell(pct, sizeof pct, "%.1f%%", row_pct_read(run, r));
  cell(dt, sizeof dt, "%.1f", b && b->ok ? b->t.median * 1e6 : NAN);
  cell(dg, sizeof dg, "%.2f", b ? measure_gbs(b) : NAN);
  cell(sp, sizeof sp, "%.2fx", row_speedup(run, r));
  fprintf(f, ROW_FMT, r->layer->name, shape, r->q.name, dtype_label(r->dtype), m, t, g, pct, dt, dg, sp);
  if (r->same_as >= 0) fprintf(f, "  (same as %s)", run->rows[r->same_as].layer->name);
  if (r->q.working_set < 8 * run->info.llc_bytes) fputs("  ~cache", f);
  fputc('\n', f);
}

/* Each distinct reason a baseline is absent, once. */
static void absent_reasons(FILE *f, const bench_run *run) {
  for (int i = 0; i < run->nbaselines; i++) {
    const bench_measure *d = &run->baselines[i].d;
    bool seen = d->ok;
    for (int j = 0; j < i && !seen; j++)
      seen = !run->baselines[j].d.ok && strcmp(run->baselines[j].d.error, d->error) == 0;
    if (!seen) fprintf(f, "dense baseline (%s) absent: %s\n", d->name, d->error);
  }
}

void bench_table_footer(FILE *f, const bench_run *run) {
  bench_step steps[BENCH_MAX_STEPS];
  int n = bench_steps(run, steps, BENCH_MAX_STEPS);
  if (n) fprintf(f, "\ndecode step: the layers of one transformer block (a preset, or a --model block) summed\n");
  for (int i = 0; i < n; i++) {
    const bench_step *s = &steps[i];
    const char *name = s->format.label;
    char dense[48] = "";
    if (!s->complete) {
      fprintf(f, "  %-10s %-10s %-5s m=%-4lld incomplete (a layer failed)\n", s->preset, name, dtype_label(s->dtype),
              (long long)s->m);
      continue;
    }
    if (s->dense_complete && s->seconds > 0)
      snprintf(dense, sizeof dense, "  dense %.3f ms  %.2fx", s->dense_seconds * 1e3, s->dense_seconds / s->seconds);
    fprintf(f, "  %-10s %-10s %-5s m=%-4lld %9.3f ms %8.2f GB/s%s\n", s->preset, name, dtype_label(s->dtype),
            (long long)s->m, s->seconds * 1e3, s->bytes / s->seconds / 1e9, dense);
  }
  fputc('\n', f);
  if (isfinite(run->read_gbs) && isfinite(run->read_gbs_end) && run->read_gbs > 0) {
    const double moved = run->read_gbs_end / run->read_gbs - 1.0;
    fprintf(f, "streaming read bandwidth at the end %.1f GB/s (%+.0f%% from the start's %.1f, which %%read is of)\n",
            run->read_gbs_end, 100.0 * moved, run->read_gbs);
    if (fabs(moved) > 0.10)
      fprintf(f, "~drift: the machine's read bandwidth moved by more than 10%% during the run (other work on a\n"
                 "        shared host or VM): rows of this run may differ by as much for that reason alone\n");
  }
  absent_reasons(f, run);
  for (int i = 0; i < run->nrows; i++)
    if (run->rows[i].q.ok && run->rows[i].q.working_set < 8 * run->info.llc_bytes) {
      fprintf(f, "~cache: the rotated weights are under 8x the last-level cache (%.0f MB): figures may\n"
                 "        come from cache, not memory (raise --working-set)\n",
              (double)run->info.llc_bytes / 1e6);
      break;
    }
}
