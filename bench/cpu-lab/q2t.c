/* Q2_0 by table lookup in f32 (T-MAC style, at full precision; lab).
 *
 * For each pair of elements (2i, 2i+1) of x, a table of the 16 values
 *   T_i[a + 4b] = (a - 1) x_2i + (b - 1) x_2i+1,  a, b in 0..3
 * (one f32 rounding each: (a - 1) x is exact), built once per call. A
 * Q2_0 code nibble is exactly such an index: the packed format puts
 * element j at bits 2(j % 4) of byte j / 4, so nibble s of a row's bytes
 * holds the codes of elements 2s and 2s + 1.
 *
 * Layout (repacked, same bytes as packed): rows in groups of 16; per group
 * and block: the 16 fp16 scales (32 bytes), then g/16 vectors of 64 bytes,
 * the dword of lane r = row r's 4 packed code bytes for elements 16v ..
 * 16v + 15. vpermps reads index bits 3:0, so (vector >> 4s) looks up pair
 * s of all 16 rows in T: per 32 weights one shift, one vpermps, one add.
 *
 * Arithmetic of y[i]: per block, NCH partial sums over the pairs (pair p
 * to sum p % NCH, in order), added; acc (f64) += sum * scale in f64;
 * y = (float)acc. */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define T __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define AI static inline __attribute__((always_inline)) T

#ifndef Q2T_NCH
#define Q2T_NCH 2
#endif
#ifndef Q2T_NGRP
#define Q2T_NGRP 4
#endif

size_t q2t_bytes(int64_t n, int64_t k, int g) { return (size_t)((n + 15) / 16) * (size_t)(k / g) * (32u + 4u * (size_t)g); }

void q2t_repack(const uint8_t *packed, int64_t n, int64_t k, int g, uint8_t *out) {
  const int64_t nb = k / g;
  const size_t blk = 2u + (size_t)g / 4u, vb = 32u + 4u * (size_t)g;
  for (int64_t grp = 0; grp < (n + 15) / 16; grp++)
    for (int64_t b = 0; b < nb; b++) {
      uint8_t *o = out + ((size_t)grp * (size_t)nb + (size_t)b) * vb;
      memset(o, 0, vb);
      for (int r = 0; r < 16; r++) {
        int64_t row = grp * 16 + r;
        if (row >= n) continue;
        const uint8_t *src = packed + ((size_t)row * (size_t)nb + (size_t)b) * blk;
        memcpy(o + 2 * r, src, 2);
        for (int v = 0; v < g / 16; v++) memcpy(o + 32 + 64 * v + 4 * r, src + 2 + 4 * v, 4);
      }
    }
}

/* tables: [k/2][16] f32 for one activation row. */
T void q2t_tables(const float *x, int64_t k, float *tables) {
  const __m512 ca = _mm512_setr_ps(-1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2);
  const __m512 cb = _mm512_setr_ps(-1, -1, -1, -1, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2);
  for (int64_t i = 0; i < k / 2; i++)
    _mm512_storeu_ps(tables + 16 * i,
                     _mm512_fmadd_ps(cb, _mm512_set1_ps(x[2 * i + 1]), _mm512_mul_ps(ca, _mm512_set1_ps(x[2 * i]))));
}

AI void fold16(__m512d acc[2], __m512 s, const uint8_t *scales) {
  __m512 sc = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)scales));
  __m512d s0 = _mm512_cvtps_pd(_mm512_castps512_ps256(s));
  __m512d s1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
  __m512d c0 = _mm512_cvtps_pd(_mm512_castps512_ps256(sc));
  __m512d c1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sc), 1)));
  acc[0] = _mm512_fmadd_pd(s0, c0, acc[0]);
  acc[1] = _mm512_fmadd_pd(s1, c1, acc[1]);
}

