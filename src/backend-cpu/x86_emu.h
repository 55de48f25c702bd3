/*
 * The AVX-512 and AMX intrinsics of the CPU levels, emulated, for
 * proving those levels on a machine without them (scripts/x86-emu-check.sh,
 * a build with -DQG_X86_EMU): x86_intrin.h includes this header in place
 * of <immintrin.h> there. The arithmetic is the instructions' as Intel
 * documents it, so that the suites' bit-for-bit checks between levels and
 * their accuracy checks against the oracle hold as they do on hardware;
 * what the emulation cannot prove is speed, and encodings (GCC's own
 * codegen of the real intrinsics), which the GPU machine's host proves.
 *
 * Most AVX-512 intrinsics come from SIMDe (libsimde-dev), a well-kept
 * portable implementation; this file adds those SIMDe 0.7.4 lacks or
 * implements other than the hardware does (vscalefps flushes subnormals
 * there), the AMX tile instructions, and a rewrite of the levels'
 * target attributes to AVX2 so that GCC emits no AVX-512 instruction.
 */
#ifndef QG_X86_EMU_H
#define QG_X86_EMU_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(QG_X86_EMU_TEST)
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#endif

#define QE static inline __attribute__((always_inline, unused))

/* ---- Lane access: a vector as arrays, by value. ---- */
typedef union qe_v512 {
  __m512i i;
  __m512 f;
  __m512d d;
  int8_t i8[64];
  uint8_t u8[64];
  int16_t i16[32];
  uint16_t u16[32];
  int32_t i32[16];
  float f32[16];
  double f64[8];
} qe_v512;

QE qe_v512 qe_zero(void) {
  qe_v512 r;
  memset(&r, 0, sizeof r);
  return r;
}
QE qe_v512 qe_i(__m512i v) {
  qe_v512 r;
  r.i = v;
  return r;
}
QE qe_v512 qe_f(__m512 v) {
  qe_v512 r;
  r.f = v;
  return r;
}
QE qe_v512 qe_d(__m512d v) {
  qe_v512 r;
  r.d = v;
  return r;
}

/* ---- AVX-512 F / BW / VL intrinsics SIMDe 0.7.4 does not have. ---- */

QE __m512i qe_srai_epi32(__m512i a, unsigned n) {
  qe_v512 v = qe_i(a);
  for (int l = 0; l < 16; l++) v.i32[l] = n > 31 ? (v.i32[l] < 0 ? -1 : 0) : v.i32[l] >> n;
  return v.i;
}

/* Masked loads read only the selected elements (the hardware suppresses
 * faults on the others, and the kernels rely on it at a matrix's end). */
QE __m512i qe_maskz_loadu_epi32(uint16_t k, const void *p) {
  qe_v512 v = qe_zero();
  for (int l = 0; l < 16; l++)
    if ((k >> l) & 1) memcpy(&v.i32[l], (const char *)p + 4 * l, 4);
  return v.i;
}

QE __m512 qe_maskz_loadu_ps(uint16_t k, const void *p) { return qe_i(qe_maskz_loadu_epi32(k, p)).f; }

QE __m256i qe_256_maskz_loadu_epi16(uint16_t k, const void *p) {
  int16_t h[16] = {0};
  for (int l = 0; l < 16; l++)
    if ((k >> l) & 1) memcpy(&h[l], (const char *)p + 2 * l, 2);
  return _mm256_loadu_si256((const __m256i *)h);
}

/* vcmpps with NEQ_UQ: true where either is NaN, as C's != */
QE uint16_t qe_cmpneq_ps_mask(__m512 a, __m512 b) {
  qe_v512 x = qe_f(a), y = qe_f(b);
  uint16_t k = 0;
  for (int l = 0; l < 16; l++) k |= (uint16_t)((x.f32[l] != y.f32[l]) << l);
  return k;
}

/* vpmovdb: truncation */
QE __m128i qe_cvtepi32_epi8(__m512i a) {
  qe_v512 v = qe_i(a);
  int8_t b[16];
  for (int l = 0; l < 16; l++) b[l] = (int8_t)(uint8_t)(uint32_t)v.i32[l];
  return _mm_loadu_si128((const __m128i *)b);
}

QE __m512i qe_cvtepu8_epi32(__m128i a) {
  uint8_t b[16];
  _mm_storeu_si128((__m128i *)b, a);
  qe_v512 v;
  for (int l = 0; l < 16; l++) v.i32[l] = b[l];
  return v.i;
}

