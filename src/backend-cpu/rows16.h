/* AVX-512 helpers of the kernels whose 16 lanes are 16 weight rows
 * (nf4_avx512.c, q2_vnni.c): the rows' f64 accumulators and their store.
 * Accumulating the blocks in f64 is what keeps the f32 rounding of the
 * output elements to a fixed few per block, however long the row (DESIGN.md
 * section 5); it costs a few instructions per 16 rows and block. */
#ifndef QG_ROWS16_H
#define QG_ROWS16_H

#include "x86_intrin.h"

#include "cpu.h"
#include "prefetch.h"

#define QG_R16 static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))

typedef struct qg_acc16 {
  __m512d lo, hi; /* rows 0-7, rows 8-15 */
} qg_acc16;

QG_R16 void qg_acc16_zero(qg_acc16 *a) { a->lo = a->hi = _mm512_setzero_pd(); }

QG_R16 __m512d qg_lo_pd(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
QG_R16 __m512d qg_hi_pd(__m512 v) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* acc += v * scale: exact products of an f32 by a power of two or an f32,
 * one f64 rounding. */
QG_R16 void qg_acc16_fma(qg_acc16 *a, __m512 v, double scale) {
  const __m512d s = _mm512_set1_pd(scale);
  a->lo = _mm512_fmadd_pd(qg_lo_pd(v), s, a->lo);
  a->hi = _mm512_fmadd_pd(qg_hi_pd(v), s, a->hi);
}

QG_R16 void qg_acc16_fma_rows(qg_acc16 *a, __m512 v, __m512 scales) {
  a->lo = _mm512_fmadd_pd(qg_lo_pd(v), qg_lo_pd(scales), a->lo);
  a->hi = _mm512_fmadd_pd(qg_hi_pd(v), qg_hi_pd(scales), a->hi);
}

/* acc += (s0, s1) * scales, the sums already in f64. */
QG_R16 void qg_acc16_add_scaled(qg_acc16 *a, __m512d s0, __m512d s1, __m512 scales) {
  a->lo = _mm512_fmadd_pd(s0, qg_lo_pd(scales), a->lo);
  a->hi = _mm512_fmadd_pd(s1, qg_hi_pd(scales), a->hi);
}

/* y[t, i .. i + rows) = the accumulators rounded to the output dtype. */
QG_R16 void qg_acc16_store(const qg_cpu_job *job, int64_t t, int64_t i, int rows, const qg_acc16 *a) {
  float v[16];
  _mm256_storeu_ps(v, _mm512_cvtpd_ps(a->lo));
  _mm256_storeu_ps(v + 8, _mm512_cvtpd_ps(a->hi));
  for (int r = 0; r < rows; r++) qg_cpu_store(job, t, i + r, v[r]);
}

#endif
