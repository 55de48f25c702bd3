/* qgemv bench: the dense baseline of the same shape, measured in the same
 * run, so the table shows what quantization buys. GPU backends time their
 * vendor library through qgemv_measure_dense_bf16 (CUDA: cuBLAS, loaded at
 * run time); on the CPU the tool times OpenBLAS sgemv/sgemm itself, f32
 * weights, when configure found OpenBLAS. */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef QG_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "bench.h"

static void absent(bench_measure *out, const char *why) { snprintf(out->error, sizeof out->error, "%s", why); }

#ifdef QG_HAVE_OPENBLAS
typedef struct blas_job {
  float **w;
  const float *x;
  float *y;
  int n, k, m;
} blas_job;

static int blas_call(void *arg, int copy) {
  blas_job *j = arg;
  if (j->m == 1)
    cblas_sgemv(CblasRowMajor, CblasNoTrans, j->n, j->k, 1.0f, j->w[copy], j->k, j->x, 1, 0.0f, j->y, 1);
  else /* y[m, n] = x[m, k] . W[n, k]^T, the batched call's dense twin */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, j->m, j->n, j->k, 1.0f, j->x, j->k, j->w[copy], j->k, 0.0f,
                j->y, j->n);
  return 0;
}

static int blas_sync(void *arg) {
  (void)arg; /* OpenBLAS returns when done */
  return 0;
}

/* Uniform values in [-1, 1): cheap, and what they are does not change the
 * time of a dense GEMV (no denormals, no NaN). */
static void fill_uniform(float *p, size_t count, uint64_t seed) {
  rng r = {seed};
  for (size_t i = 0; i < count; i++) p[i] = (float)((double)(rng_next(&r) >> 40) * (2.0 / 16777216.0) - 1.0);
}

/* One m on the weight copies in j (j->w, n, k set). */
static void openblas_time(const qgemv_device_info *info, const bench_opts *o, blas_job *j, int copies, int64_t m,
                          bench_measure *out) {
  size_t bytes = (size_t)j->n * (size_t)j->k * sizeof(float);
  float *x = malloc((size_t)(m * j->k) * sizeof *x);
  j->y = malloc((size_t)(m * j->n) * sizeof *j->y);
  j->x = x;
  j->m = (int)m;
  if (!x || !j->y) {
    absent(out, "out of host memory");
  } else {
    fill_uniform(x, (size_t)(m * j->k), 8);
    /* Same thread count as the quantized kernels, for a fair comparison. */
    int old_threads = openblas_get_num_threads();
    openblas_set_num_threads(info->threads > 0 ? info->threads : 1);
    bench_callee callee = {blas_call, blas_sync, j, copies, NULL}; /* OpenBLAS: no graphs */
    if (bench_time(&callee, o->iters, o->min_time, &out->t) != 0) {
      absent(out, "out of host memory");
    } else {
      out->ok = true;
      out->copies = copies;
      out->working_set = (uint64_t)copies * bytes;
      out->bytes = (double)bytes + (double)(m * j->k + m * j->n) * sizeof(float);
    }
    openblas_set_num_threads(old_threads);
  }
  free(x);
  free(j->y);
}

/* The f32 weight copies are made once for all the m's: filling a working
 * set takes longer than timing one m. */
static void openblas_measure(const qgemv_device_info *info, const bench_opts *o, uint64_t working_set, int64_t n,
                             int64_t k, const int64_t *ms, int nms, bench_measure *outs) {
  for (int i = 0; i < nms; i++)
    snprintf(outs[i].name, sizeof outs[i].name, "OpenBLAS %s f32", ms[i] == 1 ? "sgemv" : "sgemm");
  size_t bytes = (size_t)n * (size_t)k * sizeof(float);
  int copies = bench_copies(bytes, working_set);
  /* Keep within half the host memory: the f32 copies of a 70B MLP layer
   * are 940 MB each; two already rotate far beyond any last-level cache. */
  double budget = 0.5 * (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  if ((double)copies * (double)bytes > budget) copies = (int)(budget / (double)bytes);
  if (copies < 2) {
    for (int i = 0; i < nms; i++)
      snprintf(outs[i].error, sizeof outs[i].error,
               "two f32 copies of %lldx%lld (%.1f GB) exceed half the host memory", (long long)n, (long long)k,
               2.0 * (double)bytes / 1e9);
    return;
  }
  blas_job j = {.n = (int)n, .k = (int)k};
  j.w = calloc((size_t)copies, sizeof *j.w);
  bool ok = j.w != NULL;
  for (int c = 0; ok && c < copies; c++) {
    ok = (j.w[c] = aligned_alloc(64, (bytes + 63) & ~(size_t)63)) != NULL;
    if (ok && c == 0) fill_uniform(j.w[0], (size_t)(n * k), 7);
    if (ok && c > 0) memcpy(j.w[c], j.w[0], bytes);
  }
  for (int i = 0; i < nms; i++) {
    if (ok)
      openblas_time(info, o, &j, copies, ms[i], &outs[i]);
    else
      absent(&outs[i], "out of host memory for the f32 weight copies");
  }
  for (int c = 0; j.w && c < copies; c++) free(j.w[c]);
  free(j.w);
}
#endif

/* The backend's own dense bf16 GEMV (cuBLAS on CUDA), named as the backend names it. */
static void library_measure(qgemv_ctx *ctx, const qgemv_device_info *info, const bench_opts *o, uint64_t working_set,
                            int64_t n, int64_t k, int64_t m, bench_measure *out) {
  const char *library = qgemv_ctx_dense_library(ctx);
  snprintf(out->name, sizeof out->name, "%s bf16", library ? library : info->backend);
  uint64_t bytes = (uint64_t)n * (uint64_t)k * 2;
  int copies = bench_copies(bytes, working_set);
  double seconds = 0;
  qgemv_status s = qgemv_measure_dense_bf16(ctx, n, k, m, copies, o->min_time, &seconds);
  if (s != QGEMV_OK) {
    snprintf(out->error, sizeof out->error, "%s: %s", qgemv_status_str(s), qgemv_last_error());
    return;
  }
  out->ok = true;
  out->t = (bench_timing){.median = seconds, .min = seconds, .max = seconds};
  out->copies = copies;
  out->working_set = (uint64_t)copies * bytes;
  out->bytes = (double)bytes + (double)(m * k + m * n) * 2.0;
}

void bench_dense(qgemv_ctx *ctx, const qgemv_device_info *info, const bench_opts *o, uint64_t working_set, int64_t n,
                 int64_t k, const int64_t *ms, int nms, bench_measure *outs) {
  memset(outs, 0, (size_t)nms * sizeof *outs);
  if (strcmp(info->backend, "cpu") != 0) {
    for (int i = 0; i < nms; i++) library_measure(ctx, info, o, working_set, n, k, ms[i], &outs[i]);
    return;
  }
#ifdef QG_HAVE_OPENBLAS
  openblas_measure(info, o, working_set, n, k, ms, nms, outs);
#else
  for (int i = 0; i < nms; i++) {
    snprintf(outs[i].name, sizeof outs[i].name, "OpenBLAS f32");
    absent(&outs[i], "this qgemv was built without OpenBLAS (configure found no openblas.pc)");
  }
#endif
}
