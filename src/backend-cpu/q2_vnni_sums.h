/*
 * Q2_0 by integer dot products with AVX-512 VNNI: the block sums, the fold
 * and the rows loop, shared by the avx512vnni level (q2_vnni.c) and the
 * avx512amx level (q2_amx.c: further terms, small m), which differ only
 * in where a block's digits lie (xq4). Included by those two files.
 * Weights in groups of 16 rows (cpu_interleave.h), activations in block
 * fixed point (cpu_xfix.h), bench/cpu-lab for the measurements.
 *
 * Per group, block and term, in every lane (a weight row):
 *   A_p = sum_j c_j d_pj - sum_j d_pj = sum_j (c_j - 1) d_pj   (p = 0..2;
 *   the fourth digit of a term is 0, cpu_xfix.h)
 * exactly in int32 (|A_p| <= 2 * 128 * 128 < 2^15): vpdpbusd multiplies 4
 * unsigned code bytes (0..3) by 4 signed digits broadcast from x, and the
 * accumulators start at minus the digit sums. A_2 and lo = 256 A_1 + A_0
 * are exact int32 (|.| <= 2^23 + 2^15 < 2^24, so exact in f32 too), so
 * v = 65536 A_2 + lo is
 * sum_j (c_j - 1) q_j with one f32 rounding (an FMA of exact operands);
 * v * d (fp16 scale) rounds once more in f32; acc += that * 2^e in f64
 * (exact scaling, one rounding of 2^-53); y = (float)acc. DESIGN.md
 * section 5 bounds the error.
 *
 * Decode: one 16-bit shift per code vector (c >> 4 brings fields 2 and 3
 * where 0 and 1 were) and four ands (0x03, 0x0c) give the fields as c and
 * 4c; products with 4c go to their own accumulators, divided by 4
 * (exactly) at the end: one shift per code vector rather than three, so
 * fewer decode instructions share the core with the dot products (Zen 4:
 * 0.76 vpdpbusd per cycle alone, 0.57 in the kernel's mix;
 * bench/results/cpu-lab-uarch.txt).
 *
 * Per 16 rows x 16 elements (256 weights): 1 load, 1 shift, 4 ands, 12
 * vpdpbusd with broadcast memory operands (16 before v7, when an f32 x
 * took four digit planes: bench/NOTES-cpu.md); at 1 vpdpbusd per cycle,
 * 21 weights per cycle (0.07 cycles per weight measured with four planes,
 * the weight in L2). A block's further term has one digit (cpu_xfix.h),
 * so 4 vpdpbusd more, in term 0's pass when it is the block's only one.
 */
#ifndef QG_Q2_VNNI_SUMS_H
#define QG_Q2_VNNI_SUMS_H

#include "x86_intrin.h"
#include <stdbool.h>
#include <string.h>

#include "cpu.h"
#include "cpu_interleave.h"
#include "cpu_xfix.h"
#include "rows16.h"

#define QG_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define AI static inline __attribute__((always_inline)) QG_TARGET

/* acc += w . (the 4 digit bytes at p, broadcast to every lane): the
 * broadcast folded into the instruction's memory operand, which GCC 12
 * does not do by itself (it emits a separate vpbroadcastd, measured 0-20%
 * slower). */
AI __m512i dot4(__m512i acc, __m512i w, const int8_t *p) {
#if defined(QG_X86_EMU)
  int32_t b;
  memcpy(&b, p, sizeof b);
  return _mm512_dpbusd_epi32(acc, w, _mm512_set1_epi32(b));
#else
  __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*(const int32_t *)p));
  return acc;
#endif
}

/* Where digit plane p of elements 16v + 4f .. 16v + 4f + 3 of a block
 * lie (cpu_xfix.h): the VNNI layout ([16 elements][field f][plane][4])
 * or, pm (the AMX level's), plane-major per 64 elements ([64 elements]
 * [plane][64]), whose planes a tile loads as rows. The same digits. */
AI const int8_t *xq4(const int8_t *xd, int v, int f, int p, const bool pm) {
  const int8_t *x = xd + (pm ? 256 * (v >> 2) + 16 * (v & 3) : 64 * v); /* elements 16v .. 16v + 15 */
  return x + (pm ? 64 * p + 4 * f : 16 * f + 4 * p);
}

