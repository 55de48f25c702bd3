/* QGEMV_CUDA_PLAN: a tuning override of the matvec plan (matvec_plan.h),
 * read once when a context opens. It exists to sweep geometries with the
 * backend's own kernels on a new device (bench/plan-sweep.sh); the plan's
 * own choice is what the library ships. Plain C: parsed in C, read by the
 * C++ plan. */
#ifndef QGC_PLAN_TUNE_H
#define QGC_PLAN_TUNE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { QGC_B_CTA = 1, QGC_B_WARP = 2 };
#define QGC_TUNE_MAX_WARPS 28 /* qgc::kWideWarps */
enum { QGC_X_DIRECT = 1, QGC_X_INT = 2, QGC_X_AUTO = 3 };
enum { QGC_NORM_DG = 1, QGC_NORM_B2 = 2 };

/* Each field 0 where the plan chooses, so a zeroed struct is no override. */
typedef struct qgc_plan_tune {
  int ks;     /* k-split: 1, 2, 4, 8, 16 (changes the summation order, so the bits) */
  int t;      /* tiles per warp: 1, 2 */
  int b;      /* activations (B) per CTA or per warp: QGC_B_CTA, QGC_B_WARP */
  int w;      /* warps per CTA: 1 to QGC_TUNE_MAX_WARPS, taken down to a
               * multiple of the k-split (each row group takes one warp per
               * slice); more than 16 only for one tile per warp, B per CTA
               * and NF4 bf16 x or Q2_0 direct in one column group (the
               * wide kernel, kernels_matvec.cuh) */
  int phases; /* B per CTA staged in this many phases (1 = all of k) */
  int x;      /* Q2_0 with bf16 x, no norm: bf16 mma (QGC_X_DIRECT), the
               * integer mma on int8 digits of x (QGC_X_INT) wherever it
               * fits, or where the weight has at least 3.5 tiles of 16 rows
               * per SM (QGC_X_AUTO: where it was faster at m = 1 on the
               * H200); else ignored */
  int st;     /* threads a CTA of the share form (share_layout.h): 256 or
               * 512 (changes the summation order, so the bits) */
  int norm;   /* Q2_0's norm with bf16 x and bf16 gamma on the tiles:
               * gamma in A (QGC_NORM_DG) or x gamma as two bf16 terms in B
               * (QGC_NORM_B2), for every weight (the bits differ); else
               * the plan's rule (matvec_plan.h, qgc_norm_b2) */
} qgc_plan_tune;

/* Parses "key=value,..." (keys ks, t, b = cta|warp, w, phases, x =
 * direct|int|auto, st, norm = dg|b2; NULL or "" is no override) into *t. On a malformed text returns false and writes
 * what is wrong, for a user, into err. */
bool qgc_plan_tune_parse(const char *text, qgc_plan_tune *t, char *err, size_t errsize);
/* The override as QGEMV_CUDA_PLAN text ("" for none), for messages. */
void qgc_plan_tune_format(const qgc_plan_tune *t, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
