/* Weights: validated on the host, then handed to the backend's layout. */
#include <stdlib.h>

#include "error.h"
#include "formats.h"
#include "objects.h"

qgemv_status qg_check_weight(const qgemv_weight *w, const qgemv_ctx *owner, const char *what) {
  if (w == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s is NULL", what);
  if (w->magic != QG_MAGIC_WEIGHT) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s is not a live qgemv_weight", what);
  if (owner && w->ctx != owner)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s belongs to another context: upload it to this context", what);
  return QGEMV_OK;
}

static qgemv_status upload(qgemv_ctx *ctx, const qgemv_weight_desc *desc, int64_t max_m, qgemv_weight **out,
                           const char *fn) {
  if (out == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: out is NULL", fn);
  *out = NULL;
  qgemv_status s = qg_check_ctx(ctx, fn);
  if (s != QGEMV_OK) return s;
  qg_shape sh;
  s = qg_check_desc(desc, &sh);
  if (s != QGEMV_OK) return s;
  qgemv_weight *w = calloc(1, sizeof *w);
  if (w == NULL) return qg_fail(QGEMV_ERR_NO_MEMORY, "%s: out of host memory", fn);
  qgemv_weight_desc d = *desc;
  d.group = qg_layouts[sh.id].group;
  s = ctx->be->weight_upload(ctx->state, &d, sh.id, max_m, &w->layout, &w->resident_bytes);
  if (s != QGEMV_OK) {
    free(w);
    return qg_backend_fail(ctx->be, s, fn);
  }
  w->magic = QG_MAGIC_WEIGHT;
  w->ctx = ctx;
  w->layout_id = sh.id;
  w->n = d.n;
  w->k = d.k;
  qg_list_add(ctx, &w->node);
  *out = w;
  return QGEMV_OK;
}

qgemv_status qgemv_weight_upload(qgemv_ctx *ctx, const qgemv_weight_desc *desc, qgemv_weight **out) {
  return upload(ctx, desc, 0, out, "qgemv_weight_upload");
}

qgemv_status qgemv_weight_upload_for_m(qgemv_ctx *ctx, const qgemv_weight_desc *desc, int64_t max_m,
                                       qgemv_weight **out) {
  if (out != NULL) *out = NULL;
  if (max_m < 0)
    return qg_fail(QGEMV_ERR_INVALID_ARG,
                   "qgemv_weight_upload_for_m: max_m is %lld; pass the most activation rows a call will use "
                   "(1 for decode), or 0 when unknown",
                   (long long)max_m);
  return upload(ctx, desc, max_m, out, "qgemv_weight_upload_for_m");
}

const char *qgemv_weight_form(const qgemv_weight *w) {
  if (qg_check_weight(w, NULL, "qgemv_weight_form: weight") != QGEMV_OK) return NULL;
  const qg_backend *be = w->ctx->be;
  return be->weight_form ? be->weight_form(w->ctx->state, w->layout) : "packed";
}

void qgemv_weight_free(qgemv_weight *w) {
  if (w == NULL || w->magic != QG_MAGIC_WEIGHT) return;
  w->ctx->be->weight_free(w->ctx->state, w->layout);
  qg_list_remove(&w->node);
  w->magic = 0;
  free(w);
}

size_t qgemv_weight_resident_bytes(const qgemv_weight *w) {
  if (qg_check_weight(w, NULL, "qgemv_weight_resident_bytes: weight") != QGEMV_OK) return 0;
  return w->resident_bytes;
}
