/*
 * AVX-512 (F/BW/VL) levels (x86-64): avx512, avx512vnni where the CPU
 * has VNNI, avx512amx where it also has AMX-INT8. Target attributes on
 * every function, as in level_avx2.c.
 *
 * NF4 runs on nf4_avx512.c's kernel (rows in the 16 lanes, f64 block
 * accumulation) on all three; Q2_0 on the template below (avx512), by
 * integer dot products (q2_vnni.c, avx512vnni) or tile products (q2_amx.c,
 * avx512amx). The template's loops are written
 * for both formats, so its NF4 decoder stays, unused:
 *
 * NF4, 32 weights (16 code bytes) per decode, 4 instructions:
 *   vpmovzxbd puts one code byte in each of 16 dwords; vpermps with a
 *   16-entry table (_mm512_permutexvar_ps) reads only index bits 3:0, so
 *   it looks up the low nibble directly and, after a 4-bit shift, the high
 *   nibble: two exact f32 vectors with lane i = elements 2i and 2i+1 of the
 *   32. x order transpose(16, 2).
 *   Per code byte: 0.25 decode instructions + 0.125 FMA.
 * Q2_0, 64 weights (16 code bytes) per decode, 8 instructions:
 *   vpmovzxbd, then vpermilps (bits 1:0 of each dword index a {-1, 0, 1, 2}
 *   table replicated per 128-bit lane) on the dwords shifted by 0, 2, 4, 6:
 *   vector q holds the q-th code of each of the 16 bytes. transpose(16, 4).
 *   Per code byte: 0.5 decode instructions + 0.25 FMA.
 */
#if defined(__x86_64__)
#include "x86_intrin.h"
#include <string.h>

#include "../core/layouts.h"
#include "cpu.h"

#define QG_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define QG_PRIM static inline __attribute__((always_inline)) QG_TARGET

typedef __m512 qv;
/* An empty asm that claims to change v: the value must sit in a register
 * (in memory under QG_X86_EMU, where no register holds 512 bits). */
#if defined(QG_X86_EMU)
#define QV_REG(v) __asm__("" : "+m"(v))
#else
#define QV_REG(v) __asm__("" : "+v"(v))
#endif
#define QV_LANES 16

QG_PRIM qv qv_zero(void) { return _mm512_setzero_ps(); }
QG_PRIM qv qv_set1(float f) { return _mm512_set1_ps(f); }
QG_PRIM qv qv_load(const float *p) { return _mm512_loadu_ps(p); }
QG_PRIM void qv_store(float *p, qv v) { _mm512_storeu_ps(p, v); }
QG_PRIM qv qv_add(qv a, qv b) { return _mm512_add_ps(a, b); }
QG_PRIM qv qv_fma(qv a, qv b, qv c) { return _mm512_fmadd_ps(a, b, c); }

QG_PRIM void qv_add_f64(double *a, qv v) {
  __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  _mm512_storeu_pd(a, _mm512_add_pd(_mm512_loadu_pd(a), _mm512_cvtps_pd(_mm512_castps512_ps256(v))));
  _mm512_storeu_pd(a + 8, _mm512_add_pd(_mm512_loadu_pd(a + 8), _mm512_cvtps_pd(hi)));
}

typedef struct qg_consts {
  __m512 nf4; /* the 16 NF4 values, the permute's table */
  __m512 q2;  /* {-1, 0, 1, 2} in each 128-bit lane */
} qg_consts;

QG_PRIM void qg_consts_init(qg_consts *c) {
  c->nf4 = _mm512_loadu_ps(qg_nf4_lut);
  c->q2 = _mm512_setr_ps(-1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2);
}

#define NF4_CW 32
#define NF4_CV 2
QG_PRIM void nf4_decode(const uint8_t *codes, const qg_consts *c, qv *w) {
  __m512i idx = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)codes));
  w[0] = _mm512_permutexvar_ps(idx, c->nf4);
  w[1] = _mm512_permutexvar_ps(_mm512_srli_epi32(idx, 4), c->nf4);
}

#define Q2_CW 64
#define Q2_CV 4
QG_PRIM void q2_decode(const uint8_t *codes, const qg_consts *c, qv *w) {
  __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)codes));
  w[0] = _mm512_permutevar_ps(c->q2, v);
  w[1] = _mm512_permutevar_ps(c->q2, _mm512_srli_epi32(v, 2));
  w[2] = _mm512_permutevar_ps(c->q2, _mm512_srli_epi32(v, 4));
  w[3] = _mm512_permutevar_ps(c->q2, _mm512_srli_epi32(v, 6));
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
#define QG_RBB 4
#endif
#ifndef QG_BR
#define QG_BR 2
#endif
#ifndef QG_BT
#define QG_BT 4
#endif
#ifndef QG_NCH
#define QG_NCH 1
#endif
#define QG_TMPL_NO_NF4 /* nf4_avx512.c's, rows in lanes */
#include "kernel_tmpl.h"

/* NF4's kernel reads x in natural order (as do the VNNI level's); the
 * Q2_0 decoder above wants transpose(16, 4). */
static void avx512_x_order(qg_layout_id id, qg_cpu_xorder *out) {
  if (id == QG_LAYOUT_NF4)
    qg_cpu_xorder_transpose(1, 1, out);
  else
    qg_cpu_xorder_transpose(16, 4, out);
}

