/*
 * NF4 in f32 with AVX-512, the 16 lanes being 16 weight rows (the avx512
 * and avx512vnni levels). Weights in groups of 16 rows (cpu_interleave.h),
 * activations f32 in natural order.
 *
 * Per 16 rows and element: one shift (vpermps reads index bits 3:0, so
 * code vector >> 4t selects nibble t of every lane), one vpermps into the
 * 16 exact f32 table values, one FMA with x_j broadcast from memory. Per
 * block, four partial sums (elements j % 4 == h to sum h, in order); their
 * sum (s0 + s1) + (s2 + s3) times the f32 scale is added in f64 (the
 * product exact, one rounding); y = (float)acc. Those are the whole
 * arithmetic of an output element, the same whatever m or the thread's
 * rows. Measured with the weight in L2: 0.11 cycles per weight at m = 1,
 * 0.069 per weight and row at m = 8 (Zen 4, bench/NOTES-cpu.md). Zen 5
 * issues two FMAs per cycle at a latency of 4, so one or two activation
 * rows sum two blocks at once (8 or 16 chains rather than 4 or 8; the
 * blocks still fold in order, so the same bits): m = 1 7% faster there
 * with the weight in cache (NOTES-cpu v17).
 */
#if defined(__x86_64__)
#include "x86_intrin.h"

#include "../core/layouts.h"
#include "cpu.h"
#include "cpu_interleave.h"
#include "rows16.h"

#define QG_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#define AI static inline __attribute__((always_inline)) QG_TARGET

/* Activation rows sharing each decoded weight vector (4 x 4 partial sums
 * fill 16 registers). */
#define TT 4

/* The partial sums s[q][u][h] of blocks p + q vb (q < nq) for activation
 * rows u < tt, their x at xb + 64 q + u k. Two blocks at once where one or
 * two rows share the codes: a block's sums are its own, so interleaving
 * two blocks gives the FMAs 8 or 16 independent chains instead of 4 or 8
 * (latency 4 against 2 per cycle on Zen 5; the same bits). */
AI void block_sums(const uint8_t *p, size_t vb, int rows, __mmask16 lanes, const float *xb, int64_t k, const int tt,
                   const int nq, __m512 s[2][TT][4]) {
  const __m512 lut = _mm512_loadu_ps(qg_nf4_lut);
#pragma GCC unroll 2
  for (int q = 0; q < nq; q++)
#pragma GCC unroll 4
    for (int u = 0; u < tt; u++)
#pragma GCC unroll 4
      for (int h = 0; h < 4; h++) s[q][u][h] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int v = 0; v < 8; v++) {
    __m512i c[2];
#pragma GCC unroll 2
    for (int q = 0; q < nq; q++) c[q] = _mm512_maskz_loadu_epi32(lanes, p + (size_t)q * vb + 4 * rows + 4 * rows * v);
#pragma GCC unroll 8
    for (int e = 0; e < 8; e++)
#pragma GCC unroll 2
      for (int q = 0; q < nq; q++) {
        __m512 w = _mm512_permutexvar_ps(e ? _mm512_srli_epi32(c[q], 4 * e) : c[q], lut);
#pragma GCC unroll 4
        for (int u = 0; u < tt; u++)
          s[q][u][e % 4] = _mm512_fmadd_ps(w, _mm512_set1_ps(xb[64 * q + (size_t)u * (size_t)k + (size_t)(8 * v + e)]),
                                           s[q][u][e % 4]);
      }
  }
}

/* acc[u] += ((s0 + s1) + (s2 + s3)) * the block's scales (at p). */
AI void fold(qg_acc16 *acc, __m512 s[TT][4], const uint8_t *p, __mmask16 lanes, const int tt) {
  const __m512 sc = _mm512_maskz_loadu_ps(lanes, p);
#pragma GCC unroll 4
  for (int u = 0; u < tt; u++)
    qg_acc16_fma_rows(&acc[u], _mm512_add_ps(_mm512_add_ps(s[u][0], s[u][1]), _mm512_add_ps(s[u][2], s[u][3])), sc);
}

/* Output rows [i, i + rows) for activation rows [t, t + tt). */
AI void group(const qg_cpu_job *job, int64_t i, int rows, int64_t t, const int tt) {
  const qgemv_weight_desc *d = &job->w->desc;
  const int64_t k = d->k, nb = k / 64;
  const size_t vb = (size_t)rows * QG_INTERLEAVE_NF4_BLOCK;
  const __mmask16 lanes = (__mmask16)((1u << rows) - 1u);
  const int nq = tt <= 2 ? 2 : 1; /* blocks at once */
  const uint8_t *p = (const uint8_t *)d->data + (size_t)i * (size_t)nb * QG_INTERLEAVE_NF4_BLOCK;
  const float *x = job->xn + (size_t)t * (size_t)k;
  qg_acc16 acc[TT];
  for (int u = 0; u < tt; u++) qg_acc16_zero(&acc[u]);
  for (int64_t b = 0; b < nb;) {
    __m512 s[2][TT][4];
    if (nq == 2 && nb - b >= 2) { /* the two blocks folded in order */
      qg_prefetch_ahead(p, 2 * vb);
      block_sums(p, vb, rows, lanes, x + b * 64, k, tt, 2, s);
      fold(acc, s[0], p, lanes, tt);
      fold(acc, s[1], p + vb, lanes, tt);
      b += 2, p += 2 * vb;
    } else {
      qg_prefetch_ahead(p, vb);
      block_sums(p, vb, rows, lanes, x + b * 64, k, tt, 1, s);
      fold(acc, s[0], p, lanes, tt);
      b += 1, p += vb;
    }
  }
  for (int u = 0; u < tt; u++) qg_acc16_store(job, t + u, i, rows, &acc[u]);
}

QG_TARGET void qg_nf4_avx512_rows(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  for (int64_t i = row0; i < row1; i += 16) {
    const int rows = row1 - i < 16 ? (int)(row1 - i) : 16;
    int64_t t = 0;
    for (; t + TT <= job->m; t += TT) group(job, i, rows, t, TT);
    for (; t + 2 <= job->m; t += 2) group(job, i, rows, t, 2);
    for (; t < job->m; t++) group(job, i, rows, t, 1);
  }
}

#else
typedef int qg_nf4_avx512_absent; /* not x86-64 */
#endif
