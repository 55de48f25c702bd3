/*
 * Q2_0 by integer dot products with AVX-512 VNNI (the avx512vnni level):
 * the kernel is q2_vnni_sums.h's, with the digits in the VNNI layout; and
 * the AVX-512 term of the activation quantizer, for this level and, with
 * the digits plane-major, the avx512amx level.
 */
#if defined(__x86_64__)
#include "x86_intrin.h"
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "q2_vnni_sums.h"

QG_TARGET void qg_q2_vnni_rows_g64(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  rows_g(job, row0, row1, 64, false);
}
QG_TARGET void qg_q2_vnni_rows_g128(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  rows_g(job, row0, row1, 128, false);
}

/* The AVX-512 term of the activation quantizer (cpu_xfix.h): the same
 * digits, scales and sums as qg_xfix_term_portable, 15x faster; pm: the
 * digits plane-major (xq4). */
AI double xfix512(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t, const bool pm) {
  const __m512 absmask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  const __m512i expmask = _mm512_set1_epi32(0x7f800000);
  __m512 mx = _mm512_setzero_ps();
  __mmask16 bad = 0;
  for (int v = 0; v < g / 16; v++) {
    __m512 a = _mm512_loadu_ps(res + 16 * v);
    bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(a), expmask), expmask);
    mx = _mm512_max_ps(mx, _mm512_and_ps(a, absmask));
  }
  if (bad) return -1.0;
  float m = _mm512_reduce_max_ps(mx);
  int e = 0;
  if (m > 0.0f) {
    frexpf(m, &e); /* m < 2^e */
    e -= bits;     /* |q| <= 2^bits: three digits or one (cpu_xfix.h) */
  }
  t->scale = ldexp(1.0, e);
  /* x 2^-e by vscalefps: exact, |x 2^-e| <= 2^bits (a value that underflows
   * rounds to 0 either way); vcvtps2dq rounds to nearest even. */
  const __m512 down = _mm512_set1_ps((float)-e), up = _mm512_set1_ps((float)e);
  __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0;
  __m512d p2 = _mm512_setzero_pd();
  for (int v = 0; v < g / 16; v++) {
    __m512 a = _mm512_loadu_ps(res + 16 * v), sc = _mm512_scalef_ps(a, down);
    __m512i q = _mm512_cvtps_epi32(sc);
    /* (x 2^-e - q) 2^e where q != 0, as the portable term (q 2^e alone
     * overflows next to 2^128) */
    __m512 r = _mm512_mask_scalef_ps(a, _mm512_test_epi32_mask(q, q), _mm512_sub_ps(sc, _mm512_cvtepi32_ps(q)), up);
    _mm512_storeu_ps(res + 16 * v, r);
    __mmask16 nz = _mm512_cmpneq_ps_mask(r, _mm512_setzero_ps());
    if (nz) { /* a bf16 x has none in term 0 */
      __m512 xv = _mm512_loadu_ps(x + 16 * v);
      __m512d r0 = _mm512_div_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(r)), _mm512_cvtps_pd(_mm512_castps512_ps256(xv)));
      __m512d r1 = _mm512_div_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(r), 1))),
                                 _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xv), 1))));
      r0 = _mm512_maskz_mov_pd((__mmask8)nz, r0);
      r1 = _mm512_maskz_mov_pd((__mmask8)(nz >> 8), r1);
      p2 = _mm512_fmadd_pd(r0, r0, p2);
      p2 = _mm512_fmadd_pd(r1, r1, p2);
    }
    /* three signed low bytes (|q| <= 2^bits leaves the fourth 0), narrowed
     * and put in the VNNI layout by a 4 x 4 dword transpose */
    __m512i d0 = _mm512_srai_epi32(_mm512_slli_epi32(q, 24), 24);
    __m512i q1 = _mm512_srai_epi32(_mm512_sub_epi32(q, d0), 8);
    __m512i d1 = _mm512_srai_epi32(_mm512_slli_epi32(q1, 24), 24);
    __m512i d2 = _mm512_srai_epi32(_mm512_sub_epi32(q1, d1), 8); /* |d2| <= 64 */
    s0 = _mm512_add_epi32(s0, d0), s1 = _mm512_add_epi32(s1, d1), s2 = _mm512_add_epi32(s2, d2);
    __m128i b0 = _mm512_cvtepi32_epi8(d0), b1 = _mm512_cvtepi32_epi8(d1);
    __m128i b2 = _mm512_cvtepi32_epi8(d2), b3 = _mm_setzero_si128();
    if (pm) { /* each plane's 16 bytes where xq4 puts them */
      int8_t *o = out + 256 * (v >> 2) + 16 * (v & 3);
      _mm_storeu_si128((__m128i *)o, b0);
      _mm_storeu_si128((__m128i *)(o + 64), b1);
      _mm_storeu_si128((__m128i *)(o + 128), b2);
      _mm_storeu_si128((__m128i *)(o + 192), b3);
      continue;
    }
    __m128i t01l = _mm_unpacklo_epi32(b0, b1), t01h = _mm_unpackhi_epi32(b0, b1);
    __m128i t23l = _mm_unpacklo_epi32(b2, b3), t23h = _mm_unpackhi_epi32(b2, b3);
    int8_t *o = out + 64 * v;
    _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi64(t01l, t23l));
    _mm_storeu_si128((__m128i *)(o + 16), _mm_unpackhi_epi64(t01l, t23l));
    _mm_storeu_si128((__m128i *)(o + 32), _mm_unpacklo_epi64(t01h, t23h));
    _mm_storeu_si128((__m128i *)(o + 48), _mm_unpackhi_epi64(t01h, t23h));
  }
  t->dsum[0] = _mm512_reduce_add_epi32(s0);
  t->dsum[1] = _mm512_reduce_add_epi32(s1);
  t->dsum[2] = _mm512_reduce_add_epi32(s2);
  t->dsum[3] = 0;
  return _mm512_reduce_add_pd(p2);
}

QG_TARGET double qg_q2_vnni_xfix(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t) {
  return xfix512(x, res, g, bits, out, t, false);
}

QG_TARGET double qg_q2_amx_xfix(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t) {
  return xfix512(x, res, g, bits, out, t, true);
}

#else
typedef int qg_q2_vnni_absent; /* not x86-64 */
#endif
