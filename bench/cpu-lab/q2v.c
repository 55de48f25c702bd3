/* Q2_0 with integer dot products on AVX-512 VNNI (lab).
 *
 * Layout (repacked at upload, same bytes as the packed format): rows in
 * groups of 16; per group and block b: the 16 rows' fp16 scales (32 bytes),
 * then g/16 vectors of 64 bytes. In vector v, the dword of lane r holds 16
 * codes of row r: byte t, bits 2f..2f+1 = the code of element
 * b*g + 16v + 4f + t. So (vector >> 2f) & 3 per byte gives, in every lane,
 * the codes of 4 consecutive elements, which vpdpbusd multiplies by 4
 * consecutive x digits broadcast to all lanes: one instruction = 16 rows x
 * 4 elements x one digit plane.
 *
 * Per block and lane: A_p = sum_j c_j d_pj (u8 codes 0..3 times s8 digits),
 * exact in int32; B_p = A_p - sum_j d_pj = sum_j (c_j - 1) d_pj, the weight
 * minus one, exactly (|B_p| <= 2 * 128 * g <= 2^15). hi = 256 B_3 + B_2 and
 * lo = 256 B_1 + B_0 are exact int32 (< 2^24), v = 65536 hi + lo exact in
 * f64 (< 2^40) = sum_j (c_j - 1) q_j. acc += v * (scale_r * 2^e_b) in f64:
 * one rounding of 2^-53 per block. y = (float)acc. */
#include <immintrin.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "lab.h"
#include "../../src/backend-cpu/cpu_xfix.h"

#define T __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define AI static inline __attribute__((always_inline)) T
#ifdef LAB_MCA /* llvm-mca regions around the loop bodies (gcc -S) */
#define MCA_BEGIN(name) __asm__ volatile("# LLVM-MCA-BEGIN " name)
#define MCA_END() __asm__ volatile("# LLVM-MCA-END")
#else
#define MCA_BEGIN(name) ((void)0)
#define MCA_END() ((void)0)
#endif

size_t q2v_bytes(int64_t n, int64_t k, int g) {
  int64_t groups = (n + 15) / 16;
  return (size_t)groups * (size_t)(k / g) * (32u + 4u * (size_t)g);
}

/* From the packed format (DESIGN.md section 4); n a multiple of 16 here. */
void q2v_repack(const uint8_t *packed, int64_t n, int64_t k, int g, uint8_t *out) {
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
        for (int j = 0; j < g; j++) {
          int c = (src[2 + j / 4] >> (2 * (j % 4))) & 3;
          int v = j / 16, f = (j % 16) / 4, t = j % 4;
          o[32 + 64 * v + 4 * r + t] |= (uint8_t)(c << (2 * f));
        }
      }
    }
}

/* acc += w . (the 4 digit bytes at p, broadcast to all lanes): the
 * broadcast folded into the instruction's memory operand, which GCC 12
 * does not do on its own (a separate vpbroadcastd per product). */
AI __m512i dpbusd_bcast(__m512i acc, __m512i w, const int8_t *p) {
#ifdef Q2V_SEPARATE_BCAST
  int32_t xd;
  memcpy(&xd, p, 4);
  return _mm512_dpbusd_epi32(acc, w, _mm512_set1_epi32(xd));
#else
  __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*(const int32_t *)p));
  return acc;
#endif
}