/* One group of `rows` rows at p (codes after 2 * rows bytes of scales). */
typedef struct grp {
  const uint8_t *p;
  int rows;
  __mmask16 lanes;
} grp;

AI __m512i load_codes(const grp *G, int v) {
  return _mm512_maskz_loadu_epi32(G->lanes, G->p + 2 * G->rows + 4 * G->rows * v);
}

/* The exact sums A_p of one block and term (x digits at xd, their sums in
 * dsum), for one activation row: planes 0-2 (a term's fourth digit is 0,
 * |q| <= 2^22: cpu_xfix.h). Twelve accumulators (fields 0-3 x planes),
 * added at the end: vpdpbusd takes 4 cycles and issues 2 per cycle on Zen
 * 5, so six chains held it to 1.5 per cycle (bench/cpu-lab/uarch.c; m = 1
 * 3-7% faster streaming, NOTES-cpu v17). Integer sums, so the same bits. */
AI void block_sums(const grp *G, const int8_t *xd, const int32_t dsum[4], const int g, const bool pm, __m512i A[3]) {
  const __m512i m03 = _mm512_set1_epi8(3), m0c = _mm512_set1_epi8(12);
  __m512i a0 = _mm512_set1_epi32(-dsum[0]), a1 = _mm512_set1_epi32(-dsum[1]);
  __m512i a2 = _mm512_set1_epi32(-dsum[2]);
  __m512i e0 = _mm512_setzero_si512(), e1 = e0, e2 = e0;
  __m512i h0 = e0, h1 = e0, h2 = e0, k0 = e0, k1 = e0, k2 = e0;
#pragma GCC unroll 2
  for (int v = 0; v < g / 16; v++) {
    __m512i c = load_codes(G, v), h = _mm512_srli_epi16(c, 4);
    __m512i w0 = _mm512_and_si512(c, m03), w1 = _mm512_and_si512(c, m0c);
    __m512i w2 = _mm512_and_si512(h, m03), w3 = _mm512_and_si512(h, m0c);
    a0 = dot4(a0, w0, xq4(xd, v, 0, 0, pm)), a1 = dot4(a1, w0, xq4(xd, v, 0, 1, pm));
    a2 = dot4(a2, w0, xq4(xd, v, 0, 2, pm));
    e0 = dot4(e0, w1, xq4(xd, v, 1, 0, pm)), e1 = dot4(e1, w1, xq4(xd, v, 1, 1, pm));
    e2 = dot4(e2, w1, xq4(xd, v, 1, 2, pm));
    h0 = dot4(h0, w2, xq4(xd, v, 2, 0, pm)), h1 = dot4(h1, w2, xq4(xd, v, 2, 1, pm));
    h2 = dot4(h2, w2, xq4(xd, v, 2, 2, pm));
    k0 = dot4(k0, w3, xq4(xd, v, 3, 0, pm)), k1 = dot4(k1, w3, xq4(xd, v, 3, 1, pm));
    k2 = dot4(k2, w3, xq4(xd, v, 3, 2, pm));
  }
  a0 = _mm512_add_epi32(a0, h0), a1 = _mm512_add_epi32(a1, h1), a2 = _mm512_add_epi32(a2, h2);
  e0 = _mm512_add_epi32(e0, k0), e1 = _mm512_add_epi32(e1, k1), e2 = _mm512_add_epi32(e2, k2);
  A[0] = _mm512_add_epi32(a0, _mm512_srai_epi32(e0, 2)), A[1] = _mm512_add_epi32(a1, _mm512_srai_epi32(e1, 2));
  A[2] = _mm512_add_epi32(a2, _mm512_srai_epi32(e2, 2));
}

/* The same for a further term of a block: one digit (cpu_xfix.h), so
 * plane 0 alone; A_1 = A_2 = 0, as the three-plane sums would give (the
 * avx2 level's block_sums_d0, v29). */