/* int32 -> f32 rounds to nearest even (the default MXCSR), as C's cast */
QE __m512 qe_cvtepi32_ps(__m512i a) {
  qe_v512 v = qe_i(a);
  for (int l = 0; l < 16; l++) v.f32[l] = (float)v.i32[l];
  return v.f;
}

QE __m512d qe_cvtepi32_pd(__m256i a) {
  int32_t s[8];
  _mm256_storeu_si256((__m256i *)s, a);
  qe_v512 v;
  for (int l = 0; l < 8; l++) v.f64[l] = s[l];
  return v.d;
}

QE __m512d qe_cvtps_pd(__m256 a) {
  float s[8];
  _mm256_storeu_ps(s, a);
  qe_v512 v;
  for (int l = 0; l < 8; l++) v.f64[l] = s[l];
  return v.d;
}

QE __m256 qe_cvtpd_ps(__m512d a) {
  qe_v512 v = qe_d(a);
  float s[8];
  for (int l = 0; l < 8; l++) s[l] = (float)v.f64[l];
  return _mm256_loadu_ps(s);
}

/* The 256-bit instructions on each half: the same rounding (vcvtps2dq:
 * nearest even, 0x80000000 out of range) and the same f16 conversion. */
QE __m512i qe_cvtps_epi32(__m512 a) {
  qe_v512 v = qe_f(a), r;
  _mm256_storeu_si256((__m256i *)&r.i32[0], _mm256_cvtps_epi32(_mm256_loadu_ps(&v.f32[0])));
  _mm256_storeu_si256((__m256i *)&r.i32[8], _mm256_cvtps_epi32(_mm256_loadu_ps(&v.f32[8])));
  return r.i;
}

QE __m512 qe_cvtph_ps(__m256i a) {
  qe_v512 r;
  _mm256_storeu_ps(&r.f32[0], _mm256_cvtph_ps(_mm256_castsi256_si128(a)));
  _mm256_storeu_ps(&r.f32[8], _mm256_cvtph_ps(_mm256_extracti128_si256(a, 1)));
  return r.f;
}

/* vpermilps: each 128-bit lane picks among its own 4 floats */
QE __m512 qe_permutevar_ps(__m512 a, __m512i idx) {
  qe_v512 v = qe_f(a), s = qe_i(idx), r;
  for (int l = 0; l < 16; l++) r.f32[l] = v.f32[(l & ~3) + (s.i32[l] & 3)];
  return r.f;
}

/* vscalefps: a 2^floor(b), rounded once (so exact unless it underflows
 * or overflows), subnormals kept: the default MXCSR (DAZ and FTZ off).
 * The kernels pass finite b; NaN propagates as the hardware's does. */
QE float qe_scalef1(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  float f = floorf(b);
  int n = f > 400.0f ? 400 : f < -400.0f ? -400 : (int)f;
  return ldexpf(a, n);
}
QE __m512 qe_scalef_ps(__m512 a, __m512 b) {
  qe_v512 x = qe_f(a), y = qe_f(b);
  for (int l = 0; l < 16; l++) x.f32[l] = qe_scalef1(x.f32[l], y.f32[l]);
  return x.f;
}
QE __m512 qe_mask_scalef_ps(__m512 src, uint16_t k, __m512 a, __m512 b) {
  qe_v512 r = qe_f(src), s = qe_f(qe_scalef_ps(a, b));
  for (int l = 0; l < 16; l++)
    if ((k >> l) & 1) r.f32[l] = s.f32[l];
  return r.f;
}

/* The reductions are sequences GCC's headers define; the same order
 * (upper half + lower half, then again, then the last pair) gives the
 * same f64 rounding. */
QE int qe_reduce_add_epi32(__m512i a) {
  qe_v512 v = qe_i(a);
  uint32_t s = 0;
  for (int l = 0; l < 16; l++) s += (uint32_t)v.i32[l]; /* wraps, as vpaddd */
  return (int)s;
}

QE double qe_reduce_add_pd(__m512d a) {
  qe_v512 v = qe_d(a);
  double t[4], u[2];
  for (int l = 0; l < 4; l++) t[l] = v.f64[4 + l] + v.f64[l];
  for (int l = 0; l < 2; l++) u[l] = t[2 + l] + t[l];
  return u[0] + u[1];
}

