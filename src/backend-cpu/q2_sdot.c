/*
 * Q2_0 by integer dot products with AArch64 SDOT (the neondot level): the
 * arithmetic of q2_vnni.c with 4 lanes, weights in groups of 4 rows
 * (cpu_interleave.h), activations in block fixed point (cpu_xfix.h).
 *
 * Per group, block and term, in every lane (a weight row): A_p = sum_j
 * (c_j - 1) d_pj exactly in int32 (SDOT by element: 4 code bytes times the
 * 4 digits of plane p, lane p of the 16 bytes that hold the 4 planes of 4
 * consecutive activations; the accumulators start at minus the digit
 * sums); v = 65536 A_2 + 256 A_1 + A_0 with one f32 rounding,
 * v * d another, acc += that * 2^e in f64, y = (float)acc.
 *
 * Per 4 rows x 16 elements (64 weights): 1 load, 4 shift-and pairs (byte
 * shifts: no field crosses a byte), 4 loads of x, 12 SDOT (16 before v7:
 * the fourth digit plane is 0, cpu_xfix.h). A block's further term has
 * one digit, so 4 SDOT more, in term 0's pass when it is the only one.
 */
#if defined(__aarch64__)
#include <arm_neon.h>
#include <stdbool.h>
#include <string.h>

#include "cpu.h"
#include "cpu_interleave.h"
#include "cpu_xfix.h"

#define QG_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))
#define AI static inline __attribute__((always_inline)) QG_TARGET

/* One block of a group: 4 rows' scales and codes (a narrower last group
 * is copied here, zero-padded to 4 lanes). */
typedef struct blk4 {
  const uint8_t *codes; /* g/16 vectors of 16 bytes */
  float32x4_t d;        /* the rows' scales */
} blk4;

/* The four 2-bit fields of 16 code bytes (4 rows x 4 elements each). */
AI void fields(const uint8_t *codes, int8x16_t w[4]) {
  const uint8x16_t three = vdupq_n_u8(3), c = vld1q_u8(codes);
  w[0] = vreinterpretq_s8_u8(vandq_u8(c, three));
  w[1] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(c, 2), three));
  w[2] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(c, 4), three));
  w[3] = vreinterpretq_s8_u8(vshrq_n_u8(c, 6));
}

/* a[p] += the fields' products with digit plane p of 16 elements at x,
 * p = 0 .. planes - 1. */
AI void dots(int32x4_t *a, const int8x16_t w[4], const int8_t *x, const int planes) {
  for (int f = 0; f < 4; f++) {
    const int8x16_t xf = vld1q_s8(x + 16 * f);
    a[0] = vdotq_laneq_s32(a[0], w[f], xf, 0);
    if (planes > 1) a[1] = vdotq_laneq_s32(a[1], w[f], xf, 1), a[2] = vdotq_laneq_s32(a[2], w[f], xf, 2);
  }
}

/* Planes 0-2 (a term's fourth digit is 0, |q| <= 2^22: cpu_xfix.h). */
AI void block_sums(const blk4 *B, const int8_t *xd, const int32_t dsum[4], const int g, int32x4_t A[3]) {
  A[0] = vdupq_n_s32(-dsum[0]), A[1] = vdupq_n_s32(-dsum[1]), A[2] = vdupq_n_s32(-dsum[2]);
  for (int v = 0; v < g / 16; v++) {
    int8x16_t w[4];
    fields(B->codes + 16 * v, w);
    dots(A, w, xd + 64 * v, 3);
  }
}

/* A further term of a block: one digit (cpu_xfix.h), so plane 0 alone;
 * A_1 = A_2 = 0, as the three-plane sums would give (q2_avx2.c, v29). */
AI void block_sums_d0(const blk4 *B, const int8_t *xd, const int32_t dsum[4], const int g, int32x4_t A[3]) {
  A[0] = vdupq_n_s32(-dsum[0]), A[1] = A[2] = vdupq_n_s32(0);
  for (int v = 0; v < g / 16; v++) {
    int8x16_t w[4];
    fields(B->codes + 16 * v, w);
    dots(A, w, xd + 64 * v, 1);
  }
}

/* Term 0 and a block's one further term in one pass over the codes: the
 * sums of block_sums (A) and block_sums_d0 (E), the same integers. */
AI void block_sums_t2(const blk4 *B, const int8_t *xd, const int8_t *xe, const int32_t dsum[4], const int32_t esum[4],
                      const int g, int32x4_t A[3], int32x4_t E[3]) {
  A[0] = vdupq_n_s32(-dsum[0]), A[1] = vdupq_n_s32(-dsum[1]), A[2] = vdupq_n_s32(-dsum[2]);
  E[0] = vdupq_n_s32(-esum[0]), E[1] = E[2] = vdupq_n_s32(0);
  for (int v = 0; v < g / 16; v++) {
    int8x16_t w[4];
    fields(B->codes + 16 * v, w);
    dots(A, w, xd + 64 * v, 3);
    dots(E, w, xe + 64 * v, 1);
  }
}

typedef struct acc4 {
  float64x2_t lo, hi;
} acc4;

