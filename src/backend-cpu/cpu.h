/* The CPU backend's internals: weight layout, ISA levels, kernel table. */
#ifndef QG_CPU_H
#define QG_CPU_H

#include <stdbool.h>

#include "../core/backend.h"

/* Resident weight: the packed format as uploaded (a level may add a
 * repacked copy later; resident bytes must stay within 1.1x of packed). */
typedef struct qg_cpu_weight {
  qgemv_weight_desc desc; /* points at data/scales below */
  void *data;
  float *scales;
  size_t bytes;
} qg_cpu_weight;

/* One matvec as the kernels see it: activations already normalized. */
typedef struct qg_cpu_job {
  const qg_cpu_weight *w;
  int64_t m;
  const float *xn;  /* [m, k] f32 (SIMD levels) */
  const double *xd; /* [m, k] double (ref level) */
  void *y;          /* [m, n] */
  qgemv_dtype y_dtype;
} qg_cpu_job;

/* Computes output rows [row0, row1) for all m activation rows. The order of
 * arithmetic for one output element must not depend on m, row0 or row1, so
 * that results are bit-identical for any batch and thread count. */
typedef void (*qg_cpu_rows_fn)(const qg_cpu_job *job, int64_t row0, int64_t row1);

typedef struct qg_cpu_level {
  const char *name;        /* ref, scalar, avx2, avx512, neon */
  bool wants_double;       /* the ref level works on xd, the others on xn */
  bool (*available)(void); /* CPU and OS support it */
  qg_cpu_rows_fn nf4_rows;
  qg_cpu_rows_fn q2_rows;
} qg_cpu_level;

/* Levels compiled in, from the oracle to the fastest. */
extern const qg_cpu_level *const qg_cpu_levels[];
extern const int qg_cpu_level_count;

/* The level named by $QGEMV_CPU_ISA, else the best available. */
qgemv_status qg_cpu_pick_level(const qg_cpu_level **out);

/* Writes y[r, i] in the job's dtype (bf16: round to nearest even). */
static inline void qg_cpu_store(const qg_cpu_job *job, int64_t r, int64_t i, float v) {
  size_t at = (size_t)r * (size_t)job->w->desc.n + (size_t)i;
  if (job->y_dtype == QGEMV_F32)
    ((float *)job->y)[at] = v;
  else
    ((uint16_t *)job->y)[at] = qgemv_f32_to_bf16(v);
}

/* The backend's own thread-local failure message (error_detail). */
qgemv_status qg_cpu_fail(qgemv_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
