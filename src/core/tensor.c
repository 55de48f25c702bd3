/* Tensors: [rows, cols] activations and outputs on a context's device. */
#include <stdlib.h>

#include "error.h"
#include "formats.h"
#include "objects.h"

qgemv_status qg_check_tensor(const qgemv_tensor *t, const qgemv_ctx *owner, const char *what) {
  if (t == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s is NULL", what);
  if (t->magic != QG_MAGIC_TENSOR) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s is not a live qgemv_tensor", what);
  if (owner && t->ctx != owner)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s belongs to another context: make it with this context", what);
  return QGEMV_OK;
}

static qgemv_status tensor_make(qgemv_ctx *ctx, qgemv_dtype dtype, int64_t rows, int64_t cols, void *wrap,
                                const char *fn, qgemv_tensor **out) {
  if (out == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: out is NULL", fn);
  *out = NULL;
  qgemv_status s = qg_check_ctx(ctx, fn);
  if (s != QGEMV_OK) return s;
  if (!qg_dtype_valid(dtype))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: dtype %d is not QGEMV_F32 or QGEMV_BF16", fn, (int)dtype);
  size_t count;
  if (rows <= 0 || cols <= 0)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: shape [%lld, %lld]: rows and cols must be > 0", fn, (long long)rows,
                   (long long)cols);
  if (!qg_mul_size(rows, cols, &count) || count > SIZE_MAX / qg_dtype_size(dtype) ||
      count * qg_dtype_size(dtype) > (size_t)INT64_MAX)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: shape [%lld, %lld] is too large: its size overflows", fn,
                   (long long)rows, (long long)cols);
  if (wrap != NULL && ((uintptr_t)wrap % qg_dtype_size(dtype)) != 0)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: backend_ptr %p is not aligned to the %zu-byte element", fn, wrap,
                   qg_dtype_size(dtype));
  qgemv_tensor *t = calloc(1, sizeof *t);
  if (t == NULL) return qg_fail(QGEMV_ERR_NO_MEMORY, "%s: out of host memory", fn);
  t->bytes = count * qg_dtype_size(dtype);
  if (wrap) {
    t->ptr = wrap;
  } else {
    s = ctx->be->alloc(ctx->state, t->bytes, &t->ptr);
    if (s != QGEMV_OK) {
      free(t);
      return qg_backend_fail(ctx->be, s, fn);
    }
    t->owned = true;
  }
  t->magic = QG_MAGIC_TENSOR;
  t->ctx = ctx;
  t->dtype = dtype;
  t->rows = rows;
  t->cols = cols;
  qg_list_add(ctx, &t->node);
  *out = t;
  return QGEMV_OK;
}

qgemv_status qgemv_tensor_new(qgemv_ctx *ctx, qgemv_dtype dtype, int64_t rows, int64_t cols, qgemv_tensor **out) {
  return tensor_make(ctx, dtype, rows, cols, NULL, "qgemv_tensor_new", out);
}

qgemv_status qgemv_tensor_wrap(qgemv_ctx *ctx, qgemv_dtype dtype, int64_t rows, int64_t cols, void *backend_ptr,
                               qgemv_tensor **out) {
  if (backend_ptr == NULL) {
    if (out) *out = NULL;
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_tensor_wrap: backend_ptr is NULL");
  }
  return tensor_make(ctx, dtype, rows, cols, backend_ptr, "qgemv_tensor_wrap", out);
}

static qgemv_status check_copy(const qgemv_tensor *t, const void *host, size_t bytes, const char *fn) {
  qgemv_status s = qg_check_tensor(t, NULL, fn);
  if (s != QGEMV_OK) return s;
  if (host == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: host buffer is NULL", fn);
  if (bytes != t->bytes)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: bytes=%zu but the [%lld, %lld] %s tensor holds %zu bytes", fn, bytes,
                   (long long)t->rows, (long long)t->cols, t->dtype == QGEMV_F32 ? "f32" : "bf16", t->bytes);
  return QGEMV_OK;
}

qgemv_status qgemv_tensor_write(qgemv_tensor *t, const void *host, size_t bytes) {
  qgemv_status s = check_copy(t, host, bytes, "qgemv_tensor_write");
  if (s != QGEMV_OK) return s;
  s = t->ctx->be->copy_in(t->ctx->state, t->ptr, host, bytes);
  return s == QGEMV_OK ? s : qg_backend_fail(t->ctx->be, s, "qgemv_tensor_write");
}

qgemv_status qgemv_tensor_read(const qgemv_tensor *t, void *host, size_t bytes) {
  qgemv_status s = check_copy(t, host, bytes, "qgemv_tensor_read");
  if (s != QGEMV_OK) return s;
  s = t->ctx->be->copy_out(t->ctx->state, host, t->ptr, bytes);
  return s == QGEMV_OK ? s : qg_backend_fail(t->ctx->be, s, "qgemv_tensor_read");
}

qgemv_status qgemv_tensor_ptr(const qgemv_tensor *t, void **backend_ptr) {
  qgemv_status s = qg_check_tensor(t, NULL, "qgemv_tensor_ptr: tensor");
  if (s != QGEMV_OK) return s;
  if (backend_ptr == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_tensor_ptr: backend_ptr is NULL");
  *backend_ptr = t->ptr;
  return QGEMV_OK;
}

void qgemv_tensor_free(qgemv_tensor *t) {
  if (t == NULL || t->magic != QG_MAGIC_TENSOR) return;
  if (t->owned) t->ctx->be->free(t->ctx->state, t->ptr);
  qg_list_remove(&t->node);
  t->magic = 0;
  free(t);
}
