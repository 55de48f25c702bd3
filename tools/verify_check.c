/* Checks a context's matvec against the oracle, element by element. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

typedef struct shape { int64_t n, k; } shape;

/* Odd n (no kernel may assume a multiple of its tile) and k spanning
 * several blocks of every format (rounded up to whole blocks where a
 * format's block does not divide it), one k long enough for many; and
 * one shape the CUDA lookup-table form can hold (n a multiple of 1024, k
 * of 512), which QGEMV_CUDA_LAYOUT=lut puts there. The CUDA share form
 * holds all three (QGEMV_CUDA_LAYOUT=share), and takes them at m = 1 by
 * itself (at most 24 rows an SM for NF4, 16 for Q2_0). */
static const shape shapes[] = {{257, 1152}, {33, 4224}, {1024, 1024}};
static const int64_t ms[] = {1, 5, 17};

combo *combos_all(int *count) {
  *count = qgemv_format_count() * 8;
  combo *out = malloc((size_t)*count * sizeof *out);
  for (int i = 0; out && i < *count; i++) {
    out[i] = (combo){.x = (qgemv_dtype)(i / 4 % 2), .y = (qgemv_dtype)(i / 2 % 2), .norm = i % 2 != 0};
    qgemv_format_get(i / 8, &out[i].format);
  }
  return out;
}

static size_t esize(qgemv_dtype t) { return t == QGEMV_F32 ? 4 : 2; }

double verify_worst_ratio(qgemv_dtype y, const void *yh, const double *ref, const double *bound, size_t count) {
  double worst = 0;
  for (size_t i = 0; i < count; i++) {
    double v = y == QGEMV_F32 ? ((const float *)yh)[i] : qgemv_bf16_to_f32(((const uint16_t *)yh)[i]);
    double allowed = 1e-3 * bound[i] + (y == QGEMV_BF16 ? ldexp(fabs(ref[i]), -8) : 0.0);
    double err = fabs(v - ref[i]);
    double ratio = isnan(ref[i]) ? (isnan(v) ? 0 : INFINITY)
                   : isnan(err)  ? INFINITY
                   : allowed > 0 ? err / allowed
                                 : (err > 0 ? INFINITY : 0);
    if (ratio > worst) worst = ratio;
  }
  return worst;
}

/* One call; the worst ratio, or INFINITY with err filled on a failure. */
static double run_case(qgemv_ctx *ctx, const combo *c, shape sh, int64_t m, rng *r, dist_kind dist, char *err,
                       size_t errsize) {
  host_weight hw;
  if (host_weight_make(r, dist, c->format.format, c->format.group, sh.n, sh.k, &hw) != 0) {
    snprintf(err, errsize, "cannot make a random weight: %s", qgemv_last_error());
    return INFINITY;
  }
  size_t xc = (size_t)(m * sh.k), yc = (size_t)(m * sh.n);
  float *xf = malloc(xc * sizeof(float)), *gf = malloc((size_t)sh.k * sizeof(float));
  double *ref = malloc(yc * sizeof(double)), *bound = malloc(yc * sizeof(double));
  unsigned char *yh = malloc(yc * esize(c->y));
  double worst = INFINITY;
  const char *what = NULL; /* the step that failed; NULL: host memory */
  qgemv_weight *w = NULL;
  qgemv_tensor *x = NULL, *y = NULL, *g = NULL;
  void *xh = NULL, *gh = NULL;
  qgemv_status s = QGEMV_ERR_NO_MEMORY;
  if (!xf || !gf || !ref || !bound || !yh) goto done;
  fill_random(r, dist, xf, xc);
  for (int64_t j = 0; j < sh.k; j++) gf[j] = (float)(0.5 + rng_uniform(r));
  xh = to_dtype(xf, xc, c->x);
  gh = to_dtype(gf, (size_t)sh.k, c->x);
  if (!xh || !gh) goto done;
  what = "setup";
  /* uploaded for its m, as an engine would (the backend may pick its m = 1 form) */
  if ((s = qgemv_weight_upload_for_m(ctx, &hw.desc, m, &w)) || (s = qgemv_tensor_new(ctx, c->x, m, sh.k, &x)) ||
      (s = qgemv_tensor_new(ctx, c->y, m, sh.n, &y)) || (s = qgemv_tensor_new(ctx, c->x, 1, sh.k, &g)) ||
      (s = qgemv_tensor_write(x, xh, xc * esize(c->x))) || (s = qgemv_tensor_write(g, gh, (size_t)sh.k * esize(c->x))))
    goto done;
  memset(yh, 0xff, yc * esize(c->y)); /* NaN in both dtypes: an unwritten element fails */
  qgemv_rmsnorm norm = {.gamma = g, .eps = 1e-5f};
  what = "matvec";
  if ((s = qgemv_tensor_write(y, yh, yc * esize(c->y))) || (s = qgemv_matvec(ctx, w, x, y, c->norm ? &norm : NULL)) ||
      (s = qgemv_sync(ctx)) || (s = qgemv_tensor_read(y, yh, yc * esize(c->y))))
    goto done;
  what = "oracle";
  if ((s = qgemv_reference_matvec(&hw.desc, m, c->x, xh, c->x, c->norm ? gh : NULL, 1e-5f, ref, bound))) goto done;
  worst = verify_worst_ratio(c->y, yh, ref, bound, yc);
done:
  if (s != QGEMV_OK && !what)
    snprintf(err, errsize, "out of host memory");
  else if (s != QGEMV_OK)
    snprintf(err, errsize, "%s (n=%lld k=%lld m=%lld): %s: %s", what, (long long)sh.n, (long long)sh.k, (long long)m,
             qgemv_status_str(s), qgemv_last_error());
  qgemv_tensor_free(x);
  qgemv_tensor_free(y);
  qgemv_tensor_free(g);
  qgemv_weight_free(w);
  host_weight_free(&hw);
  free(xf);
  free(gf);
  free(ref);
  free(bound);
  free(yh);
  free(xh);
  free(gh);
  return worst;
}

void verify_combo(qgemv_ctx *ctx, const combo *c, rng *r, combo_result *out) {
  memset(out, 0, sizeof *out);
  out->worst = -1;
  int dist = 0;
  const int64_t g = c->format.group;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
      dist_kind d = (dist_kind)(dist++ % DIST_COUNT); /* every distribution, every combination */
      char err[256] = "";
      const shape sh = {shapes[si].n, (shapes[si].k + g - 1) / g * g}; /* whole blocks of any format */
      double v = run_case(ctx, c, sh, ms[mi], r, d, err, sizeof err);
      if (isnan(v)) v = INFINITY;
      if (err[0] && !out->error[0]) snprintf(out->error, sizeof out->error, "%s", err);
      if (v > out->worst) {
        out->worst = v;
        out->n = sh.n;
        out->k = sh.k;
        out->m = ms[mi];
        out->dist = d;
      }
    }
}
