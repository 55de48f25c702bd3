/* qgemv bench: figures derived from a row, shared by every output. */
#include <math.h>
#include <string.h>

#include "bench.h"

static double gbs(const bench_measure *m) { return m->ok && m->t.median > 0 ? m->bytes / m->t.median / 1e9 : NAN; }

double row_gbs(const bench_row *r) { return gbs(&r->q); }

double row_pct_read(const bench_run *run, const bench_row *r) {
  return run->read_gbs > 0 ? 100.0 * row_gbs(r) / run->read_gbs : NAN;
}

const bench_measure *row_baseline(const bench_run *run, const bench_row *r) {
  return r->baseline >= 0 ? &run->baselines[r->baseline].d : NULL;
}

double row_speedup(const bench_run *run, const bench_row *r) {
  const bench_measure *b = row_baseline(run, r);
  if (!b || !b->ok || !r->q.ok || r->q.t.median <= 0) return NAN;
  return b->t.median / r->q.t.median;
}

double measure_gbs(const bench_measure *m) { return gbs(m); }

int bench_steps(const bench_run *run, bench_step *out, int max) {
  int count = 0;
  for (int i = 0; i < run->nrows; i++) {
    const bench_row *r = &run->rows[i];
    if (!r->layer->preset) continue;
    int s = 0;
    while (s < count && !(strcmp(out[s].preset, r->layer->preset) == 0 && strcmp(out[s].format.name, r->format.name) == 0 &&
                          out[s].dtype == r->dtype && out[s].m == r->m))
      s++;
    if (s == count) {
      if (count == max) continue;
      out[count++] = (bench_step){.preset = r->layer->preset, .format = r->format, .dtype = r->dtype, .m = r->m,
                                  .complete = true, .dense_complete = true};
    }
    bench_step *st = &out[s];
    const bench_measure *b = row_baseline(run, r);
    st->layers++;
    st->complete &= r->q.ok;
    st->seconds += r->q.t.median;
    st->bytes += r->q.bytes;
    st->dense_complete &= b && b->ok;
    if (b && b->ok) st->dense_seconds += b->t.median;
  }
  return count;
}
