/* The structs behind the public handles. */
#ifndef QG_OBJECTS_H
#define QG_OBJECTS_H

#include <stdbool.h>

#include "backend.h"

/* Magic numbers catch a handle of the wrong kind or one already freed. */
enum { QG_MAGIC_CTX = 0x51474358, QG_MAGIC_TENSOR = 0x51475454, QG_MAGIC_WEIGHT = 0x51475757 };

/* Every weight and tensor is on its context's list, so that closing the
 * context frees what the caller left behind. */
typedef struct qg_node {
  struct qg_node *prev, *next;
} qg_node;

struct qgemv_ctx {
  uint32_t magic;
  const qg_backend *be;
  void *state;
  int device;
  qg_node live; /* sentinel of a circular list */
};

struct qgemv_tensor {
  uint32_t magic;
  qg_node node;
  qgemv_ctx *ctx;
  qgemv_dtype dtype;
  int64_t rows, cols;
  size_t bytes;
  void *ptr;
  bool owned;
};

struct qgemv_weight {
  uint32_t magic;
  qg_node node;
  qgemv_ctx *ctx;
  qg_layout_id layout_id;
  int64_t n, k;
  void *layout;
  size_t resident_bytes;
};

void qg_list_add(qgemv_ctx *ctx, qg_node *node);
void qg_list_remove(qg_node *node);

/* Validity of handles; on failure the message names `what`. */
qgemv_status qg_check_ctx(const qgemv_ctx *ctx, const char *what);
qgemv_status qg_check_tensor(const qgemv_tensor *t, const qgemv_ctx *owner, const char *what);
qgemv_status qg_check_weight(const qgemv_weight *w, const qgemv_ctx *owner, const char *what);
/* Status s with the backend's own detail behind `prefix`. */
qgemv_status qg_backend_fail(const qg_backend *be, qgemv_status s, const char *prefix);

static inline size_t qg_dtype_size(qgemv_dtype t) { return t == QGEMV_F32 ? 4u : 2u; }
static inline bool qg_dtype_valid(qgemv_dtype t) { return t == QGEMV_F32 || t == QGEMV_BF16; }

#endif
