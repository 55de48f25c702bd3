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

static int find_step(const bench_step *steps, int count, const bench_row *r) {
  int s = 0;
  while (s < count && !(strcmp(steps[s].preset, r->layer->preset) == 0 && strcmp(steps[s].format.name, r->format.name) == 0 && steps[s].dtype == r->dtype && steps[s].m == r->m))
    s++;
  return s;
}

int bench_steps(const bench_run *run, bench_step *out, int max) {
  int count = 0;
  for (int i = 0; i < run->nrows; i++) {
    const bench_row *r = &run->rows[i];
    if (!r->layer->preset) continue;
    bool done = i < run->done;
    int s = find_step(out, count, r);
    if (s == count) {
      if (count == max || !done) continue;
      out[count++] = (bench_step){.preset = r->layer->preset, .format = r->format, .dtype = r->dtype, .m = r->m,
                                  .complete = true, .dense_complete = true};
    }
    bench_step *st = &out[s];
    if (!done) { /* a layer still to measure */
      st->complete = st->dense_complete = false;
      continue;
    }
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
