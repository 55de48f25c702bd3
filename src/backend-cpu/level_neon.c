/*
 * AArch64 AdvSIMD (NEON) level, 4 f32 lanes; compiled only for AArch64
 * (baseline there, so no target attribute is needed).
 *
 * NF4, 32 weights (16 code bytes) per decode, 26 instructions:
 *   and/shift split the bytes into 16 low and 16 high nibbles; for each,
 *   4 tbl (vqtbl1q_u8) look the codes up in the four byte planes of the f32
 *   table, and zip1/zip2 on bytes then on halfwords reassemble 16 exact f32
 *   values in order: vector q of the low (high) half holds elements
 *   2(4q..4q+3) (+1). x order transpose(16, 2), as on AVX-512.
 *   Per code byte: 1.6 decode instructions + 0.5 FMA.
 * Q2_0, 64 weights (16 code bytes) per decode, 40 instructions:
 *   for each 2-bit field q of the 16 bytes: shift and mask; two tbl give
 *   the two upper bytes of the f32 value of code - 1 (the lower two are 0
 *   for -1, 0, 1, 2), zip1/zip2 pair them into 16-bit bf16 patterns and
 *   shll #16 widens those to f32. Vector 4q + j holds field q of bytes
 *   4j..4j+3: transpose(16, 4).
 *   Per code byte: 2.5 decode instructions + 1 FMA.
 * Two partial sums per output (QG_NCH 2): a 4-lane FMA chain over a Q2_0
 * block is 32 deep; two halve the latency the out-of-order core must hide.
 */
#if defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#include "../core/layouts.h"
#include "cpu.h"

#define QG_TARGET
#define QG_PRIM static inline __attribute__((always_inline))

typedef float32x4_t qv;
/* An empty asm that claims to change v: the value must sit in a register. */
#define QV_REG(v) __asm__("" : "+w"(v))
#define QV_LANES 4

QG_PRIM qv qv_zero(void) { return vdupq_n_f32(0.0f); }
QG_PRIM qv qv_set1(float f) { return vdupq_n_f32(f); }
QG_PRIM qv qv_load(const float *p) { return vld1q_f32(p); }
QG_PRIM void qv_store(float *p, qv v) { vst1q_f32(p, v); }
QG_PRIM qv qv_add(qv a, qv b) { return vaddq_f32(a, b); }
QG_PRIM qv qv_fma(qv a, qv b, qv c) { return vfmaq_f32(c, a, b); }

QG_PRIM void qv_add_f64(double *a, qv v) {
  vst1q_f64(a, vaddq_f64(vld1q_f64(a), vcvt_f64_f32(vget_low_f32(v))));
  vst1q_f64(a + 2, vaddq_f64(vld1q_f64(a + 2), vcvt_high_f64_f32(v)));
}

typedef struct qg_consts {
  uint8x16_t plane[4]; /* byte b of each NF4 table value */
  uint8x16_t q2b2, q2b3; /* bytes 2 and 3 of -1.0, 0.0, 1.0, 2.0 */
} qg_consts;

QG_PRIM void qg_consts_init(qg_consts *c) {
  uint8_t planes[4][16];
  qg_nf4_byte_planes(planes);
  for (int p = 0; p < 4; p++) c->plane[p] = vld1q_u8(planes[p]);
  uint8_t b2[16] = {0}, b3[16] = {0};
  for (int v = 0; v < 4; v++) {
    float f = (float)(v - 1);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    b2[v] = (uint8_t)(bits >> 16);
    b3[v] = (uint8_t)(bits >> 24);
  }
  c->q2b2 = vld1q_u8(b2);
  c->q2b3 = vld1q_u8(b3);
}

/* 16 NF4 codes (one per byte) -> 16 f32 table values, in order. */
QG_PRIM void nf4_expand(uint8x16_t idx, const qg_consts *c, qv *w) {
  uint8x16_t b0 = vqtbl1q_u8(c->plane[0], idx), b1 = vqtbl1q_u8(c->plane[1], idx);
  uint8x16_t b2 = vqtbl1q_u8(c->plane[2], idx), b3 = vqtbl1q_u8(c->plane[3], idx);
  uint16x8_t lo01 = vreinterpretq_u16_u8(vzip1q_u8(b0, b1)), hi01 = vreinterpretq_u16_u8(vzip2q_u8(b0, b1));
  uint16x8_t lo23 = vreinterpretq_u16_u8(vzip1q_u8(b2, b3)), hi23 = vreinterpretq_u16_u8(vzip2q_u8(b2, b3));
  w[0] = vreinterpretq_f32_u16(vzip1q_u16(lo01, lo23));
  w[1] = vreinterpretq_f32_u16(vzip2q_u16(lo01, lo23));
  w[2] = vreinterpretq_f32_u16(vzip1q_u16(hi01, hi23));
  w[3] = vreinterpretq_f32_u16(vzip2q_u16(hi01, hi23));
}

#define NF4_CW 32
#define NF4_CV 8
QG_PRIM void nf4_decode(const uint8_t *codes, const qg_consts *c, qv *w) {
  uint8x16_t v = vld1q_u8(codes);
  nf4_expand(vandq_u8(v, vdupq_n_u8(0x0f)), c, w);
  nf4_expand(vshrq_n_u8(v, 4), c, w + 4);
}

/* 16 Q2_0 codes (one per byte, 0..3) -> 16 f32 values code - 1, in order. */
QG_PRIM void q2_expand(uint8x16_t code, const qg_consts *c, qv *w) {
  uint8x16_t b2 = vqtbl1q_u8(c->q2b2, code), b3 = vqtbl1q_u8(c->q2b3, code);
  uint16x8_t lo = vreinterpretq_u16_u8(vzip1q_u8(b2, b3)), hi = vreinterpretq_u16_u8(vzip2q_u8(b2, b3));
  w[0] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(lo), 16));
  w[1] = vreinterpretq_f32_u32(vshll_high_n_u16(lo, 16));
  w[2] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(hi), 16));
  w[3] = vreinterpretq_f32_u32(vshll_high_n_u16(hi, 16));
}

