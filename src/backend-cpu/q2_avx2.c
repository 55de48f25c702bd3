/*
 * Q2_0 by integer dot products with AVX2 (the avx2 level): the arithmetic
 * of q2_vnni.c on 256-bit vectors without VNNI or masks. Weights in groups
 * of 16 rows (cpu_interleave.h), two vectors of 8 rows (dwords) each;
 * activations in block fixed point (cpu_xfix.h).
 *
 * Per group, block and term, in every lane (a weight row):
 *   A_p = sum_j (c_j - 1) d_pj = sum_j c_j d_pj - dsum_p   (p = 0..2)
 * exactly. vpmaddubsw multiplies the unsigned code bytes (each 2-bit field
 * shifted down to 0..3) by the signed digits broadcast from x and adds
 * adjacent pairs into int16; the int16 results of a whole block are summed
 * in int16 and widened once per block (vpmaddwd by 1), then the digit sums
 * subtracted in int32. Why int16 cannot overflow or saturate: one int16
 * lane of a vpmaddubsw result is c_a d_a + c_b d_b with c in 0..3 and d in
 * [-128, 127], so |.| <= 2 * 3 * 128 = 768; an int16 lane of a block's
 * accumulator sums one such result per field (4) and code vector (g / 16),
 * g / 4 of them: |.| <= 32 * 768 = 24576 < 32767 for g = 128 (half that for
 * g = 64). The fields stay 0..3 (three shifts per code vector) rather than
 * q2_vnni.c's c and 4c (one shift): 4c would give 4 x 24576, over int16.
 * From A_p on, the fold is q2_vnni.c's (one f32 rounding of 65536 A_2 +
 * 256 A_1 + A_0, one of the product with the fp16 scale, f64 accumulation
 * scaled by 2^e), so every lane gets the same bits as the avx512vnni level.
 *
 * Per 16 rows x 16 elements (256 weights), one activation row: 2 loads, 6
 * shifts, 8 ands, 12 digit broadcasts, 24 vpmaddubsw, 24 int16 adds: 76
 * instructions, 0.30 per weight (the f32 decode-and-FMA path: 0.48-0.50).
 * Two activation rows share each decoded code vector (block_sums2): 136
 * per 256 weights and 2 rows, 0.27 per weight and row. GCC 12 adds ~15%
 * register moves to both loops (callgrind, 1024 x 4096 g128, kernel
 * inclusive: 0.47 instructions per weight at m = 1, 0.40 per weight and row
 * at m = 8, against the f32 path's 0.51 and 0.36); vpmaddubsw issues 2 per
 * cycle on this VM's core, vpaddw 4 (measured in a loop of independent
 * instructions), so the 24 vpmaddubsw per 256 weights and row bound the
 * loop near the f32 path's 32 FMAs at m = 8; m = 1 gains from the
 * f32 path's decode (one instruction per code byte) going away.
 *
 * The m = 1 loop is at this core's vector-pipe floor (v29,
 * bench/NOTES-cpu.md: 19.9 cycles per 256 weights without the fold on
 * Zen 3, its 62 vector ops at the 3.2 per cycle that vpmaddubsw + vpaddw
 * sustain there); variants with fewer ops (q2_vnni.c's c and 4c fields,
 * two groups per broadcast) need more than 16 ymm registers and ran
 * slower. A block's further term (cpu_xfix.h: one digit) costs only plane
 * 0's products: block_sums_t2 computes it in term 0's pass when it is the
 * block's only further term (most blocks that have one), block_sums_d0
 * otherwise.
 */
#if defined(__x86_64__)
#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "cpu.h"
#include "cpu_interleave.h"
#include "cpu_xfix.h"
#include "prefetch.h"

#define QG_TARGET __attribute__((target("avx2,fma,f16c")))
#define AI static inline __attribute__((always_inline)) QG_TARGET


