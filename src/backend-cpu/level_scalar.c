/* Portable level: plain C f32 arithmetic through the same blocked loop as
 * the SIMD levels (kernel_tmpl.h) with one-lane "vectors": each block
 * decoded once per tile and used for all its activation rows, the block
 * scale applied once to the block's sum. The fallback on CPUs without a
 * SIMD level, and a readable statement of what the SIMD levels compute.
 * Per code byte: NF4 2 table loads, Q2_0 4 shift-and-mask + 4 table loads. */
#include <math.h>
#include "../core/layouts.h"
#include "cpu.h"

#define QG_TARGET
#define QG_PRIM static inline __attribute__((always_inline))

typedef float qv;
#define QV_LANES 1
#define QV_REG(v) ((void)0)

QG_PRIM qv qv_zero(void) { return 0.0f; }
QG_PRIM qv qv_set1(float f) { return f; }
QG_PRIM qv qv_load(const float *p) { return *p; }
QG_PRIM void qv_store(float *p, qv v) { *p = v; }
QG_PRIM qv qv_add(qv a, qv b) { return a + b; }
/* Where the target has a fast FMA, the compiler may contract a * b + c into
 * one in some copies of an inlined loop and not in others (GCC's default
 * -ffp-contract=fast; seen on AArch64 with tiles of different sizes), which
 * would break the batched == single-row identity. So: an explicit fmaf
 * there, and a * b + c only where no FMA exists to contract into. */
#ifdef __FP_FAST_FMAF
QG_PRIM qv qv_fma(qv a, qv b, qv c) { return fmaf(a, b, c); }
#else
QG_PRIM qv qv_fma(qv a, qv b, qv c) { return a * b + c; }
#endif
QG_PRIM void qv_add_f64(double *a, qv v) { *a += (double)v; }

typedef struct qg_consts {
  float q2[4];
} qg_consts;

QG_PRIM void qg_consts_init(qg_consts *c) {
  for (int v = 0; v < 4; v++) c->q2[v] = (float)(v - 1);
}

#define NF4_CW 2
#define NF4_CV 2
QG_PRIM void nf4_decode(const uint8_t *codes, const qg_consts *c, qv *w) {
  (void)c;
  w[0] = qg_nf4_lut[codes[0] & 0xf];
  w[1] = qg_nf4_lut[codes[0] >> 4];
}

#define Q2_CW 4
#define Q2_CV 4
QG_PRIM void q2_decode(const uint8_t *codes, const qg_consts *c, qv *w) {
  for (int q = 0; q < 4; q++) w[q] = c->q2[(codes[0] >> (2 * q)) & 3];
}

QG_PRIM float q2_scale(const uint8_t *p) { return qg_f16_to_f32((uint16_t)(p[0] | (p[1] << 8))); }

#define QG_RB 2
#ifndef QG_RBB
#define QG_RBB 4
#endif
#define QG_BR 1
#define QG_BT 4
#define QG_NCH 4
#include "kernel_tmpl.h"

static bool always(void) { return true; }

const qg_cpu_level qg_cpu_level_scalar = {
    .name = "scalar",
    .wants_double = false,
    .available = always,
    .kernels = QG_TMPL_KERNELS,
    .x_order = NULL, /* natural order */
};