AI void fold(const int32x4_t A[3], float32x4_t d, double scale, acc4 *acc) {
  int32x4_t lo = vaddq_s32(vshlq_n_s32(A[1], 8), A[0]);
  float32x4_t v = vfmaq_n_f32(vcvtq_f32_s32(lo), vcvtq_f32_s32(A[2]), 65536.0f);
  float32x4_t vd = vmulq_f32(v, d);
  const float64x2_t s = vdupq_n_f64(scale);
  acc->lo = vfmaq_f64(acc->lo, vcvt_f64_f32(vget_low_f32(vd)), s);
  acc->hi = vfmaq_f64(acc->hi, vcvt_high_f64_f32(vd), s);
}

/* A block left to the exact path: sum_j (c_j - 1) x_j in double. */
AI void exact_block(const blk4 *B, const float *xb, const int g, acc4 *acc) {
  double s[4] = {0, 0, 0, 0};
  for (int j = 0; j < g; j++) {
    int v = j / 16, f = (j % 16) / 4, t = j % 4;
    for (int r = 0; r < 4; r++) s[r] += (double)(((B->codes[16 * v + 4 * r + t] >> (2 * f)) & 3) - 1) * (double)xb[j];
  }
  float dd[4];
  vst1q_f32(dd, B->d);
  acc->lo = vaddq_f64(acc->lo, (float64x2_t){s[0] * dd[0], s[1] * dd[1]});
  acc->hi = vaddq_f64(acc->hi, (float64x2_t){s[2] * dd[2], s[3] * dd[3]});
}

AI void row_block(const blk4 *B, const qg_xfix_row *xr, const float *x, int64_t b, const int g, acc4 *acc) {
  const qg_xfix_block *bl = &xr->blocks[b];
  if (__builtin_expect(bl->terms == 0, 0)) {
    exact_block(B, x + b * g, g, acc);
    return;
  }
  int32x4_t A[3];
  if (bl->terms == 2) { /* the common case of a further term: one pass */
    const qg_xfix_term *t1 = &xr->extra[bl->first];
    int32x4_t E[3];
    block_sums_t2(B, xr->digits + 4 * b * g, xr->extra_digits + (size_t)bl->first * 4u * (size_t)g, bl->t0.dsum,
                  t1->dsum, g, A, E);
    fold(A, B->d, bl->t0.scale, acc); /* term by term, as below */
    fold(E, B->d, t1->scale, acc);
    return;
  }
  block_sums(B, xr->digits + 4 * b * g, bl->t0.dsum, g, A);
  fold(A, B->d, bl->t0.scale, acc);
  for (int t = 0; t < bl->terms - 1; t++) {
    const qg_xfix_term *e = &xr->extra[bl->first + t];
    block_sums_d0(B, xr->extra_digits + (size_t)(bl->first + t) * 4u * (size_t)g, e->dsum, g, A);
    fold(A, B->d, e->scale, acc);
  }
}

AI void store4(const qg_cpu_job *job, int64_t t, int64_t i, int rows, const acc4 *acc) {
  float v[4];
  vst1q_f32(v, vcombine_f32(vcvt_f32_f64(acc->lo), vcvt_f32_f64(acc->hi)));
  for (int r = 0; r < rows; r++) qg_cpu_store(job, t, i + r, v[r]);
}

/* Output rows [i, i + rows) of one group for every activation row. */
AI void group(const qg_cpu_job *job, int64_t i, int rows, const int g) {
  const qgemv_weight_desc *d = &job->w->desc;
  const int64_t k = d->k, nb = k / g;
  const size_t rb = qg_interleave_q2_block(g), vb = (size_t)rows * rb;
  const uint8_t *p = (const uint8_t *)d->data + (size_t)i * (size_t)nb * rb;
  uint8_t pad[4 * 34]; /* a narrower group's block, widened to 4 lanes */
  for (int64_t t = 0; t < job->m; t++) {
    acc4 acc = {vdupq_n_f64(0.0), vdupq_n_f64(0.0)};
    const uint8_t *q = p;
    for (int64_t b = 0; b < nb; b++, q += vb) {
      const uint8_t *blk = q;
      if (rows < 4) {
        memset(pad, 0, sizeof pad);
        memcpy(pad, q, 2u * (size_t)rows);
        for (int v = 0; v < g / 16; v++) memcpy(pad + 8 + 16 * v, q + 2 * rows + 4 * rows * v, 4u * (size_t)rows);
        blk = pad;
      }
      uint16_t h[4];
      memcpy(h, blk, sizeof h);
      float f[4] = {qg_f16_to_f32(h[0]), qg_f16_to_f32(h[1]), qg_f16_to_f32(h[2]), qg_f16_to_f32(h[3])};
      blk4 B = {.codes = blk + 8, .d = vld1q_f32(f)};
      row_block(&B, &job->xq[t], job->xn + (size_t)t * (size_t)k, b, g, &acc);
    }
    store4(job, t, i, rows, &acc);
  }
}

AI void rows_g(const qg_cpu_job *job, int64_t row0, int64_t row1, const int g) {
  for (int64_t i = row0; i < row1; i += 4) group(job, i, row1 - i < 4 ? (int)(row1 - i) : 4, g);
}

QG_TARGET void qg_q2_sdot_rows_g64(const qg_cpu_job *job, int64_t row0, int64_t row1) { rows_g(job, row0, row1, 64); }
QG_TARGET void qg_q2_sdot_rows_g128(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  rows_g(job, row0, row1, 128);
}
#else
typedef int qg_q2_sdot_absent; /* not AArch64 */
#endif
