/* Term 0 of the activations' block fixed point (cpu_xfix.h) with AVX-512
 * F/BW (lab; the candidate for the avx512 level). The same digits, scales
 * and sums as qg_xfix_scan; pb from f32 quotients (relative error ~2^-22).
 *
 * Per 16 elements: x 2^-e by vscalefps (exact: |x 2^-e| <= 2^30), rounded
 * to int32 by vcvtps2dq (nearest even, exact), back to f32 exactly (below
 * 2^24 it is exact; above, x 2^-e already was that integer), the residual
 * x - q 2^e exact (both on x's grid or 2^e's), four signed low bytes by
 * shifts, narrowed with vpmovdb and put in the digit layout by a 4 x 4
 * dword transpose. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "lab.h"

#define T __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))

T double xfix_term_avx512(const float *x, float *res, int g, int8_t *out, qg_xfix_term *t) {
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
    e -= 30;
  }
  t->scale = ldexp(1.0, e);
  const __m512 down = _mm512_set1_ps((float)-e), up = _mm512_set1_ps((float)e);
  __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
  __m512d p2 = _mm512_setzero_pd();
  for (int v = 0; v < g / 16; v++) {
    __m512 a = _mm512_loadu_ps(res + 16 * v);
    __m512i q = _mm512_cvtps_epi32(_mm512_scalef_ps(a, down));
    __m512 r = _mm512_sub_ps(a, _mm512_scalef_ps(_mm512_cvtepi32_ps(q), up));
    _mm512_storeu_ps(res + 16 * v, r);
    __mmask16 nz = _mm512_cmpneq_ps_mask(r, _mm512_setzero_ps());
    if (nz) { /* rare for term 0: elements within 2^7 of the block's largest are exact */
      __m512 xv = _mm512_loadu_ps(x + 16 * v);
      __m512d r0 = _mm512_div_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(r)), _mm512_cvtps_pd(_mm512_castps512_ps256(xv)));
      __m512d r1 = _mm512_div_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(r), 1))),
                                 _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xv), 1))));
      r0 = _mm512_maskz_mov_pd((__mmask8)nz, r0);
      r1 = _mm512_maskz_mov_pd((__mmask8)(nz >> 8), r1);
      p2 = _mm512_fmadd_pd(r0, r0, p2);
      p2 = _mm512_fmadd_pd(r1, r1, p2);
    }
    __m512i d0 = _mm512_srai_epi32(_mm512_slli_epi32(q, 24), 24);
    __m512i q1 = _mm512_srai_epi32(_mm512_sub_epi32(q, d0), 8);
    __m512i d1 = _mm512_srai_epi32(_mm512_slli_epi32(q1, 24), 24);
    __m512i q2 = _mm512_srai_epi32(_mm512_sub_epi32(q1, d1), 8);
    __m512i d2 = _mm512_srai_epi32(_mm512_slli_epi32(q2, 24), 24);
    __m512i d3 = _mm512_srai_epi32(_mm512_sub_epi32(q2, d2), 8);
    s0 = _mm512_add_epi32(s0, d0), s1 = _mm512_add_epi32(s1, d1);
    s2 = _mm512_add_epi32(s2, d2), s3 = _mm512_add_epi32(s3, d3);
    __m128i b0 = _mm512_cvtepi32_epi8(d0), b1 = _mm512_cvtepi32_epi8(d1);
    __m128i b2 = _mm512_cvtepi32_epi8(d2), b3 = _mm512_cvtepi32_epi8(d3);
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
  t->dsum[3] = _mm512_reduce_add_epi32(s3);
  return _mm512_reduce_add_pd(p2);
}