/* vmaxps's rule: the second operand where either is NaN or both are 0 */
QE float qe_max1(float a, float b) { return a > b ? a : b; }
QE float qe_reduce_max_ps(__m512 a) {
  qe_v512 v = qe_f(a);
  float t[8], u[4], w[2];
  for (int l = 0; l < 8; l++) t[l] = qe_max1(v.f32[8 + l], v.f32[l]);
  for (int l = 0; l < 4; l++) u[l] = qe_max1(t[4 + l], t[l]);
  for (int l = 0; l < 2; l++) w[l] = qe_max1(u[l], u[2 + l]);
  return qe_max1(w[0], w[1]);
}

/* ---- AMX: the tile state of the calling thread and its instructions,
 * with the checks whose failure is #UD on hardware made fatal here. ---- */

typedef struct qe_tilecfg {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} __attribute__((packed)) qe_tilecfg;

typedef struct qe_amx_state {
  qe_tilecfg cfg;
  int configured;
  uint8_t t[8][16][64];
} qe_amx_state;

static _Thread_local qe_amx_state qe_amx;

__attribute__((noreturn, unused)) static void qe_amx_fault(const char *what, int tile) {
  fprintf(stderr, "x86_emu: AMX fault (#UD on hardware): %s (tile %d)\n", what, tile);
  abort();
}

QE void qe_tile_check(int tile) {
  if (!qe_amx.configured) qe_amx_fault("tile instruction before ldtilecfg", tile);
  if (tile < 0 || tile > 7) qe_amx_fault("no such tile", tile);
  if (qe_amx.cfg.rows[tile] == 0 || qe_amx.cfg.colsb[tile] == 0) qe_amx_fault("tile not configured", tile);
}

QE void qe_tile_loadconfig(const void *p) {
  memcpy(&qe_amx.cfg, p, sizeof qe_amx.cfg);
  const qe_tilecfg *c = &qe_amx.cfg;
  if (c->palette != 1) qe_amx_fault("palette other than 1", -1);
  for (int i = 0; i < 16; i++) {
    if (i >= 8 && (c->rows[i] || c->colsb[i])) qe_amx_fault("palette 1 has 8 tiles", i);
    if (c->rows[i] > 16 || c->colsb[i] > 64) qe_amx_fault("more than 16 rows or 64 bytes a row", i);
  }
  qe_amx.configured = 1;
  memset(qe_amx.t, 0, sizeof qe_amx.t);
}

QE void qe_tile_release(void) { memset(&qe_amx, 0, sizeof qe_amx); }

QE void qe_tile_zero(int tile) {
  qe_tile_check(tile);
  memset(qe_amx.t[tile], 0, sizeof qe_amx.t[tile]);
}

QE void qe_tile_loadd(int tile, const void *base, long stride) {
  qe_tile_check(tile);
  memset(qe_amx.t[tile], 0, sizeof qe_amx.t[tile]);
  for (int r = 0; r < qe_amx.cfg.rows[tile]; r++)
    memcpy(qe_amx.t[tile][r], (const char *)base + (long)r * stride, qe_amx.cfg.colsb[tile]);
}

QE void qe_tile_stored(int tile, void *base, long stride) {
  qe_tile_check(tile);
  for (int r = 0; r < qe_amx.cfg.rows[tile]; r++)
    memcpy((char *)base + (long)r * stride, qe_amx.t[tile][r], qe_amx.cfg.colsb[tile]);
}

/* tdpbsud: C[m][n] += sum over k of the 4 products of A's row m dword k
 * (signed bytes) and B's row k dword n (unsigned bytes), in int32 that
 * wraps. Shapes: C rows = A rows, C bytes = B bytes, A dwords = B rows. */