/* An empty asm that claims to change the accumulators once per field: GCC
 * otherwise reassociates a code vector's 12-24 int16 adds into trees that
 * keep every product live, spills the accumulators to the stack, and the
 * batched path ran slower than m = 1 per row. Integer adds: the sums are
 * the same whatever the order. */
#define PIN6(a, b, c, d, e, f) __asm__("" : "+x"(a), "+x"(b), "+x"(c), "+x"(d), "+x"(e), "+x"(f))

/* The 4 digit bytes at p in every dword. */
AI __m256i bcast(const int8_t *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

/* Field f of every code byte, 0..3 (16-bit shifts: the mask drops what
 * crosses from the neighbouring byte). */
AI __m256i field(__m256i c, int f, __m256i m03) {
  return _mm256_and_si256(f ? _mm256_srli_epi16(c, 2 * f) : c, m03);
}

/* int16 block sums -> A_p in int32 (header comment). */
AI __m256i widen(__m256i s, int32_t dsum) {
  return _mm256_sub_epi32(_mm256_madd_epi16(s, _mm256_set1_epi16(1)), _mm256_set1_epi32(dsum));
}

/* The exact sums A_p of one block and term for one activation row, all 16
 * rows (codes: the block's g/16 vectors of 64 bytes). */
AI void block_sums(const uint8_t *codes, const int8_t *xd, const int32_t dsum[4], const int g, __m256i A[2][3]) {
  const __m256i m03 = _mm256_set1_epi8(3);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, b0 = a0, b1 = a0, b2 = a0;
  for (int v = 0; v < g / 16; v++) {
    __m256i c = _mm256_loadu_si256((const __m256i *)(codes + 64 * v));
    __m256i e = _mm256_loadu_si256((const __m256i *)(codes + 64 * v + 32));
#pragma GCC unroll 4
    for (int f = 0; f < 4; f++) {
      __m256i wc = field(c, f, m03), we = field(e, f, m03);
      const int8_t *x = xd + 64 * v + 16 * f; /* elements 16v + 4f .. + 3 */
      __m256i x0 = bcast(x), x1 = bcast(x + 4), x2 = bcast(x + 8);
      a0 = _mm256_add_epi16(a0, _mm256_maddubs_epi16(wc, x0)), b0 = _mm256_add_epi16(b0, _mm256_maddubs_epi16(we, x0));
      a1 = _mm256_add_epi16(a1, _mm256_maddubs_epi16(wc, x1)), b1 = _mm256_add_epi16(b1, _mm256_maddubs_epi16(we, x1));
      a2 = _mm256_add_epi16(a2, _mm256_maddubs_epi16(wc, x2)), b2 = _mm256_add_epi16(b2, _mm256_maddubs_epi16(we, x2));
      PIN6(a0, a1, a2, b0, b1, b2);
    }
  }
  A[0][0] = widen(a0, dsum[0]), A[0][1] = widen(a1, dsum[1]), A[0][2] = widen(a2, dsum[2]);
  A[1][0] = widen(b0, dsum[0]), A[1][1] = widen(b1, dsum[1]), A[1][2] = widen(b2, dsum[2]);
}

/* The same for a further term of a block: one digit (cpu_xfix.h), so
 * only plane 0; A_1 = A_2 = 0, as the three-plane sums would give. This,
 * block_sums and block_sums_t2 are written out apart on purpose: one
 * function taking the plane count and the further term as constants
 * (accumulator arrays, the same bits) ran 1.18-1.24x slower on hot data
 * (q2-avx2-hot, v29): GCC allocated its registers worse. */
AI void block_sums_d0(const uint8_t *codes, const int8_t *xd, const int32_t dsum[4], const int g, __m256i A[2][3]) {
  const __m256i m03 = _mm256_set1_epi8(3);
  __m256i a0 = _mm256_setzero_si256(), b0 = a0;
  for (int v = 0; v < g / 16; v++) {
    __m256i c = _mm256_loadu_si256((const __m256i *)(codes + 64 * v));
    __m256i e = _mm256_loadu_si256((const __m256i *)(codes + 64 * v + 32));
#pragma GCC unroll 4
    for (int f = 0; f < 4; f++) {
      __m256i x0 = bcast(xd + 64 * v + 16 * f);
      a0 = _mm256_add_epi16(a0, _mm256_maddubs_epi16(field(c, f, m03), x0));
      b0 = _mm256_add_epi16(b0, _mm256_maddubs_epi16(field(e, f, m03), x0));
    }
  }
  A[0][0] = widen(a0, dsum[0]), A[1][0] = widen(b0, dsum[0]);
  A[0][1] = A[0][2] = A[1][1] = A[1][2] = _mm256_setzero_si256();
}

/* Term 0 and a block's one further term in one pass over the codes, so
 * that the further term costs its plane's products alone (v29): the sums
 * of block_sums (A) and block_sums_d0 (E), the same integers. */
AI void block_sums_t2(const uint8_t *codes, const int8_t *xd, const int8_t *xe, const int32_t dsum[4],
                      const int32_t esum[4], const int g, __m256i A[2][3], __m256i E[2][3]) {
  const __m256i m03 = _mm256_set1_epi8(3);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  for (int v = 0; v < g / 16; v++) {
    __m256i c = _mm256_loadu_si256((const __m256i *)(codes + 64 * v));
    __m256i e = _mm256_loadu_si256((const __m256i *)(codes + 64 * v + 32));
#pragma GCC unroll 4
    for (int f = 0; f < 4; f++) {
      __m256i wc = field(c, f, m03), we = field(e, f, m03);
      const int8_t *x = xd + 64 * v + 16 * f;
      __m256i d = bcast(x);
      a0 = _mm256_add_epi16(a0, _mm256_maddubs_epi16(wc, d)), b0 = _mm256_add_epi16(b0, _mm256_maddubs_epi16(we, d));
      d = bcast(x + 4);
      a1 = _mm256_add_epi16(a1, _mm256_maddubs_epi16(wc, d)), b1 = _mm256_add_epi16(b1, _mm256_maddubs_epi16(we, d));
      d = bcast(x + 8);
      a2 = _mm256_add_epi16(a2, _mm256_maddubs_epi16(wc, d)), b2 = _mm256_add_epi16(b2, _mm256_maddubs_epi16(we, d));
      d = bcast(xe + 64 * v + 16 * f);
      a3 = _mm256_add_epi16(a3, _mm256_maddubs_epi16(wc, d)), b3 = _mm256_add_epi16(b3, _mm256_maddubs_epi16(we, d));
      PIN6(a0, a1, a2, b0, b1, b2);
      __asm__("" : "+x"(a3), "+x"(b3));
    }
  }
  A[0][0] = widen(a0, dsum[0]), A[0][1] = widen(a1, dsum[1]), A[0][2] = widen(a2, dsum[2]);
  A[1][0] = widen(b0, dsum[0]), A[1][1] = widen(b1, dsum[1]), A[1][2] = widen(b2, dsum[2]);
  E[0][0] = widen(a3, esum[0]), E[1][0] = widen(b3, esum[0]);
  E[0][1] = E[0][2] = E[1][1] = E[1][2] = _mm256_setzero_si256();
}

/* The same for two activation rows sharing each decoded code vector, all
 * 16 rows: 12 int16 accumulators, the two code vectors' fields and one
 * broadcast fill the 16 ymm registers (the codes are reloaded per field
 * rather than held: shifts and ands take memory operands). */
AI void block_sums2(const uint8_t *codes, const int8_t *xd, const int8_t *yd, const int32_t dx[4],
                    const int32_t dy[4], const int g, __m256i A[2][3], __m256i B[2][3]) {
  const __m256i m03 = _mm256_set1_epi8(3);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, e0 = a0, e1 = a0, e2 = a0;
  __m256i b0 = a0, b1 = a0, b2 = a0, f0 = a0, f1 = a0, f2 = a0;
  for (int v = 0; v < g / 16; v++) {
    const __m256i *cv = (const __m256i *)(codes + 64 * v);
#pragma GCC unroll 4
    for (int f = 0; f < 4; f++) {
      __m256i wc = field(_mm256_loadu_si256(cv), f, m03), we = field(_mm256_loadu_si256(cv + 1), f, m03);
      const int8_t *x = xd + 64 * v + 16 * f, *y = yd + 64 * v + 16 * f;
      __m256i d = bcast(x);
      a0 = _mm256_add_epi16(a0, _mm256_maddubs_epi16(wc, d)), e0 = _mm256_add_epi16(e0, _mm256_maddubs_epi16(we, d));
      d = bcast(y);
      b0 = _mm256_add_epi16(b0, _mm256_maddubs_epi16(wc, d)), f0 = _mm256_add_epi16(f0, _mm256_maddubs_epi16(we, d));
      d = bcast(x + 4);
      a1 = _mm256_add_epi16(a1, _mm256_maddubs_epi16(wc, d)), e1 = _mm256_add_epi16(e1, _mm256_maddubs_epi16(we, d));
      d = bcast(y + 4);
      b1 = _mm256_add_epi16(b1, _mm256_maddubs_epi16(wc, d)), f1 = _mm256_add_epi16(f1, _mm256_maddubs_epi16(we, d));
      d = bcast(x + 8);
      a2 = _mm256_add_epi16(a2, _mm256_maddubs_epi16(wc, d)), e2 = _mm256_add_epi16(e2, _mm256_maddubs_epi16(we, d));
      d = bcast(y + 8);
      b2 = _mm256_add_epi16(b2, _mm256_maddubs_epi16(wc, d)), f2 = _mm256_add_epi16(f2, _mm256_maddubs_epi16(we, d));
      PIN6(a0, a1, a2, e0, e1, e2);
      PIN6(b0, b1, b2, f0, f1, f2);
    }
  }
  A[0][0] = widen(a0, dx[0]), A[0][1] = widen(a1, dx[1]), A[0][2] = widen(a2, dx[2]);
  A[1][0] = widen(e0, dx[0]), A[1][1] = widen(e1, dx[1]), A[1][2] = widen(e2, dx[2]);
  B[0][0] = widen(b0, dy[0]), B[0][1] = widen(b1, dy[1]), B[0][2] = widen(b2, dy[2]);
  B[1][0] = widen(f0, dy[0]), B[1][1] = widen(f1, dy[1]), B[1][2] = widen(f2, dy[2]);
}

/* 16 rows' f64 accumulators, 4 per vector: the block sums accumulate in
 * f64 so that the rounding per output element stays a fixed few per block
 * (DESIGN.md section 5), as rows16.h's qg_acc16. */
typedef struct acc16 {
  __m256d r[4];
} acc16;

/* acc (rows 8h .. 8h + 7) += (65536 A_2 + 256 A_1 + A_0) * d * scale:
 * q2_vnni.c's fold, lane for lane. */
AI void fold8(const __m256i A[3], __m256 d, double scale, acc16 *acc, int h) {
  __m256i lo = _mm256_add_epi32(_mm256_slli_epi32(A[1], 8), A[0]);
  __m256 v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(A[2]), _mm256_set1_ps(65536.0f), _mm256_cvtepi32_ps(lo));
  __m256 vd = _mm256_mul_ps(v, d);
  const __m256d s = _mm256_set1_pd(scale);
  acc->r[2 * h] = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(vd)), s, acc->r[2 * h]);
  acc->r[2 * h + 1] = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(vd, 1)), s, acc->r[2 * h + 1]);
}

