/* Contexts: opening a backend, diagnostics, streams, sync, close. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "objects.h"
#include "registry.h"
#include "spec.h"

void qg_list_add(qgemv_ctx *ctx, qg_node *node) {
  node->next = ctx->live.next;
  node->prev = &ctx->live;
  ctx->live.next->prev = node;
  ctx->live.next = node;
}

void qg_list_remove(qg_node *node) {
  node->prev->next = node->next;
  node->next->prev = node->prev;
  node->prev = node->next = node;
}

qgemv_status qg_backend_fail(const qg_backend *be, qgemv_status s, const char *prefix) {
  return qg_fail_detail(s, prefix, be->error_detail ? be->error_detail() : NULL);
}

qgemv_status qg_check_ctx(const qgemv_ctx *ctx, const char *what) {
  if (ctx == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: the context is NULL", what);
  if (ctx->magic != QG_MAGIC_CTX)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: the context handle is not a live qgemv_ctx", what);
  return QGEMV_OK;
}

/* Counts devices of a loaded backend; NO_DEVICE with its reason when 0. */
static qgemv_status count_devices(const qg_backend *be, int *devices) {
  int n = be->device_count();
  if (n <= 0) return qg_backend_fail(be, QGEMV_ERR_NO_DEVICE, be->name);
  *devices = n;
  return QGEMV_OK;
}

qgemv_status qgemv_backend_probe(const char *name, int *devices) {
  if (name == NULL || devices == NULL)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_backend_probe: %s is NULL", name ? "devices" : "name");
  const qg_backend *be;
  qgemv_status s = qg_backend_get(name, &be);
  if (s != QGEMV_OK) return s;
  return count_devices(be, devices);
}

static qgemv_status open_backend(const qg_backend *be, int device, qgemv_ctx **out) {
  int devices = 0;
  qgemv_status s = count_devices(be, &devices);
  if (s != QGEMV_OK) return s;
  if (device >= devices)
    return qg_fail(QGEMV_ERR_NO_DEVICE, "%s device %d does not exist: this machine has %d (0..%d)", be->name,
                   device, devices, devices - 1);
  qgemv_ctx *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return qg_fail(QGEMV_ERR_NO_MEMORY, "qgemv_open: out of host memory");
  int opened = device;
  s = be->open(device, &ctx->state, &opened);
  if (s != QGEMV_OK) {
    free(ctx);
    return qg_backend_fail(be, s, be->name);
  }
  ctx->magic = QG_MAGIC_CTX;
  ctx->be = be;
  ctx->device = opened;
  ctx->live.next = ctx->live.prev = &ctx->live;
  *out = ctx;
  return QGEMV_OK;
}

/* A failure for a backend the caller did not name: say where it came from. */
static qgemv_status from_env(qgemv_status s) {
  char why[1024];
  snprintf(why, sizeof why, "%s", qgemv_last_error());
  return qg_fail(s, "QGEMV_BACKEND: %s", why);
}

