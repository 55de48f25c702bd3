/*
 * AVX2 + FMA + F16C level (x86-64). Every function carries the target
 * attribute, so the file needs no per-file flags and the rest of the
 * library stays baseline x86-64; dispatch (levels.c) calls in only after
 * cpu_detect.c has seen the CPU and OS support.
 *
 * NF4, 32 weights (16 code bytes) per decode, 15 instructions:
 *   broadcast the 16 bytes to both 128-bit lanes; shift the upper lane's
 *   dwords right by 4 (vpsrlvd) and mask 0x0f, so lane 0 holds the 16 low
 *   nibbles and lane 1 the 16 high nibbles; 4 vpshufb look the codes up in
 *   the four byte planes of the f32 table; 4 byte unpacks and 4 word unpacks
 *   reassemble 32 exact f32 table values. The unpacks work within 128-bit
 *   lanes, so vector q holds elements 8q + {0,2,4,6} then 8q + {1,3,5,7}:
 *   x order transpose(4, 2).
 *   Per code byte: 15/16 ~ 0.94 decode instructions + 0.25 FMA (x as a
 *   memory operand).
 * Q2_0, 32 weights (8 code bytes) per decode, 8 instructions:
 *   vpmovzxbd puts one code byte in each dword; vpermilps looks bits 1:0
 *   of each dword up in {-1, 0, 1, 2}; shifts by 2, 4, 6 expose the other
 *   three codes. Vector q holds the q-th code of 8 bytes: transpose(8, 4).
 *   Per code byte: 1 decode instruction + 0.5 FMA.
 * Whole kernels, counted with callgrind on 1024 x 4096 (m = 1, one
 * thread): NF4 0.72 instructions per weight (1.27 per weight byte, scales
 * included), Q2_0 0.48 (g128) to 0.50 (g64) per weight (1.8 per byte).
 * Batched (m = 8): 0.27 (Q2_0 g128) to 0.34 (NF4) per weight and row, the
 * FMA alone being 0.125.
 */
#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#include "../core/layouts.h"
#include "cpu.h"

#define QG_TARGET __attribute__((target("avx2,fma,f16c")))
#define QG_PRIM static inline __attribute__((always_inline)) QG_TARGET

typedef __m256 qv;
/* An empty asm that claims to change v: the value must sit in a register. */
#define QV_REG(v) __asm__("" : "+x"(v))
#define QV_LANES 8

QG_PRIM qv qv_zero(void) { return _mm256_setzero_ps(); }
QG_PRIM qv qv_set1(float f) { return _mm256_set1_ps(f); }
QG_PRIM qv qv_load(const float *p) { return _mm256_loadu_ps(p); }
QG_PRIM void qv_store(float *p, qv v) { _mm256_storeu_ps(p, v); }
QG_PRIM qv qv_add(qv a, qv b) { return _mm256_add_ps(a, b); }
QG_PRIM qv qv_fma(qv a, qv b, qv c) { return _mm256_fmadd_ps(a, b, c); }

QG_PRIM void qv_add_f64(double *a, qv v) {
  _mm256_storeu_pd(a, _mm256_add_pd(_mm256_loadu_pd(a), _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
  _mm256_storeu_pd(a + 4, _mm256_add_pd(_mm256_loadu_pd(a + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
}

typedef struct qg_consts {
  __m256i plane[4]; /* byte b of each NF4 table value, in both lanes */
  __m256i nib_shift;
  __m256i low4;
  __m256 q2;
} qg_consts;

QG_PRIM void qg_consts_init(qg_consts *c) {
  uint8_t planes[4][32];
  for (int v = 0; v < 16; v++) {
    uint32_t bits;
    memcpy(&bits, &qg_nf4_lut[v], sizeof bits);
    for (int p = 0; p < 4; p++) planes[p][v] = planes[p][v + 16] = (uint8_t)(bits >> (8 * p));
  }
  for (int p = 0; p < 4; p++) c->plane[p] = _mm256_loadu_si256((const __m256i *)planes[p]);
  c->nib_shift = _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4);
  c->low4 = _mm256_set1_epi8(0x0f);
  c->q2 = _mm256_setr_ps(-1.0f, 0.0f, 1.0f, 2.0f, -1.0f, 0.0f, 1.0f, 2.0f);
}

#define NF4_CW 32
#define NF4_CV 4
QG_PRIM void nf4_decode(const uint8_t *codes, const qg_consts *c, qv *w) {
  __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)codes));
  __m256i idx = _mm256_and_si256(_mm256_srlv_epi32(v, c->nib_shift), c->low4);
  __m256i b0 = _mm256_shuffle_epi8(c->plane[0], idx), b1 = _mm256_shuffle_epi8(c->plane[1], idx);
  __m256i b2 = _mm256_shuffle_epi8(c->plane[2], idx), b3 = _mm256_shuffle_epi8(c->plane[3], idx);
  __m256i lo01 = _mm256_unpacklo_epi8(b0, b1), hi01 = _mm256_unpackhi_epi8(b0, b1);
  __m256i lo23 = _mm256_unpacklo_epi8(b2, b3), hi23 = _mm256_unpackhi_epi8(b2, b3);
  w[0] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(lo01, lo23));
  w[1] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(lo01, lo23));
  w[2] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(hi01, hi23));
  w[3] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(hi01, hi23));
}

