/* qgemv bench: the timing loop (DESIGN.md section 9: median of many timed
 * runs after warm-up, rotating over weight copies beyond the caches). */
#include <stdlib.h>

#include "bench.h"

/* A sample is a batch of back-to-back calls and one sync, at least this
 * long, so that the sync (a GPU round trip) costs under a percent or two. */
#define BATCH_SECONDS 1e-3
#define MAX_BATCH 4096
#define MIN_SAMPLES 5
#define MAX_SAMPLES 100000

int bench_copies(uint64_t bytes, uint64_t target) {
  uint64_t c = bytes ? (target + bytes - 1) / bytes : 2;
  if (c < 2) c = 2; /* a single copy would be re-read from cache when it fits */
  if (c > BENCH_MAX_COPIES) c = BENCH_MAX_COPIES;
  return (int)c;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Queues `count` calls on consecutive copies from *next, then syncs;
 * returns the seconds that took, < 0 on a failure. */
static double batch(const bench_callee *c, int count, int *next) {
  double t0 = seconds_now();
  for (int i = 0; i < count; i++) {
    if (c->call(c->arg, *next) != 0) return -1;
    *next = (*next + 1) % c->copies;
  }
  if (c->sync(c->arg) != 0) return -1;
  return seconds_now() - t0;
}

int bench_time(const bench_callee *c, int64_t iters, double min_time, bench_timing *out) {
  int next = 0;
  /* Warm-up (threads started, code and tables hot), then one call timed
   * alone to size the batches. */
  if (batch(c, 2, &next) < 0) return -1;
  double one = batch(c, 1, &next);
  if (one < 0) return -1;
  int per_batch = one >= BATCH_SECONDS ? 1 : one <= BATCH_SECONDS / MAX_BATCH ? MAX_BATCH : (int)(BATCH_SECONDS / one) + 1;

  /* With a graph: the batch's calls captured once, each sample a replay. */
  int cap = 64, count = 0, rc = 0;
  double *samples = malloc((size_t)cap * sizeof *samples);
  if (!samples) return -1;
  if (c->graph && bench_graph_capture(c->graph, c, per_batch, &next) != 0) return free(samples), -2;
  double start = seconds_now();
  for (;;) {
    double dt = c->graph ? bench_graph_replay(c->graph) : batch(c, per_batch, &next);
    if (dt < 0) {
      rc = c->graph ? -2 : -1;
      break;
    }
    if (count == cap) {
      double *grown = realloc(samples, (size_t)(cap *= 2) * sizeof *samples);
      if (!grown) {
        rc = -1;
        break;
      }
      samples = grown;
    }
    samples[count++] = dt / per_batch;
    if (iters > 0 ? count >= iters : count >= MIN_SAMPLES && seconds_now() - start >= min_time) break;
    if (count >= MAX_SAMPLES) break;
  }
  if (c->graph) bench_graph_drop(c->graph);
  if (rc == 0) {
    qsort(samples, (size_t)count, sizeof *samples, cmp_double);
    out->median = count % 2 ? samples[count / 2] : 0.5 * (samples[count / 2 - 1] + samples[count / 2]);
    out->min = samples[0];
    out->max = samples[count - 1];
    out->samples = count;
    out->calls = (int64_t)count * per_batch;
  }
  free(samples);
  return rc;
}