/* One block's scales: rows 0-7 and 8-15. */
typedef struct scales16 {
  __m256 d[2];
} scales16;

/* One term of one block, one activation row, all 16 rows (first: term
 * 0, three digit planes; else a further term, one). */
AI void term(const uint8_t *codes, const int8_t *xd, const qg_xfix_term *t, const scales16 *S, const int g,
             const bool first, acc16 *acc) {
  __m256i A[2][3];
  if (first)
    block_sums(codes, xd, t->dsum, g, A);
  else
    block_sums_d0(codes, xd, t->dsum, g, A);
  fold8(A[0], S->d[0], t->scale, acc, 0);
  fold8(A[1], S->d[1], t->scale, acc, 1);
}

/* A block left to the exact path (a non-finite x, or no room for terms):
 * sum_j (c_j - 1) x_j in double, IEEE semantics, times the scales; the
 * element order of q2_vnni.c's exact_block. */
AI void exact_block(const uint8_t *codes, const float *xb, const scales16 *S, const int g, acc16 *acc) {
  __m256d s[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
  const __m256i three = _mm256_set1_epi32(3), one = _mm256_set1_epi32(1);
  for (int v = 0; v < g / 16; v++)
    for (int f = 0; f < 4; f++)
      for (int t = 0; t < 4; t++) {
        const __m256d x = _mm256_set1_pd((double)xb[16 * v + 4 * f + t]);
        for (int h = 0; h < 2; h++) {
          __m256i c = _mm256_loadu_si256((const __m256i *)(codes + 64 * v + 32 * h));
          __m256i w = _mm256_sub_epi32(_mm256_and_si256(_mm256_srl_epi32(c, _mm_cvtsi32_si128(8 * t + 2 * f)), three), one);
          s[2 * h] = _mm256_add_pd(s[2 * h], _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(w)), x));
          s[2 * h + 1] =
              _mm256_add_pd(s[2 * h + 1], _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(w, 1)), x));
        }
      }
  for (int h = 0; h < 2; h++) {
    acc->r[2 * h] = _mm256_fmadd_pd(s[2 * h], _mm256_cvtps_pd(_mm256_castps256_ps128(S->d[h])), acc->r[2 * h]);
    acc->r[2 * h + 1] =
        _mm256_fmadd_pd(s[2 * h + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(S->d[h], 1)), acc->r[2 * h + 1]);
  }
}