#define Q2_CW 32
#define Q2_CV 4
QG_PRIM void q2_decode(const uint8_t *codes, const qg_consts *c, qv *w) {
  __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)codes));
  w[0] = _mm256_permutevar_ps(c->q2, v);
  w[1] = _mm256_permutevar_ps(c->q2, _mm256_srli_epi32(v, 2));
  w[2] = _mm256_permutevar_ps(c->q2, _mm256_srli_epi32(v, 4));
  w[3] = _mm256_permutevar_ps(c->q2, _mm256_srli_epi32(v, 6));
}

QG_PRIM float q2_scale(const uint8_t *p) {
  uint16_t h;
  memcpy(&h, p, sizeof h);
  return _cvtsh_ss(h);
}

/* Tile sizes (kernel_tmpl.h); overridable with -D for tuning runs. */
#ifndef QG_RB
#define QG_RB 4
#endif
#ifndef QG_RBB
#define QG_RBB 8
#endif
/* Batched tile 2 x 3: 6 accumulators, 6 block sums, 3 x and 1 weight
 * register fill the 16 ymm registers, and every x load serves 2 FMAs
 * (1 x 4 loaded 5 vectors per 4 FMAs). Measured at m = 8, 14336 x 4096,
 * 2 threads: about 10% faster than 1 x 4, within the VM's noise
 * (bench/NOTES-cpu.md). */
#ifndef QG_BR
#define QG_BR 2
#endif
#ifndef QG_BT
#define QG_BT 3
#endif
#ifndef QG_NCH
#define QG_NCH 1
#endif
#define QG_TMPL_NO_Q2 /* q2_avx2.c's, by integer dot products */
#include "kernel_tmpl.h"

/* NF4's decoder above wants transpose(4, 2); q2_avx2.c reads x in natural
 * order (its digits, and the f32 x of its exact path). */
static void avx2_x_order(qg_layout_id id, qg_cpu_xorder *out) {
  if (id == QG_LAYOUT_NF4)
    qg_cpu_xorder_transpose(4, 2, out);
  else
    qg_cpu_xorder_transpose(1, 1, out);
}

/* Four independent 32-byte loads per step: the load ports, not a chain of
 * XORs, bound the loop. */
static QG_TARGET uint64_t avx2_read_stream(const void *buf, size_t bytes) {
  const __m256i *p = buf;
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < bytes / 32; i += 4) {
    a0 = _mm256_xor_si256(a0, _mm256_load_si256(p + i));
    a1 = _mm256_xor_si256(a1, _mm256_load_si256(p + i + 1));
    a2 = _mm256_xor_si256(a2, _mm256_load_si256(p + i + 2));
    a3 = _mm256_xor_si256(a3, _mm256_load_si256(p + i + 3));
  }
  __m256i a = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
  __m128i h = _mm_xor_si128(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  return (uint64_t)_mm_cvtsi128_si64(h) ^ (uint64_t)_mm_extract_epi64(h, 1);
}

const qg_cpu_level qg_cpu_level_avx2 = {
    .name = "avx2",
    .wants_double = false,
    .available = qg_cpu_has_avx2,
    .kernels = {[QG_LAYOUT_NF4] = QG_TMPL_KERNEL(rows_nf4),
                [QG_LAYOUT_Q2_G64] = {.rows = qg_q2_avx2_rows_g64, .group_rows = 16, .xfix = qg_q2_avx2_xfix},
                [QG_LAYOUT_Q2_G128] = {.rows = qg_q2_avx2_rows_g128, .group_rows = 16, .xfix = qg_q2_avx2_xfix}},
    .x_order = avx2_x_order,
    .read_stream = avx2_read_stream,
};
#else
#include "cpu.h"

/* Not x86-64: the level is known by name but not built. */
const qg_cpu_level qg_cpu_level_avx2 = {.name = "avx2"};
#endif
