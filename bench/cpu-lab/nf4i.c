/* NF4 in f32 on AVX-512, rows interleaved by 16 (lab).
 *
 * Layout (repacked at upload, same bytes as packed): per group of 16 rows
 * and block b: the 16 rows' f32 scales (64 bytes), then 8 vectors of 64
 * bytes; in vector v, the dword of lane r holds 8 codes of row r, nibble t
 * = element 8v + t. vpermps reads only bits 3:0 of each index, so
 * (vector >> 4t) looks up element 8v + t of all 16 rows in the 16-entry f32
 * table: per 16 weights one shift, one vpermps and one FMA with x[j]
 * broadcast from memory.
 *
 * Arithmetic of y[i] (fixed, whatever m or the rows processed together):
 * per block, NCH partial sums s_h = fma chains over the elements j with
 * j % NCH == h in order; s = s_0 + s_1 (+ ...); acc (f64) += s * scale in
 * f64. y = (float)acc. */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define T __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define AI static inline __attribute__((always_inline)) T

#ifndef NCH
#define NCH 4
#endif
#ifndef NGRP
#define NGRP 1
#endif
#ifndef NF4_ACC64
#define NF4_ACC64 1
#endif

size_t nf4i_bytes(int64_t n, int64_t k) { return (size_t)((n + 15) / 16) * (size_t)(k / 64) * 576u; }

void nf4i_repack(const uint8_t *packed, const float *scales, int64_t n, int64_t k, uint8_t *out) {
  const int64_t nb = k / 64;
  for (int64_t grp = 0; grp < (n + 15) / 16; grp++)
    for (int64_t b = 0; b < nb; b++) {
      uint8_t *o = out + ((size_t)grp * (size_t)nb + (size_t)b) * 576u;
      memset(o, 0, 576);
      for (int r = 0; r < 16; r++) {
        int64_t row = grp * 16 + r;
        if (row >= n) continue;
        memcpy(o + 4 * r, &scales[(size_t)row * (size_t)nb + (size_t)b], 4);
        const uint8_t *src = packed + (size_t)row * (size_t)(k / 2) + (size_t)b * 32u;
        for (int j = 0; j < 64; j++) {
          int c = (src[j / 2] >> (4 * (j % 2))) & 15;
          int v = j / 8, t = j % 8;
          o[64 + 64 * v + 4 * r + t / 2] |= (uint8_t)(c << (4 * (t % 2)));
        }
      }
    }
}

typedef struct acc16 {
#if NF4_ACC64
  __m512d a[2];
#else
  __m512 a;
#endif
} acc16;

AI void acc_zero(acc16 *a) {
#if NF4_ACC64
  a->a[0] = a->a[1] = _mm512_setzero_pd();
#else
  a->a = _mm512_setzero_ps();
#endif
}

AI void acc_fold(acc16 *a, __m512 s, const float *scales) {
  __m512 sc = _mm512_loadu_ps(scales);
#if NF4_ACC64
  __m512d s0 = _mm512_cvtps_pd(_mm512_castps512_ps256(s));
  __m512d s1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
  __m512d c0 = _mm512_cvtps_pd(_mm512_castps512_ps256(sc));
  __m512d c1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sc), 1)));
  a->a[0] = _mm512_fmadd_pd(s0, c0, a->a[0]);
  a->a[1] = _mm512_fmadd_pd(s1, c1, a->a[1]);
#else
  a->a = _mm512_fmadd_ps(s, sc, a->a);
#endif
}

AI void acc_store(float *y, const acc16 *a) {
#if NF4_ACC64
  _mm256_storeu_ps(y, _mm512_cvtpd_ps(a->a[0]));
  _mm256_storeu_ps(y + 8, _mm512_cvtpd_ps(a->a[1]));
#else
  _mm512_storeu_ps(y, a->a);
#endif
}