qgemv_status qgemv_open(const char *spec, qgemv_ctx **out) {
  if (out == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_open: out is NULL");
  *out = NULL;
  qg_spec sp;
  qgemv_status s = qg_spec_parse(spec, &sp);
  if (s != QGEMV_OK) return s;
  /* A device index given with auto names a device of the module it
   * chooses; the CPU has only device 0. */
  if (strcmp(sp.name, "auto") == 0) {
    const qg_backend *be = qg_backend_auto();
    return open_backend(be, be == qg_cpu_backend() ? 0 : sp.device, out);
  }
  const qg_backend *be;
  s = qg_backend_get(sp.name, &be);
  if (s != QGEMV_OK) return sp.from_env ? from_env(s) : s;
  return open_backend(be, sp.device, out);
}

void qgemv_close(qgemv_ctx *ctx) {
  if (ctx == NULL || ctx->magic != QG_MAGIC_CTX) return;
  ctx->be->sync(ctx->state);
  while (ctx->live.next != &ctx->live) {
    qg_node *node = ctx->live.next;
    _Static_assert(offsetof(struct qgemv_tensor, node) == offsetof(struct qgemv_weight, node),
                   "the list node must sit at one offset in tensors and weights");
    uint32_t magic = *(const uint32_t *)((const char *)node - offsetof(struct qgemv_tensor, node));
    if (magic == QG_MAGIC_TENSOR)
      qgemv_tensor_free((qgemv_tensor *)((char *)node - offsetof(struct qgemv_tensor, node)));
    else
      qgemv_weight_free((qgemv_weight *)((char *)node - offsetof(struct qgemv_weight, node)));
  }
  ctx->be->close(ctx->state);
  ctx->magic = 0;
  free(ctx);
}

const char *qgemv_ctx_backend(const qgemv_ctx *ctx) {
  if (qg_check_ctx(ctx, "qgemv_ctx_backend") != QGEMV_OK) return NULL;
  return ctx->be->name;
}

int qgemv_ctx_device(const qgemv_ctx *ctx) {
  if (qg_check_ctx(ctx, "qgemv_ctx_device") != QGEMV_OK) return -1;
  return ctx->device;
}

qgemv_status qgemv_ctx_info(const qgemv_ctx *ctx, qgemv_device_info *info) {
  qgemv_status s = qg_check_ctx(ctx, "qgemv_ctx_info");
  if (s != QGEMV_OK) return s;
  if (info == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_ctx_info: info is NULL");
  memset(info, 0, sizeof *info);
  snprintf(info->backend, sizeof info->backend, "%s", ctx->be->name);
  info->index = ctx->device;
  s = ctx->be->device_info(ctx->state, info);
  return s == QGEMV_OK ? s : qg_backend_fail(ctx->be, s, "qgemv_ctx_info");
}

qgemv_status qgemv_set_stream(qgemv_ctx *ctx, void *native_stream) {
  qgemv_status s = qg_check_ctx(ctx, "qgemv_set_stream");
  if (s != QGEMV_OK) return s;
  s = ctx->be->set_stream(ctx->state, native_stream);
  return s == QGEMV_OK ? s : qg_backend_fail(ctx->be, s, "qgemv_set_stream");
}

qgemv_status qgemv_sync(qgemv_ctx *ctx) {
  qgemv_status s = qg_check_ctx(ctx, "qgemv_sync");
  if (s != QGEMV_OK) return s;
  s = ctx->be->sync(ctx->state);
  return s == QGEMV_OK ? s : qg_backend_fail(ctx->be, s, "qgemv_sync");
}

qgemv_status qgemv_measure_read_bandwidth(qgemv_ctx *ctx, size_t bytes, double *gbs) {
  qgemv_status s = qg_check_ctx(ctx, "qgemv_measure_read_bandwidth");
  if (s != QGEMV_OK) return s;
  if (gbs == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_measure_read_bandwidth: gbs is NULL");
  if (bytes == 0) {
    qgemv_device_info info = {0};
    ctx->be->device_info(ctx->state, &info);
    /* 8x the last-level cache, at least 1 GiB: rereads cannot hit in cache */
    bytes = (size_t)(info.llc_bytes * 8 > (1ull << 30) ? info.llc_bytes * 8 : (1ull << 30));
  }
  if (bytes < 4096) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_measure_read_bandwidth: bytes=%zu is too small", bytes);
  s = ctx->be->read_bandwidth(ctx->state, bytes, gbs);
  return s == QGEMV_OK ? s : qg_backend_fail(ctx->be, s, "qgemv_measure_read_bandwidth");
}

const char *qgemv_ctx_dense_library(const qgemv_ctx *ctx) {
  if (qg_check_ctx(ctx, "qgemv_ctx_dense_library") != QGEMV_OK) return NULL;
  if (ctx->be->dense_bf16_time == NULL || ctx->be->dense_library == NULL) {
    qg_fail(QGEMV_ERR_UNSUPPORTED, "the %s backend has no dense vendor GEMV to compare with", ctx->be->name);
    return NULL;
  }
  return ctx->be->dense_library;
}

qgemv_status qgemv_measure_dense_bf16(qgemv_ctx *ctx, int64_t n, int64_t k, int64_t m, int copies, double min_time,
                                      double *seconds) {
  qgemv_status s = qg_check_ctx(ctx, "qgemv_measure_dense_bf16");
  if (s != QGEMV_OK) return s;
  if (seconds == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_measure_dense_bf16: seconds is NULL");
  if (n <= 0 || k <= 0 || m <= 0 || copies <= 0 || !(min_time >= 0.0))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_measure_dense_bf16: n, k, m and copies must be > 0 and min_time >= 0");
  if (ctx->be->dense_bf16_time == NULL)
    return qg_fail(QGEMV_ERR_UNSUPPORTED, "the %s backend has no dense vendor GEMV to compare with", ctx->be->name);
  s = ctx->be->dense_bf16_time(ctx->state, n, k, m, copies, min_time, seconds);
  return s == QGEMV_OK ? s : qg_backend_fail(ctx->be, s, "qgemv_measure_dense_bf16");
}
