/* qgemv verify: one operation combination on one context against the
 * oracle (qgemv_reference_matvec), under DESIGN.md section 5's bound. */
#ifndef QGEMV_TOOL_VERIFY_H
#define QGEMV_TOOL_VERIFY_H

#include <stdbool.h>

#include "tool.h"

typedef struct combo {
  qgemv_format_info format; /* from the library's list */
  qgemv_dtype x, y;         /* gamma takes x's dtype */
  bool norm;                /* fused RMSNorm */
} combo;

/* Every listed format x x dtype x y dtype x RMSNorm: a malloc'ed array of
 * *count combinations; NULL when out of memory. */
combo *combos_all(int *count);

typedef struct combo_result {
  double worst;        /* max |y - ref| / allowed; INFINITY on NaN, an
                          unwritten element or a failed call */
  int64_t n, k, m;     /* the case that gave `worst` */
  dist_kind dist;
  char error[256];     /* a failed call's message, else "" */
} combo_result;

/* Worst |y - ref| / allowed over count outputs y (of dtype y) against the
 * oracle's ref and bound; INFINITY for a NaN the oracle has not. */
double verify_worst_ratio(qgemv_dtype y, const void *yh, const double *ref, const double *bound, size_t count);

/* qgemv verify --model FILE (verify_model.c): every weight of the file on
 * each target against the oracle, and the file's bytes against
 * qgemv_quantize where it holds the f32 source (NAME.f32). */
struct target;
int verify_model(struct target *ts, int nt, const char *path, const char *json_path, uint64_t seed);

/* Runs c on every verify shape and row count m, on data from r. */
void verify_combo(qgemv_ctx *ctx, const combo *c, rng *r, combo_result *out);

#endif
