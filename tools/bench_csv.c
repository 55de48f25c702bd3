/* qgemv bench: the rows as CSV (RFC 4180 quoting), one line per row, for
 * spreadsheets; the JSON record has the machine and command as well. A
 * line is written as its row finishes. */
#include <math.h>

#include "bench.h"

static void text(FILE *f, const char *s, bool last) {
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputs(last ? "\"\n" : "\",", f);
}

static void num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.10g", v);
  fputc(',', f);
}

void bench_csv_header(FILE *f) {
  fputs("preset,layer,n,k,format,dtype,m,rmsnorm,median_s,min_s,max_s,samples,bytes,gbs,pct_read,copies,"
        "working_set_bytes,baseline,baseline_median_s,baseline_gbs,speedup,baseline_absent,same_as,error\n",
        f);
}

void bench_csv_row(FILE *f, const bench_run *run, int i) {
  const bench_row *r = &run->rows[i];
  const bench_measure *b = row_baseline(run, r);
  bool ok = r->q.ok;
  text(f, r->layer->preset ? r->layer->preset : "", false);
  text(f, r->layer->name, false);
  fprintf(f, "%lld,%lld,", (long long)r->layer->n, (long long)r->layer->k);
  text(f, r->format.name, false);
  text(f, dtype_label(r->dtype), false);
  fprintf(f, "%lld,%d,", (long long)r->m, run->o->rmsnorm ? 1 : 0);
  num(f, ok ? r->q.t.median : NAN);
  num(f, ok ? r->q.t.min : NAN);
  num(f, ok ? r->q.t.max : NAN);
  fprintf(f, "%d,", r->q.t.samples);
  num(f, ok ? r->q.bytes : NAN);
  num(f, row_gbs(r));
  num(f, row_pct_read(run, r));
  fprintf(f, "%d,%llu,", r->q.copies, (unsigned long long)r->q.working_set);
  text(f, b ? b->name : "", false);
  num(f, b && b->ok ? b->t.median : NAN);
  num(f, b ? measure_gbs(b) : NAN);
  num(f, row_speedup(run, r));
  text(f, b && !b->ok ? b->error : "", false);
  text(f, r->same_as >= 0 ? run->rows[r->same_as].layer->name : "", false);
  text(f, ok ? "" : r->q.error, true);
}
