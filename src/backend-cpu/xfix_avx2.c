/*
 * The AVX2 term of the activation quantizer (cpu_xfix.h) for the avx2
 * level's Q2_0 kernel (q2_avx2.c): the digits, scale and digit sums of
 * qg_xfix_term_portable, the P share up to the order of its sum. The
 * portable term took about 30 ns per element (240 us per row of 8192 on
 * the development VM, serial before the kernels start), which at m = 1 was
 * a tenth of a 28672 x 8192 call.
 *
 * Why the same values: the scaling by 2^-e is done in double, where it is
 * exact for every f32 (the portable ldexpf may round a value below 2^-126,
 * but such a value has |s| < 1/2 and rounds to q = 0 either way); q is
 * rounded to nearest even as rintf does (default MXCSR, as the portable
 * term assumes too); (s - q) 2^e is exact in double and, by cpu_xfix.h's
 * argument, an f32, so its conversion is exact and equals ldexpf(s - q, e).
 * Where q = 0 that gives res back (only a -0 may turn +0, which no later
 * step can see: digits come from q, P and the max from |res|).
 */
#if defined(__x86_64__)
#include <immintrin.h>
#include <math.h>

#include "cpu.h"

#define QG_TARGET __attribute__((target("avx2,fma,f16c")))
#define AI static inline __attribute__((always_inline)) QG_TARGET

AI int32_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

/* The signed low byte of each dword. */
AI __m256i low_byte(__m256i v) { return _mm256_srai_epi32(_mm256_slli_epi32(v, 24), 24); }

/* q and (s - q) 2^e as f32 for 4 elements, in double. */
AI __m128i quarter(__m128 a, __m256d down, __m256d up, __m128 *r) {
  __m256d s = _mm256_mul_pd(_mm256_cvtps_pd(a), down);
  __m256d q = _mm256_round_pd(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  *r = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(s, q), up));
  return _mm256_cvtpd_epi32(q);
}

/* sum (r / x)^2 over the 4 elements where r != 0. */
AI __m256d share(__m128 r, __m128 x, __m256d p) {
  __m256d rd = _mm256_cvtps_pd(r), q = _mm256_div_pd(rd, _mm256_cvtps_pd(x));
  q = _mm256_and_pd(q, _mm256_cmp_pd(rd, _mm256_setzero_pd(), _CMP_NEQ_OQ)); /* 0/0 where x = 0 */
  return _mm256_fmadd_pd(q, q, p);
}

QG_TARGET double qg_q2_avx2_xfix(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t) {
  const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256i expmask = _mm256_set1_epi32(0x7f800000);
  __m256 mx = _mm256_setzero_ps();
  __m256i bad = _mm256_setzero_si256();
  for (int v = 0; v < g / 8; v++) {
    __m256 a = _mm256_loadu_ps(res + 8 * v);
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(a), expmask), expmask));
    mx = _mm256_max_ps(mx, _mm256_and_ps(a, absmask));
  }
  if (!_mm256_testz_si256(bad, bad)) return -1.0;
  float lanes[8], m = 0.0f;
  _mm256_storeu_ps(lanes, mx);
  for (int i = 0; i < 8; i++) m = lanes[i] > m ? lanes[i] : m;
  int e = 0;
  if (m > 0.0f) {
    frexpf(m, &e); /* m < 2^e */
    e -= bits;     /* |q| <= 2^bits: three digits or one (cpu_xfix.h) */
  }
  t->scale = ldexp(1.0, e);
  const __m256d down = _mm256_set1_pd(ldexp(1.0, -e)), up = _mm256_set1_pd(t->scale);
  __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0;
  __m256d p = _mm256_setzero_pd();
  for (int v = 0; v < g / 8; v++) {
    __m256 a = _mm256_loadu_ps(res + 8 * v);
    __m128 r0, r1;
    __m128i q0 = quarter(_mm256_castps256_ps128(a), down, up, &r0);
    __m128i q1 = quarter(_mm256_extractf128_ps(a, 1), down, up, &r1);
    __m256 r = _mm256_set_m128(r1, r0);
    _mm256_storeu_ps(res + 8 * v, r);
    if (!_mm256_testz_si256(_mm256_castps_si256(r), _mm256_castps_si256(absmask))) { /* a bf16 x has none in term 0 */
      p = share(r0, _mm_loadu_ps(x + 8 * v), p);
      p = share(r1, _mm_loadu_ps(x + 8 * v + 4), p);
    }
    /* signed base-256 digits: |q| <= 2^22 leaves the fourth 0, 2^6 all but d0 */
    __m256i q = _mm256_set_m128i(q1, q0), d0 = low_byte(q);
    __m256i h = _mm256_srai_epi32(_mm256_sub_epi32(q, d0), 8), d1 = low_byte(h);
    __m256i d2 = _mm256_srai_epi32(_mm256_sub_epi32(h, d1), 8); /* |d2| <= 64 */
    s0 = _mm256_add_epi32(s0, d0), s1 = _mm256_add_epi32(s1, d1), s2 = _mm256_add_epi32(s2, d2);
    /* Per 128-bit lane (4 elements): words d0, d1 then d2, 0, then bytes
     * d0 d1 d2 0: the 16 bytes of cpu_xfix.h's layout for those elements.
     * No saturation: every digit is in [-128, 127]. */
    __m256i w01 = _mm256_packs_epi32(d0, d1), w2 = _mm256_packs_epi32(d2, _mm256_setzero_si256());
    _mm256_storeu_si256((__m256i *)(out + 32 * v), _mm256_packs_epi16(w01, w2));
  }
  t->dsum[0] = hsum_epi32(s0);
  t->dsum[1] = hsum_epi32(s1);
  t->dsum[2] = hsum_epi32(s2);
  t->dsum[3] = 0;
  __m128d h = _mm_add_pd(_mm256_castpd256_pd128(p), _mm256_extractf128_pd(p, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
#else
typedef int qg_xfix_avx2_absent; /* not x86-64 */
#endif