/* m = 1: ng groups at once, each table loaded once for all of them. */
AI void rows1(const uint8_t *w, int64_t k, const float *tab, float *y, int64_t grp, const int g, const int ng) {
  const int64_t nb = k / g;
  const size_t vb = 32u + 4u * (size_t)g, gstride = (size_t)nb * vb;
  __m512d acc[Q2T_NGRP][2];
  for (int q = 0; q < ng; q++) acc[q][0] = acc[q][1] = _mm512_setzero_pd();
  const uint8_t *p = w + (size_t)grp * gstride;
  for (int64_t b = 0; b < nb; b++, p += vb) {
    __m512 s[Q2T_NGRP][Q2T_NCH];
    for (int q = 0; q < ng; q++)
      for (int h = 0; h < Q2T_NCH; h++) s[q][h] = _mm512_setzero_ps();
    const float *tb = tab + (size_t)b * (size_t)g * 8u; /* g/2 pairs of 16 */
#pragma GCC unroll 8
    for (int v = 0; v < g / 16; v++) {
      __m512i c[Q2T_NGRP];
#pragma GCC unroll 4
      for (int q = 0; q < ng; q++) c[q] = _mm512_loadu_si512(p + (size_t)q * gstride + 32 + 64 * v);
#pragma GCC unroll 8
      for (int e = 0; e < 8; e++) {
        const __m512 t = _mm512_loadu_ps(tb + 16 * (8 * v + e));
        const int h = (8 * v + e) % Q2T_NCH;
#pragma GCC unroll 4
        for (int q = 0; q < ng; q++)
          s[q][h] = _mm512_add_ps(s[q][h], _mm512_permutexvar_ps(e ? _mm512_srli_epi32(c[q], 4 * e) : c[q], t));
      }
    }
#pragma GCC unroll 4
    for (int q = 0; q < ng; q++) {
      __m512 sum = s[q][0];
      for (int h = 1; h < Q2T_NCH; h++) sum = _mm512_add_ps(sum, s[q][h]);
      fold16(acc[q], sum, p + (size_t)q * gstride);
    }
  }
  for (int q = 0; q < ng; q++) {
    _mm256_storeu_ps(y + (grp + q) * 16, _mm512_cvtpd_ps(acc[q][0]));
    _mm256_storeu_ps(y + (grp + q) * 16 + 8, _mm512_cvtpd_ps(acc[q][1]));
  }
}

/* m > 1: one group, TT activation rows (each with its own tables) share
 * each code vector's shifts. */
#define TT 4
AI void rows_batch(const uint8_t *w, int64_t k, int64_t n, const float *tab, int64_t m, float *y, int64_t grp,
                   const int g) {
  const int64_t nb = k / g;
  const size_t vb = 32u + 4u * (size_t)g, tstride = (size_t)k * 8u;
  for (int64_t t0 = 0; t0 < m; t0 += TT) {
    const int tt = m - t0 < TT ? (int)(m - t0) : TT;
    __m512d acc[TT][2];
    for (int t = 0; t < TT; t++) acc[t][0] = acc[t][1] = _mm512_setzero_pd();
    const uint8_t *p = w + (size_t)grp * (size_t)nb * vb;
    for (int64_t b = 0; b < nb; b++, p += vb) {
      __m512 s[TT][Q2T_NCH];
      for (int t = 0; t < TT; t++)
        for (int h = 0; h < Q2T_NCH; h++) s[t][h] = _mm512_setzero_ps();
      const float *tb = tab + (size_t)t0 * tstride + (size_t)b * (size_t)g * 8u;
#pragma GCC unroll 8
      for (int v = 0; v < g / 16; v++) {
        __m512i c = _mm512_loadu_si512(p + 32 + 64 * v);
#pragma GCC unroll 8
        for (int e = 0; e < 8; e++) {
          __m512i idx = e ? _mm512_srli_epi32(c, 4 * e) : c;
          const int h = (8 * v + e) % Q2T_NCH;
#pragma GCC unroll 4
          for (int t = 0; t < TT; t++) {
            if (t >= tt) break;
            s[t][h] = _mm512_add_ps(s[t][h], _mm512_permutexvar_ps(idx, _mm512_loadu_ps(tb + (size_t)t * tstride + 16 * (8 * v + e))));
          }
        }
      }
      for (int t = 0; t < tt; t++) {
        __m512 sum = s[t][0];
        for (int h = 1; h < Q2T_NCH; h++) sum = _mm512_add_ps(sum, s[t][h]);
        fold16(acc[t], sum, p);
      }
    }
    for (int t = 0; t < tt; t++) {
      float *yo = y + (size_t)(t0 + t) * (size_t)n + (size_t)grp * 16;
      _mm256_storeu_ps(yo, _mm512_cvtpd_ps(acc[t][0]));
      _mm256_storeu_ps(yo + 8, _mm512_cvtpd_ps(acc[t][1]));
    }
  }
}

T void q2t_matvec(const uint8_t *w, int64_t n, int64_t k, int g, const float *tables, int64_t m, float *y, int threads) {
  const int64_t groups = n / 16;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t g0 = groups * t / nt, g1 = groups * (t + 1) / nt;
    if (m == 1) {
      int64_t grp = g0;
      if (g == 128) {
        for (; grp + Q2T_NGRP <= g1; grp += Q2T_NGRP) rows1(w, k, tables, y, grp, 128, Q2T_NGRP);
        for (; grp < g1; grp++) rows1(w, k, tables, y, grp, 128, 1);
      } else {
        for (; grp + Q2T_NGRP <= g1; grp += Q2T_NGRP) rows1(w, k, tables, y, grp, 64, Q2T_NGRP);
        for (; grp < g1; grp++) rows1(w, k, tables, y, grp, 64, 1);
      }
    } else {
      for (int64_t grp = g0; grp < g1; grp++) {
        if (g == 128)
          rows_batch(w, k, n, tables, m, y, grp, 128);
        else
          rows_batch(w, k, n, tables, m, y, grp, 64);
      }
    }
  }
}