/* One block of one activation row into acc. */
AI void row_block(const uint8_t *codes, const qg_xfix_row *xr, const float *x, int64_t b, const scales16 *S,
                  const int g, acc16 *acc) {
  const qg_xfix_block *bl = &xr->blocks[b];
  if (__builtin_expect(bl->terms == 0, 0)) {
    exact_block(codes, x + b * g, S, g, acc);
    return;
  }
  if (bl->terms == 2) { /* the common case of a further term: one pass */
    const qg_xfix_term *t1 = &xr->extra[bl->first];
    __m256i A[2][3], E[2][3];
    block_sums_t2(codes, xr->digits + 4 * b * g, xr->extra_digits + (size_t)bl->first * 4u * (size_t)g, bl->t0.dsum,
                  t1->dsum, g, A, E);
    for (int h = 0; h < 2; h++) fold8(A[h], S->d[h], bl->t0.scale, acc, h); /* term by term, as below */
    for (int h = 0; h < 2; h++) fold8(E[h], S->d[h], t1->scale, acc, h);
    return;
  }
  term(codes, xr->digits + 4 * b * g, &bl->t0, S, g, true, acc);
  for (int t = 0; t < bl->terms - 1; t++)
    term(codes, xr->extra_digits + (size_t)(bl->first + t) * 4u * (size_t)g, &xr->extra[bl->first + t], S, g, false,
         acc);
}