/* Dot products of one block of a 16-row group with one term of x. */
AI void mac_block(const uint8_t *codes, const int8_t *xd, const int32_t dsum[4], const int g, const int D,
                  __m512i A[4]) {
  /* One shift per vector, not three: n = c >> 4 puts fields 2 and 3 where
   * 0 and 1 were; masks 0x03 and 0x0c then give c and 4c. Products of 4c
   * go to their own accumulators (e*), divided by 4 (exactly) at the end:
   * a shift of a zmm costs a slot of the dot-product pipe, an and does not
   * (bench/cpu-lab/README.md). */
  const __m512i m03 = _mm512_set1_epi8(3), m0c = _mm512_set1_epi8(12);
  /* Starting from minus the digit sums gives sum_j (c_j - 1) d_pj. */
  __m512i a0 = _mm512_set1_epi32(-dsum[0]), a1 = _mm512_set1_epi32(-dsum[1]), a2 = _mm512_set1_epi32(-dsum[2]);
  __m512i a3 = _mm512_set1_epi32(-dsum[3]), e0 = _mm512_setzero_si512(), e1 = e0, e2 = e0, e3 = e0;
#pragma GCC unroll 4
  for (int v = 0; v < g / 16; v++) {
    __m512i c = _mm512_loadu_si512(codes + 64 * v), nh = _mm512_srli_epi16(c, 4);
    __m512i w0 = _mm512_and_si512(c, m03), w1 = _mm512_and_si512(c, m0c);
    __m512i w2 = _mm512_and_si512(nh, m03), w3 = _mm512_and_si512(nh, m0c);
    const int8_t *x0 = xd + 64 * v; /* elements 16v .. 16v+15, 16 bytes per 4 */
    a0 = dpbusd_bcast(a0, w0, x0), a1 = dpbusd_bcast(a1, w0, x0 + 4), a2 = dpbusd_bcast(a2, w0, x0 + 8);
    if (D == 4) a3 = dpbusd_bcast(a3, w0, x0 + 12);
    e0 = dpbusd_bcast(e0, w1, x0 + 16), e1 = dpbusd_bcast(e1, w1, x0 + 20), e2 = dpbusd_bcast(e2, w1, x0 + 24);
    if (D == 4) e3 = dpbusd_bcast(e3, w1, x0 + 28);
    a0 = dpbusd_bcast(a0, w2, x0 + 32), a1 = dpbusd_bcast(a1, w2, x0 + 36), a2 = dpbusd_bcast(a2, w2, x0 + 40);
    if (D == 4) a3 = dpbusd_bcast(a3, w2, x0 + 44);
    e0 = dpbusd_bcast(e0, w3, x0 + 48), e1 = dpbusd_bcast(e1, w3, x0 + 52), e2 = dpbusd_bcast(e2, w3, x0 + 56);
    if (D == 4) e3 = dpbusd_bcast(e3, w3, x0 + 60);
  }
  A[0] = _mm512_add_epi32(a0, _mm512_srai_epi32(e0, 2));
  A[1] = _mm512_add_epi32(a1, _mm512_srai_epi32(e1, 2));
  A[2] = _mm512_add_epi32(a2, _mm512_srai_epi32(e2, 2));
  A[3] = _mm512_add_epi32(a3, _mm512_srai_epi32(e3, 2));
}

/* acc (16 rows as two f64 vectors) += sum_j (c_j - 1) q_j * scale_r * 2^e.
 * Q2V_FOLD64: the block value exact in f64 and one f64 rounding; else the
 * block value and its product with the scale rounded in f32 (2 roundings
 * of 2^-24), then scaled by 2^e and added in f64 (exact scaling, one
 * rounding of 2^-53). */
AI void fold(const __m512i B[4], const uint8_t *scales, double pw, const int D, __m512d acc[2]) {
  __m512i hi = D == 4 ? _mm512_add_epi32(_mm512_slli_epi32(B[3], 8), B[2]) : B[2];
  __m512i lo = _mm512_add_epi32(_mm512_slli_epi32(B[1], 8), B[0]);
  __m512 s = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)scales));
#ifdef Q2V_FOLD64
  const __m512d two16 = _mm512_set1_pd(65536.0);
  __m512d v0 = _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(hi)), two16,
                               _mm512_cvtepi32_pd(_mm512_castsi512_si256(lo)));
  __m512d v1 = _mm512_fmadd_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(hi, 1)), two16,
                               _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(lo, 1)));
  const __m512d pe = _mm512_set1_pd(log2(pw));
  __m512d s0 = _mm512_scalef_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(s)), pe);
  __m512d s1 = _mm512_scalef_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1))), pe);
  acc[0] = _mm512_fmadd_pd(v0, s0, acc[0]);
  acc[1] = _mm512_fmadd_pd(v1, s1, acc[1]);
