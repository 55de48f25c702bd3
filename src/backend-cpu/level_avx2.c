/*
 * AVX2 + FMA + F16C level (x86-64). Every function carries the target
 * attribute, so the file needs no per-file flags and the rest of the
 * library stays baseline x86-64; dispatch (levels.c) calls in only after
 * cpu_detect.c has seen the CPU and OS support.
 *
 * Its kernels: NF4 in f32 (nf4_avx2.c: a vpshufb decode of the table's four
 * byte planes, FMA), Q2_0 by integer dot products (q2_avx2.c, its
 * quantizer term xfix_avx2.c). Whole kernels, counted with callgrind on
 * 1024 x 4096 (one thread): NF4 0.78 instructions per weight at m = 1 and
 * 0.32 per weight and row at m = 8 (0.42 with kernel_tmpl.h's batched
 * path), Q2_0 0.47 and 0.40 (bench/NOTES-cpu.md v26, v27).
 */
#if defined(__x86_64__)
#include <immintrin.h>

#include "../core/layouts.h"
#include "cpu.h"

#define QG_TARGET __attribute__((target("avx2,fma,f16c")))

/* nf4_avx2.c's decoder wants transpose(4, 2); q2_avx2.c reads x in natural
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

/* The two halves of the buffer (bytes a multiple of 256: halves of 128)
 * in lockstep, two 32-byte loads of each per step, as avx512_read_stream2
 * (2-5% faster than one stream on the Zen 5 VM); on the same VM this one
 * against avx2_read_stream: bench/NOTES-cpu.md v41. */
static QG_TARGET uint64_t avx2_read_stream2(const void *buf, size_t bytes) {
  const unsigned char *p = buf, *q = p + bytes / 2;
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t o = 0; o < bytes / 2; o += 64) {
    a0 = _mm256_xor_si256(a0, _mm256_load_si256((const __m256i *)(p + o)));
    a1 = _mm256_xor_si256(a1, _mm256_load_si256((const __m256i *)(p + o + 32)));
    a2 = _mm256_xor_si256(a2, _mm256_load_si256((const __m256i *)(q + o)));
    a3 = _mm256_xor_si256(a3, _mm256_load_si256((const __m256i *)(q + o + 32)));
  }
  __m256i a = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
  __m128i h = _mm_xor_si128(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  return (uint64_t)_mm_cvtsi128_si64(h) ^ (uint64_t)_mm_extract_epi64(h, 1);
}

const qg_cpu_level qg_cpu_level_avx2 = {
    .name = "avx2",
    .wants_double = false,
    .available = qg_cpu_has_avx2,
    .kernels = {[QG_LAYOUT_NF4] = {.rows = qg_nf4_avx2_rows},
                [QG_LAYOUT_Q2_G64] = {.rows = qg_q2_avx2_rows_g64, .group_rows = 16, .xfix = qg_q2_avx2_xfix},
                [QG_LAYOUT_Q2_G128] = {.rows = qg_q2_avx2_rows_g128, .group_rows = 16, .xfix = qg_q2_avx2_xfix}},
    .x_order = avx2_x_order,
    .read_stream = avx2_read_stream,
    .read_stream2 = avx2_read_stream2,
};
#else
#include "cpu.h"

/* Not x86-64: the level is known by name but not built. */
const qg_cpu_level qg_cpu_level_avx2 = {.name = "avx2"};
#endif