AI void block_sums_d0(const grp *G, const int8_t *xd, const int32_t dsum[4], const int g, const bool pm, __m512i A[3]) {
  const __m512i m03 = _mm512_set1_epi8(3), m0c = _mm512_set1_epi8(12);
  __m512i a0 = _mm512_set1_epi32(-dsum[0]), e0 = _mm512_setzero_si512(), h0 = e0, k0 = e0;
#pragma GCC unroll 2
  for (int v = 0; v < g / 16; v++) {
    __m512i c = load_codes(G, v), h = _mm512_srli_epi16(c, 4);
    a0 = dot4(a0, _mm512_and_si512(c, m03), xq4(xd, v, 0, 0, pm));
    e0 = dot4(e0, _mm512_and_si512(c, m0c), xq4(xd, v, 1, 0, pm));
    h0 = dot4(h0, _mm512_and_si512(h, m03), xq4(xd, v, 2, 0, pm));
    k0 = dot4(k0, _mm512_and_si512(h, m0c), xq4(xd, v, 3, 0, pm));
  }
  A[0] = _mm512_add_epi32(_mm512_add_epi32(a0, h0), _mm512_srai_epi32(_mm512_add_epi32(e0, k0), 2));
  A[1] = A[2] = _mm512_setzero_si512();
}

/* Term 0 and a block's one further term in one pass over the codes (most
 * blocks that have a further term have one): the sums of block_sums (A)
 * and block_sums_d0 (E), the same integers; 16 accumulators, 4 fields and
 * 2 masks in the 32 zmm registers. Written out beside block_sums, as
 * q2_avx2.c's are: one generic function ran 1.18-1.24x slower there (GCC's
 * register allocation, v29); not measured for this level. */
AI void block_sums_t2(const grp *G, const int8_t *xd, const int8_t *xe, const int32_t dsum[4], const int32_t esum[4],
                      const int g, const bool pm, __m512i A[3], __m512i E[3]) {
  const __m512i m03 = _mm512_set1_epi8(3), m0c = _mm512_set1_epi8(12);
  __m512i a0 = _mm512_set1_epi32(-dsum[0]), a1 = _mm512_set1_epi32(-dsum[1]);
  __m512i a2 = _mm512_set1_epi32(-dsum[2]), a3 = _mm512_set1_epi32(-esum[0]);
  __m512i e0 = _mm512_setzero_si512(), e1 = e0, e2 = e0, e3 = e0;
  __m512i h0 = e0, h1 = e0, h2 = e0, h3 = e0, k0 = e0, k1 = e0, k2 = e0, k3 = e0;
  for (int v = 0; v < g / 16; v++) {
    __m512i c = load_codes(G, v), h = _mm512_srli_epi16(c, 4);
    __m512i w0 = _mm512_and_si512(c, m03), w1 = _mm512_and_si512(c, m0c);
    __m512i w2 = _mm512_and_si512(h, m03), w3 = _mm512_and_si512(h, m0c);
    a0 = dot4(a0, w0, xq4(xd, v, 0, 0, pm)), a1 = dot4(a1, w0, xq4(xd, v, 0, 1, pm));
    a2 = dot4(a2, w0, xq4(xd, v, 0, 2, pm)), a3 = dot4(a3, w0, xq4(xe, v, 0, 0, pm));
    e0 = dot4(e0, w1, xq4(xd, v, 1, 0, pm)), e1 = dot4(e1, w1, xq4(xd, v, 1, 1, pm));
    e2 = dot4(e2, w1, xq4(xd, v, 1, 2, pm)), e3 = dot4(e3, w1, xq4(xe, v, 1, 0, pm));
    h0 = dot4(h0, w2, xq4(xd, v, 2, 0, pm)), h1 = dot4(h1, w2, xq4(xd, v, 2, 1, pm));
    h2 = dot4(h2, w2, xq4(xd, v, 2, 2, pm)), h3 = dot4(h3, w2, xq4(xe, v, 2, 0, pm));
    k0 = dot4(k0, w3, xq4(xd, v, 3, 0, pm)), k1 = dot4(k1, w3, xq4(xd, v, 3, 1, pm));
    k2 = dot4(k2, w3, xq4(xd, v, 3, 2, pm)), k3 = dot4(k3, w3, xq4(xe, v, 3, 0, pm));
  }
  a0 = _mm512_add_epi32(a0, h0), a1 = _mm512_add_epi32(a1, h1), a2 = _mm512_add_epi32(a2, h2);
  e0 = _mm512_add_epi32(e0, k0), e1 = _mm512_add_epi32(e1, k1), e2 = _mm512_add_epi32(e2, k2);
  A[0] = _mm512_add_epi32(a0, _mm512_srai_epi32(e0, 2)), A[1] = _mm512_add_epi32(a1, _mm512_srai_epi32(e1, 2));
  A[2] = _mm512_add_epi32(a2, _mm512_srai_epi32(e2, 2));
  E[0] = _mm512_add_epi32(_mm512_add_epi32(a3, h3), _mm512_srai_epi32(_mm512_add_epi32(e3, k3), 2));
  E[1] = E[2] = _mm512_setzero_si512();
}