/* Four independent 64-byte loads per step (see avx2_read_stream). */
static QG_TARGET uint64_t avx512_read_stream(const void *buf, size_t bytes) {
  const __m512i *p = buf;
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < bytes / 64; i += 4) {
    a0 = _mm512_xor_si512(a0, _mm512_load_si512(p + i));
    a1 = _mm512_xor_si512(a1, _mm512_load_si512(p + i + 1));
    a2 = _mm512_xor_si512(a2, _mm512_load_si512(p + i + 2));
    a3 = _mm512_xor_si512(a3, _mm512_load_si512(p + i + 3));
  }
  __m512i a = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
  __m256i q = _mm256_xor_si256(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1));
  __m128i h = _mm_xor_si128(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  return (uint64_t)_mm_cvtsi128_si64(h) ^ (uint64_t)_mm_extract_epi64(h, 1);
}

/* The two halves of the buffer (bytes a multiple of 256: halves of 128)
 * in lockstep, two 64-byte loads of each per step: 2-5% faster than
 * avx512_read_stream on the Zen 5 VM in every rep, 1 and 2 threads
 * (bench/cpu-lab/probe-pf.c, bench/NOTES-cpu.md v39). */
static QG_TARGET uint64_t avx512_read_stream2(const void *buf, size_t bytes) {
  const unsigned char *p = buf, *q = p + bytes / 2;
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t o = 0; o < bytes / 2; o += 128) {
    a0 = _mm512_xor_si512(a0, _mm512_load_si512(p + o));
    a1 = _mm512_xor_si512(a1, _mm512_load_si512(p + o + 64));
    a2 = _mm512_xor_si512(a2, _mm512_load_si512(q + o));
    a3 = _mm512_xor_si512(a3, _mm512_load_si512(q + o + 64));
  }
  __m512i a = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
  __m256i h4 = _mm256_xor_si256(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1));
  __m128i h = _mm_xor_si128(_mm256_castsi256_si128(h4), _mm256_extracti128_si256(h4, 1));
  return (uint64_t)_mm_cvtsi128_si64(h) ^ (uint64_t)_mm_extract_epi64(h, 1);
}

#define QG_NF4_ROWS16 {.rows = qg_nf4_avx512_rows, .group_rows = 16}

const qg_cpu_level qg_cpu_level_avx512 = {
    .name = "avx512",
    .wants_double = false,
    .available = qg_cpu_has_avx512,
    .kernels = {[QG_LAYOUT_NF4] = QG_NF4_ROWS16, [QG_LAYOUT_Q2_G64] = QG_TMPL_KERNEL(rows_q2_g64),
                [QG_LAYOUT_Q2_G128] = QG_TMPL_KERNEL(rows_q2_g128)},
    .x_order = avx512_x_order,
    .read_stream = avx512_read_stream,
    .read_stream2 = avx512_read_stream2,
};

/* The same with Q2_0 by integer dot products (q2_vnni.c). */
const qg_cpu_level qg_cpu_level_avx512vnni = {
    .name = "avx512vnni",
    .wants_double = false,
    .available = qg_cpu_has_avx512vnni,
    .kernels = {[QG_LAYOUT_NF4] = QG_NF4_ROWS16,
                [QG_LAYOUT_Q2_G64] = {.rows = qg_q2_vnni_rows_g64, .group_rows = 16, .xfix = qg_q2_vnni_xfix},
                [QG_LAYOUT_Q2_G128] = {.rows = qg_q2_vnni_rows_g128, .group_rows = 16, .xfix = qg_q2_vnni_xfix}},
    .x_order = NULL, /* natural order */
    .read_stream = avx512_read_stream,
    .read_stream2 = avx512_read_stream2,
};

/* The same with Q2_0's products on AMX tiles (q2_amx.c) from
 * QG_AMX_MIN_M activation rows on, avx512vnni's kernel below: y bit for
 * bit the avx512vnni level's either way, its activation digits plane-major
 * for the tiles. The default where the CPU and Linux offer the tiles
 * (bench/NOTES-cpu.md v34: as fast as avx512vnni below the threshold,
 * 1.0-1.5x faster at m = 8). */
const qg_cpu_level qg_cpu_level_avx512amx = {
    .name = "avx512amx",
    .wants_double = false,
    .available = qg_cpu_has_avx512amx,
    .prepare = qg_cpu_amx_request,
    .kernels = {[QG_LAYOUT_NF4] = QG_NF4_ROWS16,
                [QG_LAYOUT_Q2_G64] = {.rows = qg_q2_amx_rows_g64,
                                      .group_rows = 16,
                                      .xfix = qg_q2_amx_xfix,
                                      .below = &qg_cpu_level_avx512vnni.kernels[QG_LAYOUT_Q2_G64],
                                      .below_m = QG_AMX_MIN_M},
                [QG_LAYOUT_Q2_G128] = {.rows = qg_q2_amx_rows_g128,
                                       .group_rows = 16,
                                       .xfix = qg_q2_amx_xfix,
                                       .below = &qg_cpu_level_avx512vnni.kernels[QG_LAYOUT_Q2_G128],
                                       .below_m = QG_AMX_MIN_M}},
    .x_order = NULL,
    .read_stream = avx512_read_stream,
    .read_stream2 = avx512_read_stream2,
};
#else
#include "cpu.h"

/* Not x86-64: the levels are known by name but not built. */
const qg_cpu_level qg_cpu_level_avx512 = {.name = "avx512"};
const qg_cpu_level qg_cpu_level_avx512vnni = {.name = "avx512vnni"};
const qg_cpu_level qg_cpu_level_avx512amx = {.name = "avx512amx"};
#endif
