/* qgemv_matvec: every argument checked here, once, before dispatch. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>

#include "error.h"
#include "objects.h"

static bool overlaps(const qgemv_tensor *a, const qgemv_tensor *b) {
  uintptr_t a0 = (uintptr_t)a->ptr, b0 = (uintptr_t)b->ptr;
  return a0 < b0 + b->bytes && b0 < a0 + a->bytes;
}

static const char *dtype_name(qgemv_dtype t) { return t == QGEMV_F32 ? "f32" : "bf16"; }

qgemv_status qgemv_matvec(qgemv_ctx *ctx, const qgemv_weight *w, const qgemv_tensor *x, qgemv_tensor *y,
                          const qgemv_rmsnorm *norm) {
  qgemv_status s;
  if ((s = qg_check_ctx(ctx, "qgemv_matvec")) != QGEMV_OK) return s;
  if ((s = qg_check_weight(w, ctx, "qgemv_matvec: weight w")) != QGEMV_OK) return s;
  if ((s = qg_check_tensor(x, ctx, "qgemv_matvec: input x")) != QGEMV_OK) return s;
  if ((s = qg_check_tensor(y, ctx, "qgemv_matvec: output y")) != QGEMV_OK) return s;
  if (x->cols != w->k)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_matvec: x has %lld columns but the weight has k=%lld inputs",
                   (long long)x->cols, (long long)w->k);
  if (y->cols != w->n)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_matvec: y has %lld columns but the weight has n=%lld outputs",
                   (long long)y->cols, (long long)w->n);
  if (x->rows != y->rows)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_matvec: x has %lld rows and y %lld: both must be m",
                   (long long)x->rows, (long long)y->rows);
  if (x == y || overlaps(x, y))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_matvec: y overlaps x in memory: the output must not alias the input");
  qg_matvec_args a = {
      .layout = w->layout, .layout_id = w->layout_id, .n = w->n, .k = w->k, .m = x->rows,
      .x = x->ptr, .x_dtype = x->dtype, .y = y->ptr, .y_dtype = y->dtype, .gamma = NULL,
      .gamma_dtype = QGEMV_F32, .eps = 0.0f,
  };
  if (norm != NULL) {
    if ((s = qg_check_tensor(norm->gamma, ctx, "qgemv_matvec: rmsnorm gamma")) != QGEMV_OK) return s;
    if (norm->gamma->rows != 1 || norm->gamma->cols != w->k)
      return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_matvec: rmsnorm gamma is [%lld, %lld] but must be [1, k=%lld]",
                     (long long)norm->gamma->rows, (long long)norm->gamma->cols, (long long)w->k);
    if (!(norm->eps > 0.0f) || !isfinite(norm->eps))
      return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_matvec: rmsnorm eps=%g must be finite and > 0", (double)norm->eps);
    if (overlaps(norm->gamma, y))
      return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_matvec: y overlaps rmsnorm gamma in memory");
    a.gamma = norm->gamma->ptr;
    a.gamma_dtype = norm->gamma->dtype;
    a.eps = norm->eps;
  }
  s = ctx->be->matvec(ctx->state, &a);
  if (s != QGEMV_OK) {
    char prefix[96];
    snprintf(prefix, sizeof prefix, "qgemv_matvec (%s x, %s y)", dtype_name(x->dtype), dtype_name(y->dtype));
    return qg_backend_fail(ctx->be, s, prefix);
  }
  return QGEMV_OK;
}