/* The same for two activation rows sharing each decoded code vector. */
AI void block_sums2(const grp *G, const int8_t *xd, const int8_t *yd, const int32_t dx[4], const int32_t dy[4],
                    const int g, const bool pm, __m512i A[3], __m512i B[3]) {
  const __m512i m03 = _mm512_set1_epi8(3), m0c = _mm512_set1_epi8(12);
  __m512i a0 = _mm512_set1_epi32(-dx[0]), a1 = _mm512_set1_epi32(-dx[1]);
  __m512i a2 = _mm512_set1_epi32(-dx[2]);
  __m512i b0 = _mm512_set1_epi32(-dy[0]), b1 = _mm512_set1_epi32(-dy[1]);
  __m512i b2 = _mm512_set1_epi32(-dy[2]);
  __m512i e0 = _mm512_setzero_si512(), e1 = e0, e2 = e0, f0 = e0, f1 = e0, f2 = e0;
#pragma GCC unroll 2
  for (int v = 0; v < g / 16; v++) {
    __m512i c = load_codes(G, v), h = _mm512_srli_epi16(c, 4);
    __m512i w0 = _mm512_and_si512(c, m03), w1 = _mm512_and_si512(c, m0c);
    __m512i w2 = _mm512_and_si512(h, m03), w3 = _mm512_and_si512(h, m0c);
    a0 = dot4(a0, w0, xq4(xd, v, 0, 0, pm)), a1 = dot4(a1, w0, xq4(xd, v, 0, 1, pm));
    a2 = dot4(a2, w0, xq4(xd, v, 0, 2, pm));
    b0 = dot4(b0, w0, xq4(yd, v, 0, 0, pm)), b1 = dot4(b1, w0, xq4(yd, v, 0, 1, pm));
    b2 = dot4(b2, w0, xq4(yd, v, 0, 2, pm));
    e0 = dot4(e0, w1, xq4(xd, v, 1, 0, pm)), e1 = dot4(e1, w1, xq4(xd, v, 1, 1, pm));
    e2 = dot4(e2, w1, xq4(xd, v, 1, 2, pm));
    f0 = dot4(f0, w1, xq4(yd, v, 1, 0, pm)), f1 = dot4(f1, w1, xq4(yd, v, 1, 1, pm));
    f2 = dot4(f2, w1, xq4(yd, v, 1, 2, pm));
    a0 = dot4(a0, w2, xq4(xd, v, 2, 0, pm)), a1 = dot4(a1, w2, xq4(xd, v, 2, 1, pm));
    a2 = dot4(a2, w2, xq4(xd, v, 2, 2, pm));
    b0 = dot4(b0, w2, xq4(yd, v, 2, 0, pm)), b1 = dot4(b1, w2, xq4(yd, v, 2, 1, pm));
    b2 = dot4(b2, w2, xq4(yd, v, 2, 2, pm));
    e0 = dot4(e0, w3, xq4(xd, v, 3, 0, pm)), e1 = dot4(e1, w3, xq4(xd, v, 3, 1, pm));
    e2 = dot4(e2, w3, xq4(xd, v, 3, 2, pm));
    f0 = dot4(f0, w3, xq4(yd, v, 3, 0, pm)), f1 = dot4(f1, w3, xq4(yd, v, 3, 1, pm));
    f2 = dot4(f2, w3, xq4(yd, v, 3, 2, pm));
  }
  A[0] = _mm512_add_epi32(a0, _mm512_srai_epi32(e0, 2)), A[1] = _mm512_add_epi32(a1, _mm512_srai_epi32(e1, 2));
  A[2] = _mm512_add_epi32(a2, _mm512_srai_epi32(e2, 2));
  B[0] = _mm512_add_epi32(b0, _mm512_srai_epi32(f0, 2)), B[1] = _mm512_add_epi32(b1, _mm512_srai_epi32(f1, 2));
  B[2] = _mm512_add_epi32(b2, _mm512_srai_epi32(f2, 2));
}

/* The group's 16 (or fewer) fp16 scales as f32. */
AI __m512 scales(const grp *G) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(G->lanes, G->p)); }