QE void qe_tile_dpbsud(int c, int a, int b) {
  qe_tile_check(c);
  qe_tile_check(a);
  qe_tile_check(b);
  const qe_tilecfg *g = &qe_amx.cfg;
  if (c == a || c == b || a == b) qe_amx_fault("tdpbsud with a tile twice", c);
  if (g->rows[c] != g->rows[a] || g->colsb[c] != g->colsb[b] || g->colsb[a] % 4 || g->colsb[a] / 4 != g->rows[b] ||
      g->colsb[c] % 4)
    qe_amx_fault("tdpbsud shapes do not match", c);
  for (int m = 0; m < g->rows[c]; m++)
    for (int n = 0; n < g->colsb[c] / 4; n++) {
      int32_t acc;
      memcpy(&acc, &qe_amx.t[c][m][4 * n], 4);
      uint32_t s = (uint32_t)acc;
      for (int k = 0; k < g->colsb[a] / 4; k++)
        for (int i = 0; i < 4; i++)
          s += (uint32_t)((int32_t)(int8_t)qe_amx.t[a][m][4 * k + i] * (int32_t)qe_amx.t[b][k][4 * n + i]);
      acc = (int32_t)s;
      memcpy(&qe_amx.t[c][m][4 * n], &acc, 4);
    }
}

/* ---- The intrinsics' names for the level files. tests/test_x86_emu.c
 * defines QG_X86_EMU_TEST to call the qe_ and simde_ functions beside the
 * real instructions instead. ---- */
#if !defined(QG_X86_EMU_TEST)
#undef _mm512_srai_epi32
#define _mm512_srai_epi32(a, n) qe_srai_epi32((a), (n))
#undef _mm512_maskz_loadu_epi32
#define _mm512_maskz_loadu_epi32(k, p) qe_maskz_loadu_epi32((k), (p))
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps(k, p) qe_maskz_loadu_ps((k), (p))
#undef _mm256_maskz_loadu_epi16
#define _mm256_maskz_loadu_epi16(k, p) qe_256_maskz_loadu_epi16((k), (p))
#undef _mm512_cmpneq_ps_mask
#define _mm512_cmpneq_ps_mask(a, b) qe_cmpneq_ps_mask((a), (b))
#undef _mm512_cvtepi32_epi8
#define _mm512_cvtepi32_epi8(a) qe_cvtepi32_epi8(a)
#undef _mm512_cvtepu8_epi32
#define _mm512_cvtepu8_epi32(a) qe_cvtepu8_epi32(a)
#undef _mm512_cvtepi32_ps
#define _mm512_cvtepi32_ps(a) qe_cvtepi32_ps(a)
#undef _mm512_cvtepi32_pd
#define _mm512_cvtepi32_pd(a) qe_cvtepi32_pd(a)
#undef _mm512_cvtps_pd
#define _mm512_cvtps_pd(a) qe_cvtps_pd(a)
#undef _mm512_cvtpd_ps
#define _mm512_cvtpd_ps(a) qe_cvtpd_ps(a)
#undef _mm512_cvtps_epi32
#define _mm512_cvtps_epi32(a) qe_cvtps_epi32(a)
#undef _mm512_cvtph_ps
#define _mm512_cvtph_ps(a) qe_cvtph_ps(a)
#undef _mm512_permutevar_ps
#define _mm512_permutevar_ps(a, idx) qe_permutevar_ps((a), (idx))
#undef _mm512_scalef_ps
#define _mm512_scalef_ps(a, b) qe_scalef_ps((a), (b))
#undef _mm512_mask_scalef_ps
#define _mm512_mask_scalef_ps(src, k, a, b) qe_mask_scalef_ps((src), (k), (a), (b))
#undef _mm512_reduce_add_epi32
#define _mm512_reduce_add_epi32(a) qe_reduce_add_epi32(a)
#undef _mm512_reduce_add_pd
#define _mm512_reduce_add_pd(a) qe_reduce_add_pd(a)
#undef _mm512_reduce_max_ps
#define _mm512_reduce_max_ps(a) qe_reduce_max_ps(a)
#undef _tile_loadconfig
#define _tile_loadconfig(p) qe_tile_loadconfig(p)
#undef _tile_release
#define _tile_release() qe_tile_release()
#undef _tile_zero
#define _tile_zero(t) qe_tile_zero(t)
#undef _tile_loadd
#define _tile_loadd(t, base, stride) qe_tile_loadd((t), (base), (long)(stride))
#undef _tile_stored
#define _tile_stored(t, base, stride) qe_tile_stored((t), (base), (long)(stride))
#undef _tile_dpbsud
#define _tile_dpbsud(c, a, b) qe_tile_dpbsud((c), (a), (b))

/* The levels' functions carry target("avx512f,...") and the like: make
 * every such attribute AVX2's, the instructions this build may run. */
#define target(isa) target("avx2,fma,f16c")
#endif

#endif /* QG_X86_EMU_H */