#else
  __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi), _mm512_set1_ps(65536.0f), _mm512_cvtepi32_ps(lo));
  __m512 vs = _mm512_mul_ps(v, s);
  const __m512d pe = _mm512_set1_pd(pw);
  acc[0] = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(vs)), pe, acc[0]);
  acc[1] = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(vs), 1))), pe, acc[1]);
#endif
}

AI void store16(float *y, const __m512d acc[2]) {
  __m256 a = _mm512_cvtpd_ps(acc[0]), b = _mm512_cvtpd_ps(acc[1]);
  _mm256_storeu_ps(y, a);
  _mm256_storeu_ps(y + 8, b);
}

/* The extra terms of block b (rare: cpu_xfix.h). */
AI void extra_terms(const qg_xfix_row *xr, int64_t b, const uint8_t *codes, const uint8_t *scales, const int g,
                    const int D, __m512d acc[2]) {
  const qg_xfix_block *bl = &xr->blocks[b];
  for (int t = 0; t < bl->terms - 1; t++) {
    const qg_xfix_term *e = &xr->extra[bl->first + t];
    __m512i A[4];
    mac_block(codes, xr->extra_digits + (size_t)(bl->first + t) * 4u * (size_t)g, e->dsum, g, D, A);
    fold(A, scales, e->scale, D, acc);
  }
}

/* A block left to the exact path (non-finite x, or no room for terms):
 * sum_j (c_j - 1) x_j in double for the 16 rows, times the scales. */
AI void exact_block(const uint8_t *codes, const uint8_t *scales, const float *xb, const int g, __m512d acc[2]) {
  __m512d s0 = _mm512_setzero_pd(), s1 = s0;
  const __m512i three = _mm512_set1_epi32(3), one = _mm512_set1_epi32(1);
  for (int v = 0; v < g / 16; v++) {
    __m512i c = _mm512_loadu_si512(codes + 64 * v);
    for (int f = 0; f < 4; f++)
      for (int t = 0; t < 4; t++) {
        __m512i w = _mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(c, 8 * t + 2 * f), three), one);
        __m512d x = _mm512_set1_pd((double)xb[16 * v + 4 * f + t]);
        s0 = _mm512_add_pd(s0, _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(w)), x));
        s1 = _mm512_add_pd(s1, _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(w, 1)), x));
      }
  }
  __m512 sc = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)scales));
  acc[0] = _mm512_add_pd(acc[0], _mm512_mul_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(sc))));
  acc[1] = _mm512_add_pd(acc[1], _mm512_mul_pd(s1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sc), 1)))));
}

/* One block of one activation row into acc. */
AI void row_block(const qg_xfix_row *xr, const float *x, int64_t b, const uint8_t *p, const int g, const int D,
                  __m512d acc[2]) {
  const qg_xfix_block *bl = &xr->blocks[b];
  if (__builtin_expect(bl->terms == 0, 0)) {
    exact_block(p + 32, p, x + b * g, g, acc);
    return;
  }
  __m512i A[4];
  mac_block(p + 32, xr->digits + 4 * (size_t)b * (size_t)g, bl->t0.dsum, g, D, A);
  fold(A, p, bl->t0.scale, D, acc);
  if (__builtin_expect(bl->terms > 1, 0)) extra_terms(xr, b, p + 32, p, g, D, acc);
}