AI void store16(const qg_cpu_job *job, int64_t t, int64_t i, int rows, const acc16 *acc) {
  float v[16];
  for (int q = 0; q < 4; q++) _mm_storeu_ps(v + 4 * q, _mm256_cvtpd_ps(acc->r[q]));
  for (int r = 0; r < rows; r++) qg_cpu_store(job, t, i + r, v[r]);
}

/* A block of a group narrower than 16 rows, widened to 16 lanes (zero
 * scales and codes) so that one code path serves every group. */
AI const uint8_t *pad_block(const uint8_t *q, int rows, const int g, uint8_t *pad) {
  memset(pad, 0, 32u + 64u * (size_t)(g / 16));
  memcpy(pad, q, 2u * (size_t)rows);
  for (int v = 0; v < g / 16; v++) memcpy(pad + 32 + 64 * v, q + 2 * rows + 4 * rows * v, 4u * (size_t)rows);
  return pad;
}

/* Output rows [i, i + rows) of a group for activation row t, or rows t and
 * t + 1 when pair (sharing the decoded codes). */
AI void group(const qg_cpu_job *job, int64_t i, int rows, int64_t t, const bool pair, const int g) {
  const qgemv_weight_desc *d = &job->w->desc;
  const int64_t k = d->k, nb = k / g;
  const size_t vb = (size_t)rows * qg_interleave_q2_block(g);
  const qg_xfix_row *xr = &job->xq[t];
  const float *x0 = job->xn + (size_t)t * (size_t)k;
  const uint8_t *q = (const uint8_t *)d->data + (size_t)i * (size_t)nb * qg_interleave_q2_block(g);
  _Alignas(32) uint8_t pad[32 + 64 * (QG_XFIX_BLOCK_MAX / 16)];
  acc16 a0, a1;
  for (int r = 0; r < 4; r++) a0.r[r] = a1.r[r] = _mm256_setzero_pd();
  for (int64_t b = 0; b < nb; b++, q += vb) {
    qg_prefetch_ahead(q, vb);
    const uint8_t *blk = rows < 16 ? pad_block(q, rows, g, pad) : q, *codes = blk + 32;
    scales16 S = {{_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk)),
                   _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(blk + 16)))}};
    if (pair && __builtin_expect(xr[0].blocks[b].terms == 1 && xr[1].blocks[b].terms == 1, 1)) {
      const qg_xfix_term *t0 = &xr[0].blocks[b].t0, *t1 = &xr[1].blocks[b].t0;
      __m256i A[2][3], B[2][3];
      block_sums2(codes, xr[0].digits + 4 * b * g, xr[1].digits + 4 * b * g, t0->dsum, t1->dsum, g, A, B);
      for (int h = 0; h < 2; h++) fold8(A[h], S.d[h], t0->scale, &a0, h), fold8(B[h], S.d[h], t1->scale, &a1, h);
      continue;
    }
    row_block(codes, &xr[0], x0, b, &S, g, &a0);
    if (pair) row_block(codes, &xr[1], x0 + k, b, &S, g, &a1);
  }
  store16(job, t, i, rows, &a0);
  if (pair) store16(job, t + 1, i, rows, &a1);
}

AI void rows_g(const qg_cpu_job *job, int64_t row0, int64_t row1, const int g) {
  for (int64_t i = row0; i < row1; i += 16) {
    const int rows = row1 - i < 16 ? (int)(row1 - i) : 16;
    int64_t t = 0;
    for (; t + 2 <= job->m; t += 2) group(job, i, rows, t, true, g);
    if (t < job->m) group(job, i, rows, t, false, g);
  }
}

QG_TARGET void qg_q2_avx2_rows_g64(const qg_cpu_job *job, int64_t row0, int64_t row1) { rows_g(job, row0, row1, 64); }
QG_TARGET void qg_q2_avx2_rows_g128(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  rows_g(job, row0, row1, 128);
}
#else
typedef int qg_q2_avx2_absent; /* not x86-64 */
#endif
