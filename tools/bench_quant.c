/* qgemv bench: the quantized matvec. A layer's weight, with the copies
 * that it rotates over, is made and uploaded once and then measured for
 * every dtype and m: making and uploading a working set takes far longer
 * than timing one configuration. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct quant_job {
  qgemv_ctx *ctx;
  qgemv_weight *const *ws;
  qgemv_tensor *x, *y;
  const qgemv_rmsnorm *norm;
  qgemv_status failed; /* the status that stopped the timing */
  const char *what;
} quant_job;

static int quant_call(void *arg, int copy) {
  quant_job *j = arg;
  qgemv_status s = qgemv_matvec(j->ctx, j->ws[copy], j->x, j->y, j->norm);
  if (s != QGEMV_OK) j->failed = s, j->what = "matvec";
  return s == QGEMV_OK ? 0 : -1;
}

static int quant_sync(void *arg) {
  quant_job *j = arg;
  qgemv_status s = qgemv_sync(j->ctx);
  if (s != QGEMV_OK) j->failed = s, j->what = "sync";
  return s == QGEMV_OK ? 0 : -1;
}

static void fail(char *error, size_t size, const char *what, qgemv_status s) {
  snprintf(error, size, "%s: %s: %s", what, qgemv_status_str(s), qgemv_last_error());
}

/* A tensor of random values (x, or gamma around 1). */
static qgemv_status random_tensor(qgemv_ctx *ctx, qgemv_dtype t, int64_t rows, int64_t cols, rng *r, double offset,
                                  qgemv_tensor **out) {
  size_t count = (size_t)(rows * cols);
  float *f = malloc(count * sizeof *f);
  if (!f) return QGEMV_ERR_NO_MEMORY;
  fill_random(r, DIST_NORMAL, f, count);
  for (size_t i = 0; offset != 0 && i < count; i++) f[i] = (float)(offset + 0.1 * f[i]);
  void *h = to_dtype(f, count, t);
  qgemv_status s = h ? qgemv_tensor_new(ctx, t, rows, cols, out) : QGEMV_ERR_NO_MEMORY;
  if (s == QGEMV_OK) s = qgemv_tensor_write(*out, h, count * (t == QGEMV_F32 ? 4 : 2));
  free(f);
  free(h);
  return s;
}

/* The first copy sizes the rotation: what one copy occupies on the device. */
static void upload_copies(qgemv_ctx *ctx, const qgemv_weight_desc *desc, uint64_t working_set, int64_t max_m,
                          bench_weight *out) {
  qgemv_weight *first = NULL;
  qgemv_status s = qgemv_weight_upload_for_m(ctx, desc, max_m, &first);
  if (s != QGEMV_OK) {
    fail(out->error, sizeof out->error, "upload", s);
    return;
  }
  out->form = qgemv_weight_form(first);
  out->resident = qgemv_weight_resident_bytes(first);
  out->copies = bench_copies(out->resident, working_set);
  out->ws = calloc((size_t)out->copies, sizeof *out->ws);
  if (!out->ws) {
    qgemv_weight_free(first);
    snprintf(out->error, sizeof out->error, "out of host memory");
    return;
  }
  out->ws[0] = first;
  for (int c = 1; c < out->copies; c++)
    if ((s = qgemv_weight_upload_for_m(ctx, desc, max_m, &out->ws[c])) != QGEMV_OK) {
      fail(out->error, sizeof out->error, "upload of the weight copies", s);
      bench_weight_free(out);
      return;
    }
}

int bench_weight_upload(qgemv_ctx *ctx, uint64_t working_set, int64_t max_m, int64_t n, int64_t k, qgemv_format_info f,
                        bench_weight *out) {
  *out = (bench_weight){.n = n, .k = k, .format = f};
  rng r = {42};
  host_weight hw;
  if (host_weight_make(&r, DIST_NORMAL, f.format, f.group, n, k, &hw) != 0) {
    snprintf(out->error, sizeof out->error, "cannot make a %lldx%lld weight: %s", (long long)n, (long long)k,
             qgemv_last_error());
    return -1;
  }
  upload_copies(ctx, &hw.desc, working_set, max_m, out);
  host_weight_free(&hw); /* the copies are the backend's own */
  return out->ws ? 0 : -1;
}

int bench_weight_upload_desc(qgemv_ctx *ctx, uint64_t working_set, int64_t max_m, const qgemv_weight_desc *d,
                             bench_weight *out) {
  *out = (bench_weight){.n = d->n, .k = d->k};
  format_info_of(d->format, d->group, &out->format);
  upload_copies(ctx, d, working_set, max_m, out);
  return out->ws ? 0 : -1;
}

void bench_weight_free(bench_weight *w) {
  for (int c = 0; w->ws && c < w->copies; c++) qgemv_weight_free(w->ws[c]);
  free(w->ws);
  w->ws = NULL;
}

void bench_quant(qgemv_ctx *ctx, const bench_opts *o, bench_graph *graph, const bench_weight *w, qgemv_dtype dtype,
                 int64_t m, bench_measure *out) {
  memset(out, 0, sizeof *out);
  /* a form other than the backend's usual one is named: "NF4 lut",
   * "NF4 share" */
  if (w->form && (strcmp(w->form, "lut") == 0 || strcmp(w->form, "share") == 0))
    snprintf(out->name, sizeof out->name, "%s %s", w->format.label, w->form);
  else
    snprintf(out->name, sizeof out->name, "%s", w->format.label);
  if (!w->ws) {
    snprintf(out->error, sizeof out->error, "%s", w->error);
    return;
  }
  int64_t n = w->n, k = w->k;
  rng r = {43}; /* x and gamma: their values do not change the time */
  quant_job j = {.ctx = ctx, .ws = w->ws};
  qgemv_tensor *gamma = NULL;
  qgemv_status s;
  out->copies = w->copies;
  if ((s = random_tensor(ctx, dtype, m, k, &r, 0.0, &j.x)) || (s = qgemv_tensor_new(ctx, dtype, m, n, &j.y)) ||
      (o->rmsnorm && (s = random_tensor(ctx, dtype, 1, k, &r, 1.0, &gamma)))) {
    fail(out->error, sizeof out->error, "tensors", s);
    goto done;
  }
  qgemv_rmsnorm norm = {.gamma = gamma, .eps = 1e-5f};
  j.norm = o->rmsnorm ? &norm : NULL;
  bench_callee callee = {quant_call, quant_sync, &j, w->copies, graph};
  int timed = bench_time(&callee, o->iters, o->min_time, &out->t);
  if (timed != 0) {
    if (j.failed)
      fail(out->error, sizeof out->error, j.what, j.failed);
    else
      snprintf(out->error, sizeof out->error, "%s",
               timed == -2 ? "the CUDA graph of the calls failed (capture, instantiation or replay)" : "out of host memory");
    goto done;
  }
  size_t es = dtype == QGEMV_F32 ? 4 : 2;
  /* The weight as the backend holds it (within 1.1x of the packed format):
   * what each call actually streams, comparable with the read bandwidth. */
  out->bytes = (double)w->resident + (double)(m * k + m * n + (o->rmsnorm ? k : 0)) * (double)es;
  out->working_set = (uint64_t)w->copies * w->resident;
  out->ok = true;
done:
  qgemv_tensor_free(j.x);
  qgemv_tensor_free(j.y);
  qgemv_tensor_free(gamma);
}