/* m = 1: groups [g0, g1). */
AI void q2v_rows1(const uint8_t *w, int64_t k, const qg_xfix_row *xr, const float *x, float *y, int64_t g0, int64_t g1,
                  const int g, const int D) {
  const int64_t nb = k / g;
  const size_t vb = 32u + 4u * (size_t)g;
  for (int64_t grp = g0; grp < g1; grp++) {
    const uint8_t *p = w + (size_t)grp * (size_t)nb * vb;
    __m512d acc[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
    for (int64_t b = 0; b < nb; b++, p += vb) {
#ifdef Q2V_PF
      for (size_t o = 0; o < vb; o += 64) _mm_prefetch((const char *)p + Q2V_PF + o, _MM_HINT_T0);
#endif
      MCA_BEGIN("q2v1");
      row_block(xr, x, b, p, g, D, acc);
      MCA_END();
    }
    store16(y + grp * 16, acc);
  }
}

/* m > 1: two activation rows share each decoded code vector (16
 * accumulators with the one-shift decode of mac_block; more rows per pass
 * spill registers and measured slower). */
AI void mac_block_2rows(const uint8_t *codes, const int8_t *xd0, const int8_t *xd1, const int32_t ds0[4],
                        const int32_t ds1[4], const int g, const int D, __m512i A[4], __m512i B[4]) {
  const __m512i m03 = _mm512_set1_epi8(3), m0c = _mm512_set1_epi8(12);
  __m512i a0 = _mm512_set1_epi32(-ds0[0]), a1 = _mm512_set1_epi32(-ds0[1]), a2 = _mm512_set1_epi32(-ds0[2]);
  __m512i a3 = _mm512_set1_epi32(-ds0[3]), e0 = _mm512_setzero_si512(), e1 = e0, e2 = e0, e3 = e0;
  __m512i b0 = _mm512_set1_epi32(-ds1[0]), b1 = _mm512_set1_epi32(-ds1[1]), b2 = _mm512_set1_epi32(-ds1[2]);
  __m512i b3 = _mm512_set1_epi32(-ds1[3]), f0 = _mm512_setzero_si512(), f1 = f0, f2 = f0, f3 = f0;
#pragma GCC unroll 2
  for (int v = 0; v < g / 16; v++) {
    __m512i c = _mm512_loadu_si512(codes + 64 * v), nh = _mm512_srli_epi16(c, 4);
    __m512i w0 = _mm512_and_si512(c, m03), w1 = _mm512_and_si512(c, m0c);
    __m512i w2 = _mm512_and_si512(nh, m03), w3 = _mm512_and_si512(nh, m0c);
    const int8_t *x = xd0 + 64 * v, *y = xd1 + 64 * v;
    a0 = dpbusd_bcast(a0, w0, x), a1 = dpbusd_bcast(a1, w0, x + 4), a2 = dpbusd_bcast(a2, w0, x + 8);
    b0 = dpbusd_bcast(b0, w0, y), b1 = dpbusd_bcast(b1, w0, y + 4), b2 = dpbusd_bcast(b2, w0, y + 8);
    if (D == 4) a3 = dpbusd_bcast(a3, w0, x + 12), b3 = dpbusd_bcast(b3, w0, y + 12);
    e0 = dpbusd_bcast(e0, w1, x + 16), e1 = dpbusd_bcast(e1, w1, x + 20), e2 = dpbusd_bcast(e2, w1, x + 24);
    f0 = dpbusd_bcast(f0, w1, y + 16), f1 = dpbusd_bcast(f1, w1, y + 20), f2 = dpbusd_bcast(f2, w1, y + 24);
    if (D == 4) e3 = dpbusd_bcast(e3, w1, x + 28), f3 = dpbusd_bcast(f3, w1, y + 28);
    a0 = dpbusd_bcast(a0, w2, x + 32), a1 = dpbusd_bcast(a1, w2, x + 36), a2 = dpbusd_bcast(a2, w2, x + 40);
    b0 = dpbusd_bcast(b0, w2, y + 32), b1 = dpbusd_bcast(b1, w2, y + 36), b2 = dpbusd_bcast(b2, w2, y + 40);
    if (D == 4) a3 = dpbusd_bcast(a3, w2, x + 44), b3 = dpbusd_bcast(b3, w2, y + 44);
    e0 = dpbusd_bcast(e0, w3, x + 48), e1 = dpbusd_bcast(e1, w3, x + 52), e2 = dpbusd_bcast(e2, w3, x + 56);
    f0 = dpbusd_bcast(f0, w3, y + 48), f1 = dpbusd_bcast(f1, w3, y + 52), f2 = dpbusd_bcast(f2, w3, y + 56);
    if (D == 4) e3 = dpbusd_bcast(e3, w3, x + 60), f3 = dpbusd_bcast(f3, w3, y + 60);
  }
  A[0] = _mm512_add_epi32(a0, _mm512_srai_epi32(e0, 2)), A[1] = _mm512_add_epi32(a1, _mm512_srai_epi32(e1, 2));
  A[2] = _mm512_add_epi32(a2, _mm512_srai_epi32(e2, 2)), A[3] = _mm512_add_epi32(a3, _mm512_srai_epi32(e3, 2));
  B[0] = _mm512_add_epi32(b0, _mm512_srai_epi32(f0, 2)), B[1] = _mm512_add_epi32(b1, _mm512_srai_epi32(f1, 2));
  B[2] = _mm512_add_epi32(b2, _mm512_srai_epi32(f2, 2)), B[3] = _mm512_add_epi32(b3, _mm512_srai_epi32(f3, 2));
}

AI void q2v_rows_batch(const uint8_t *w, int64_t k, int64_t n, const qg_xfix_row *xr, const float *x, int64_t m,
                       float *y, int64_t g0, int64_t g1, const int g, const int D) {
  const int64_t nb = k / g;
  const size_t vb = 32u + 4u * (size_t)g;
  for (int64_t grp = g0; grp < g1; grp++) {
    int64_t t = 0;
    for (; t + 2 <= m; t += 2) {
      const qg_xfix_row *r0 = &xr[t], *r1 = &xr[t + 1];
      const float *x0 = x + t * k, *x1 = x0 + k;
      __m512d acc0[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()}, acc1[2] = {_mm512_setzero_pd(), _mm512_setzero_pd()};
      const uint8_t *p = w + (size_t)grp * (size_t)nb * vb;
      for (int64_t b = 0; b < nb; b++, p += vb) {
        const qg_xfix_block *b0 = &r0->blocks[b], *b1 = &r1->blocks[b];
        if (__builtin_expect(b0->terms != 1 || b1->terms != 1, 0)) {
          row_block(r0, x0, b, p, g, D, acc0);
          row_block(r1, x1, b, p, g, D, acc1);
          continue;
        }
        __m512i A[4], B[4];
        const size_t xo = 4 * (size_t)b * (size_t)g;
        mac_block_2rows(p + 32, r0->digits + xo, r1->digits + xo, b0->t0.dsum, b1->t0.dsum, g, D, A, B);
        fold(A, p, b0->t0.scale, D, acc0);
        fold(B, p, b1->t0.scale, D, acc1);
      }
      store16(y + (size_t)t * (size_t)n + (size_t)grp * 16, acc0);
      store16(y + (size_t)(t + 1) * (size_t)n + (size_t)grp * 16, acc1);
    }
    if (t < m) q2v_rows1(w, k, &xr[t], x + t * k, y + (size_t)t * (size_t)n, grp, grp + 1, g, D);
  }
}

T void q2v_matvec(const uint8_t *w, int64_t n, int64_t k, int g, const qg_xfix_row *xr, const float *x, int64_t m,
                  float *y, int threads) {
  const int64_t groups = n / 16;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t g0 = groups * t / nt, g1 = groups * (t + 1) / nt;
    if (m == 1) {
      if (g == 64) q2v_rows1(w, k, xr, x, y, g0, g1, 64, 4);
      if (g == 128) q2v_rows1(w, k, xr, x, y, g0, g1, 128, 4);
    } else {
      if (g == 64) q2v_rows_batch(w, k, n, xr, x, m, y, g0, g1, 64, 4);
      if (g == 128) q2v_rows_batch(w, k, n, xr, x, m, y, g0, g1, 128, 4);
    }
  }
}