/* acc += (65536 A_2 + lo) * d * scale (header comment). */
AI void fold(const __m512i A[3], __m512 d, double scale, qg_acc16 *acc) {
  __m512i lo = _mm512_add_epi32(_mm512_slli_epi32(A[1], 8), A[0]);
  __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(A[2]), _mm512_set1_ps(65536.0f), _mm512_cvtepi32_ps(lo));
  qg_acc16_fma(acc, _mm512_mul_ps(v, d), scale);
}

/* A block's terms after the first (rare: cpu_xfix.h), one digit each. */
AI void extra_terms(const grp *G, const qg_xfix_row *xr, const qg_xfix_block *bl, __m512 d, const int g,
                    const bool pm, qg_acc16 *acc) {
  for (int t = 0; t < bl->terms - 1; t++) {
    const qg_xfix_term *e = &xr->extra[bl->first + t];
    __m512i A[3];
    block_sums_d0(G, xr->extra_digits + (size_t)(bl->first + t) * 4u * (size_t)g, e->dsum, g, pm, A);
    fold(A, d, e->scale, acc);
  }
}

/* A block left to the exact path (a non-finite x, or no room for terms):
 * sum_j (c_j - 1) x_j in double, IEEE semantics, times the scales. */
AI void exact_block(const grp *G, const float *xb, __m512 d, const int g, qg_acc16 *acc) {
  __m512d s0 = _mm512_setzero_pd(), s1 = s0;
  const __m512i three = _mm512_set1_epi32(3), one = _mm512_set1_epi32(1);
  for (int v = 0; v < g / 16; v++) {
    __m512i c = load_codes(G, v);
    for (int f = 0; f < 4; f++)
      for (int t = 0; t < 4; t++) {
        __m512i w = _mm512_sub_epi32(_mm512_and_si512(_mm512_srlv_epi32(c, _mm512_set1_epi32(8 * t + 2 * f)), three), one);
        __m512d x = _mm512_set1_pd((double)xb[16 * v + 4 * f + t]);
        s0 = _mm512_add_pd(s0, _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(w)), x));
        s1 = _mm512_add_pd(s1, _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(w, 1)), x));
      }
  }
  qg_acc16_add_scaled(acc, s0, s1, d);
}

/* One block of one activation row into acc. */
AI void row_block(const grp *G, const qg_xfix_row *xr, const float *x, int64_t b, __m512 d, const int g,
                  const bool pm, qg_acc16 *acc) {
  const qg_xfix_block *bl = &xr->blocks[b];
  if (__builtin_expect(bl->terms == 0, 0)) {
    exact_block(G, x + b * g, d, g, acc);
    return;
  }
  __m512i A[3];
  if (bl->terms == 2) { /* the common case of a further term: one pass */
    const qg_xfix_term *t1 = &xr->extra[bl->first];
    __m512i E[3];
    block_sums_t2(G, xr->digits + 4 * b * g, xr->extra_digits + (size_t)bl->first * 4u * (size_t)g, bl->t0.dsum,
                  t1->dsum, g, pm, A, E);
    fold(A, d, bl->t0.scale, acc); /* term by term, as below */
    fold(E, d, t1->scale, acc);
    return;
  }
  block_sums(G, xr->digits + 4 * b * g, bl->t0.dsum, g, pm, A);
  fold(A, d, bl->t0.scale, acc);
  if (__builtin_expect(bl->terms > 1, 0)) extra_terms(G, xr, bl, d, g, pm, acc);
}

/* Output rows [i, i + rows) of a group for activation row t (m = 1: one
 * pass over the group's weight). */
AI void group(const qg_cpu_job *job, int64_t i, int rows, int64_t t, const int g, const bool pm) {
  const qgemv_weight_desc *d = &job->w->desc;
  const int64_t k = d->k, nb = k / g;
  const size_t vb = (size_t)rows * qg_interleave_q2_block(g);
  const qg_xfix_row *xr = &job->xq[t];
  const float *x0 = job->xn + (size_t)t * (size_t)k;
  grp G = {.p = (const uint8_t *)d->data + (size_t)i * (size_t)nb * qg_interleave_q2_block(g), .rows = rows,
           .lanes = (__mmask16)((1u << rows) - 1u)};
  qg_acc16 a0;
  qg_acc16_zero(&a0);
  for (int64_t b = 0; b < nb; b++, G.p += vb) {
    qg_prefetch_ahead(G.p, vb);
    row_block(&G, xr, x0, b, scales(&G), g, pm, &a0);
  }
  qg_acc16_store(job, t, i, rows, &a0);
}