/* m = 1: ng groups at once (independent FMA chains), x broadcast shared. */
AI void rows1(const uint8_t *w, int64_t k, const float *x, float *y, int64_t grp, const int ng) {
  const int64_t nb = k / 64;
  const __m512 lut = _mm512_loadu_ps(qgemv_nf4_table());
  const size_t gstride = (size_t)nb * 576u;
  acc16 acc[NGRP];
  for (int q = 0; q < ng; q++) acc_zero(&acc[q]);
  const uint8_t *p = w + (size_t)grp * gstride;
  for (int64_t b = 0; b < nb; b++, p += 576) {
#ifdef NF4_PF
    for (int o = 0; o < 576; o += 64) _mm_prefetch((const char *)p + NF4_PF + o, _MM_HINT_T0);
#endif
    __m512 s[NGRP][NCH];
    for (int q = 0; q < ng; q++)
      for (int h = 0; h < NCH; h++) s[q][h] = _mm512_setzero_ps();
    const float *xb = x + b * 64;
#pragma GCC unroll 8
    for (int v = 0; v < 8; v++) {
      __m512i c[NGRP];
#pragma GCC unroll 4
      for (int q = 0; q < ng; q++) c[q] = _mm512_loadu_si512(p + (size_t)q * gstride + 64 + 64 * v);
#pragma GCC unroll 8
      for (int t = 0; t < 8; t++) {
        __m512 xv = _mm512_set1_ps(xb[8 * v + t]);
        const int h = (8 * v + t) % NCH;
#pragma GCC unroll 4
        for (int q = 0; q < ng; q++) {
          __m512 wv = _mm512_permutexvar_ps(t ? _mm512_srli_epi32(c[q], 4 * t) : c[q], lut);
          s[q][h] = _mm512_fmadd_ps(wv, xv, s[q][h]);
        }
      }
    }
#pragma GCC unroll 4
    for (int q = 0; q < ng; q++) {
      __m512 sum = s[q][0];
      for (int h = 1; h < NCH; h++) sum = _mm512_add_ps(sum, s[q][h]);
      acc_fold(&acc[q], sum, (const float *)(p + (size_t)q * gstride));
    }
  }
  for (int q = 0; q < ng; q++) acc_store(y + (grp + q) * 16, &acc[q]);
}

/* m > 1: one group, tt activation rows share each decoded weight vector. */
AI void rows_batch_tt(const uint8_t *w, int64_t k, int64_t n, const float *x, float *y, int64_t grp, const int tt) {
  const int64_t nb = k / 64;
  const __m512 lut = _mm512_loadu_ps(qgemv_nf4_table());
  acc16 acc[8];
  for (int t = 0; t < tt; t++) acc_zero(&acc[t]);
  const uint8_t *p = w + (size_t)grp * (size_t)nb * 576u;
  for (int64_t b = 0; b < nb; b++, p += 576) {
    __m512 s[8][NCH];
#pragma GCC unroll 8
    for (int t = 0; t < tt; t++)
#pragma GCC unroll 4
      for (int h = 0; h < NCH; h++) s[t][h] = _mm512_setzero_ps();
    const float *xb = x + b * 64;
#pragma GCC unroll 2
    for (int v = 0; v < 8; v++) {
      __m512i c = _mm512_loadu_si512(p + 64 + 64 * v);
#pragma GCC unroll 8
      for (int e = 0; e < 8; e++) {
        __m512 wv = _mm512_permutexvar_ps(e ? _mm512_srli_epi32(c, 4 * e) : c, lut);
        const int h = (8 * v + e) % NCH;
#pragma GCC unroll 8
        for (int t = 0; t < tt; t++) s[t][h] = _mm512_fmadd_ps(wv, _mm512_set1_ps(xb[(size_t)t * (size_t)k + (size_t)(8 * v + e)]), s[t][h]);
      }
    }
#pragma GCC unroll 8
    for (int t = 0; t < tt; t++) {
      __m512 sum = s[t][0];
      for (int h = 1; h < NCH; h++) sum = _mm512_add_ps(sum, s[t][h]);
      acc_fold(&acc[t], sum, (const float *)p);
    }
  }
  for (int t = 0; t < tt; t++) acc_store(y + (size_t)t * (size_t)n + (size_t)grp * 16, &acc[t]);
}

#ifndef NF4_TT
#define NF4_TT 4
#endif
AI void rows_batch(const uint8_t *w, int64_t k, int64_t n, const float *x, int64_t m, float *y, int64_t grp) {
  int64_t t = 0;
  for (; t + NF4_TT <= m; t += NF4_TT) rows_batch_tt(w, k, n, x + t * k, y + t * n, grp, NF4_TT);
  for (; t + 2 <= m; t += 2) rows_batch_tt(w, k, n, x + t * k, y + t * n, grp, 2);
  for (; t < m; t++) rows_batch_tt(w, k, n, x + t * k, y + t * n, grp, 1);
}

T void nf4i_matvec(const uint8_t *w, int64_t n, int64_t k, const float *x, int64_t m, float *y, int threads) {
  const int64_t groups = n / 16;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t g0 = groups * t / nt, g1 = groups * (t + 1) / nt;
    if (m == 1) {
      int64_t grp = g0;
      for (; grp + NGRP <= g1; grp += NGRP) rows1(w, k, x, y, grp, NGRP);
      for (; grp < g1; grp++) rows1(w, k, x, y, grp, 1);
    } else {
      for (int64_t grp = g0; grp < g1; grp++) rows_batch(w, k, n, x, m, y, grp);
    }
  }
}