#define Q2_CW 64
#define Q2_CV 16
QG_PRIM void q2_decode(const uint8_t *codes, const qg_consts *c, qv *w) {
  uint8x16_t v = vld1q_u8(codes), three = vdupq_n_u8(3);
  q2_expand(vandq_u8(v, three), c, w);
  q2_expand(vandq_u8(vshrq_n_u8(v, 2), three), c, w + 4);
  q2_expand(vandq_u8(vshrq_n_u8(v, 4), three), c, w + 8);
  q2_expand(vshrq_n_u8(v, 6), c, w + 12);
}

QG_PRIM float q2_scale(const uint8_t *p) {
  uint16_t h;
  memcpy(&h, p, sizeof h);
  return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}

#define QG_RB 4
#ifndef QG_RBB
#define QG_RBB 8
#endif
#define QG_BR 2
#define QG_BT 2
#define QG_NCH 2
#include "kernel_tmpl.h"

static void neon_x_order(qg_layout_id id, qg_cpu_xorder *out) {
  if (id == QG_LAYOUT_NF4)
    qg_cpu_xorder_transpose(16, 2, out);
  else
    qg_cpu_xorder_transpose(16, 4, out);
}

/* The read probe's folds: a pair load into its accumulator, and the four
 * accumulators into one word (every 64-bit word of the buffer XORed in). */
static inline uint64x2_t fold_pair(uint64x2_t acc, uint64x2x2_t v) {
  return veorq_u64(acc, veorq_u64(v.val[0], v.val[1]));
}
static inline uint64_t fold_lanes(uint64x2_t a0, uint64x2_t a1, uint64x2_t a2, uint64x2_t a3) {
  const uint64x2_t a = veorq_u64(veorq_u64(a0, a1), veorq_u64(a2, a3));
  return vgetq_lane_u64(a, 0) ^ vgetq_lane_u64(a, 1);
}

/* Four independent 16-byte pair loads per step (see avx2_read_stream). */
static uint64_t neon_read_stream(const void *buf, size_t bytes) {
  const uint64_t *p = buf;
  uint64x2_t a0 = vdupq_n_u64(0), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < bytes / 8; i += 16) {
    uint64x2x2_t v0 = vld1q_u64_x2(p + i), v1 = vld1q_u64_x2(p + i + 4);
    uint64x2x2_t v2 = vld1q_u64_x2(p + i + 8), v3 = vld1q_u64_x2(p + i + 12);
    a0 = fold_pair(a0, v0);
    a1 = fold_pair(a1, v1);
    a2 = fold_pair(a2, v2);
    a3 = fold_pair(a3, v3);
  }
  return fold_lanes(a0, a1, a2, a3);
}

/* The two halves of the buffer in lockstep (bytes a multiple of 256:
 * halves of 128), two 32-byte pair loads of each per step, as
 * avx512_read_stream2; run under qemu (arm-check: test_cpu_levels' probe
 * call), not yet timed on an Arm machine. */
static uint64_t neon_read_stream2(const void *buf, size_t bytes) {
  const uint64_t *p = buf, *q = p + bytes / 16;
  uint64x2_t a0 = vdupq_n_u64(0), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < bytes / 16; i += 8) {
    uint64x2x2_t v0 = vld1q_u64_x2(p + i), v1 = vld1q_u64_x2(p + i + 4);
    uint64x2x2_t v2 = vld1q_u64_x2(q + i), v3 = vld1q_u64_x2(q + i + 4);
    a0 = fold_pair(a0, v0);
    a1 = fold_pair(a1, v1);
    a2 = fold_pair(a2, v2);
    a3 = fold_pair(a3, v3);
  }
  return fold_lanes(a0, a1, a2, a3);
}

const qg_cpu_level qg_cpu_level_neon = {
    .name = "neon",
    .wants_double = false,
    .available = qg_cpu_has_neon,
    .kernels = QG_TMPL_KERNELS,
    .x_order = neon_x_order,
    .read_stream = neon_read_stream,
    .read_stream2 = neon_read_stream2,
};

/* NF4 as above; Q2_0 by integer dot products (q2_sdot.c), x in natural order. */
static void neondot_x_order(qg_layout_id id, qg_cpu_xorder *out) {
  if (id == QG_LAYOUT_NF4)
    qg_cpu_xorder_transpose(16, 2, out);
  else
    qg_cpu_xorder_transpose(1, 1, out);
}

const qg_cpu_level qg_cpu_level_neondot = {
    .name = "neondot",
    .wants_double = false,
    .available = qg_cpu_has_neondot,
    .kernels = {[QG_LAYOUT_NF4] = QG_TMPL_KERNEL(rows_nf4),
                [QG_LAYOUT_Q2_G64] = {.rows = qg_q2_sdot_rows_g64, .group_rows = 4, .xfix = qg_xfix_term_portable},
                [QG_LAYOUT_Q2_G128] = {.rows = qg_q2_sdot_rows_g128, .group_rows = 4, .xfix = qg_xfix_term_portable}},
    .x_order = neondot_x_order,
    .read_stream = neon_read_stream,
    .read_stream2 = neon_read_stream2,
};
#else
#include "cpu.h"

/* Not AArch64: the levels are known by name but not built. */
const qg_cpu_level qg_cpu_level_neon = {.name = "neon"};
const qg_cpu_level qg_cpu_level_neondot = {.name = "neondot"};
#endif