/* Activation rows [t0, t0 + mt) (mt <= QG_Q2_MT) of the group at row i,
 * in spans of QG_Q2_SPAN bytes of the group's weight: each span is
 * prefetched once and read from memory once, then from L1 by every pair of
 * rows (sharing each decoded code vector), a pair's f64
 * accumulators in registers over the span. Each row gets the same integer
 * block sums and the same folds in the same block order as group()'s, so
 * the same bits (bench/NOTES-cpu.md v39: before, each pair swept the
 * group's whole weight, 36 KB at k = 8192, and prefetched it again). */
#define QG_Q2_MT 16
#ifndef QG_Q2_SPAN
#define QG_Q2_SPAN 4096
#endif
AI void group_mt(const qg_cpu_job *job, int64_t i, int rows, int64_t t0, int mt, const int g, const bool pm) {
  const qgemv_weight_desc *d = &job->w->desc;
  const int64_t k = d->k, nb = k / g;
  const size_t vb = (size_t)rows * qg_interleave_q2_block(g);
  const int64_t per = QG_Q2_SPAN / (16 * (int64_t)qg_interleave_q2_block(g)), span = per > 0 ? per : 1; /* blocks */
  const uint8_t *base = (const uint8_t *)d->data + (size_t)i * (size_t)nb * qg_interleave_q2_block(g);
  qg_acc16 acc[QG_Q2_MT];
  for (int u = 0; u < mt; u++) qg_acc16_zero(&acc[u]);
  for (int64_t b0 = 0; b0 < nb; b0 += span) {
    const int64_t b1 = nb - b0 < span ? nb : b0 + span;
    for (int u = 0; u < mt; u += 2) {
      const bool pair = u + 1 < mt;
      const qg_xfix_row *xr = &job->xq[t0 + u];
      const float *x0 = job->xn + (size_t)(t0 + u) * (size_t)k;
      qg_acc16 a0 = acc[u], a1 = pair ? acc[u + 1] : acc[u];
      grp G = {.p = base + (size_t)b0 * vb, .rows = rows, .lanes = (__mmask16)((1u << rows) - 1u)};
      for (int64_t b = b0; b < b1; b++, G.p += vb) {
        if (u == 0) qg_prefetch_ahead(G.p, vb);
        const __m512 s = scales(&G);
        if (pair && __builtin_expect(xr[0].blocks[b].terms == 1 && xr[1].blocks[b].terms == 1, 1)) {
          __m512i A[3], B[3];
          const qg_xfix_term *ta = &xr[0].blocks[b].t0, *tb = &xr[1].blocks[b].t0;
          block_sums2(&G, xr[0].digits + 4 * b * g, xr[1].digits + 4 * b * g, ta->dsum, tb->dsum, g, pm, A, B);
          fold(A, s, ta->scale, &a0);
          fold(B, s, tb->scale, &a1);
          continue;
        }
        row_block(&G, &xr[0], x0, b, s, g, pm, &a0);
        if (pair) row_block(&G, &xr[1], x0 + k, b, s, g, pm, &a1);
      }
      acc[u] = a0;
      if (pair) acc[u + 1] = a1;
    }
  }
  for (int u = 0; u < mt; u++) qg_acc16_store(job, t0 + u, i, rows, &acc[u]);
}

/* Rows [row0, row1) by the VNNI sums (pm: the digits plane-major): m = 1
 * by group(), m > 1 by group_mt() in chunks of QG_Q2_MT activation rows. */
AI void rows_g(const qg_cpu_job *job, int64_t row0, int64_t row1, const int g, const bool pm) {
  for (int64_t i = row0; i < row1; i += 16) {
    const int rows = row1 - i < 16 ? (int)(row1 - i) : 16;
    if (job->m == 1) {
      group(job, i, rows, 0, g, pm);
      continue;
    }
    for (int64_t t = 0; t < job->m; t += QG_Q2_MT)
      group_mt(job, i, rows, t, job->m - t < QG_Q2_MT ? (int)(job->m - t) : QG_Q2_MT, g, pm);
  }
}

#endif
