/*
 * NF4 in f32 with AVX2 + FMA (the avx2 level). The weight stays the packed
 * format as uploaded (rows of 32-byte blocks, the f32 scales apart); the
 * activations are f32 in the x order of the decoder below.
 *
 * Decode, 32 weights (16 code bytes), 15 instructions: broadcast the 16
 * bytes to both 128-bit lanes; shift the upper lane's dwords right by 4
 * (vpsrlvd) and mask 0x0f, so lane 0 holds the 16 low nibbles and lane 1
 * the 16 high nibbles; 4 vpshufb look the codes up in the four byte planes
 * of the f32 table; 4 byte unpacks and 4 word unpacks reassemble 32 exact
 * f32 table values. The unpacks work within 128-bit lanes, so vector q
 * holds elements 8q + {0,2,4,6} then 8q + {1,3,5,7}: x order
 * transpose(4, 2). 12 of the 15 are shuffles, which Zen 3 issues two per
 * cycle; that bounds the m = 1 loop (0.19 cycles per weight at best, about
 * 0.27 measured; bench/NOTES-cpu.md v27, which also says why an integer
 * path cannot do better here).
 *
 * The arithmetic of one output element y[t, i], the same whatever m or the
 * thread's rows, and the same as kernel_tmpl.h's with one partial sum per
 * block (what this level ran before: the results are bit-identical to it):
 *   for each chunk of 8 blocks (512 elements) of row i, in order:
 *     acc = 0 (8 lanes)
 *     for each block b of the chunk, in order:
 *       s = 0; s = fma(w_v, x_v, s) for the block's vectors v = 0 .. 7 in order
 *       acc = fma(s, broadcast(scale_b), acc)
 *     a64 += acc (lane by lane, in f64)
 *   y = (float)(a64[0] + ... + a64[7], in order)
 * (DESIGN.md 5.1: a product passes through at most 8 FMAs of its block
 * sum and 8 folds, D = 16.)
 *
 * Two paths compute exactly that:
 * - m = 1: 4 weight rows at a time, each decoded vector used at once by one
 *   FMA with x from memory (kernel_tmpl.h's decode path).
 * - m > 1: each block of each weight row is decoded once per pass of up to
 *   8 activation rows and its 8 vectors each serve one FMA per activation
 *   row: 8 independent chains (FMA latency 4, two per cycle), 9 registers.
 *   x is taken a chunk of 512 at a time, copied for the pass's rows into
 *   one 16 KiB buffer (block, row, element) that 32 weight rows then read
 *   from L1: one pointer with constant offsets reaches every row (8 row
 *   pointers spilled otherwise), and rows k floats apart, which for k a
 *   multiple of 1024 fall on the same L1 sets, no longer evict each other.
 *   kernel_tmpl.h's batched path, which decodes 8 rows x 512 into a 16 KiB
 *   buffer and runs 2 x 3 register tiles (6 chains) over x rows read in
 *   place, took 1.6x the time (v27).
 */
#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#include "../core/layouts.h"
#include "cpu.h"

#define QG_TARGET __attribute__((target("avx2,fma,f16c")))
#define AI static inline __attribute__((always_inline)) QG_TARGET

/* Weight rows per x chunk at m > 1; overridable with -D for tuning runs. */
#ifndef QG_NF4_RBB
#define QG_NF4_RBB 32
#endif

enum {
  BLOCK = 64,        /* NF4 block: 32 code bytes, one f32 scale */
  CHUNK = 8,         /* blocks per f32 accumulation chunk (512 elements) */
  RB = 4,            /* weight rows per pass at m = 1 */
  RBB = QG_NF4_RBB,  /* weight rows sharing one x chunk at m > 1 */
  TT = 8             /* activation rows per pass at m > 1 */
};

typedef struct consts {
  __m256i plane[4]; /* byte p of each NF4 table value, in both lanes */
  __m256i nib_shift;
  __m256i low4;
} consts;

AI void consts_init(consts *c) {
  uint8_t planes[4][16];
  qg_nf4_byte_planes(planes);
  for (int p = 0; p < 4; p++) c->plane[p] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)planes[p]));
  c->nib_shift = _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4);
  c->low4 = _mm256_set1_epi8(0x0f);
}

/* 16 code bytes -> 32 exact f32 table values in 4 vectors (header). */
AI void decode32(const uint8_t *codes, const consts *c, __m256 w[4]) {
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

/* a64[0 .. 8) += the lanes of v, in f64. */
AI void add_f64(double *a64, __m256 v) {
  _mm256_storeu_pd(a64, _mm256_add_pd(_mm256_loadu_pd(a64), _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
  _mm256_storeu_pd(a64 + 4, _mm256_add_pd(_mm256_loadu_pd(a64 + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
}

/* m = 1: y[0, i .. i + rb). */
AI void tile1(const qg_cpu_job *job, const consts *cs, int64_t i, const int rb) {
  const qgemv_weight_desc *d = &job->w->desc;
  const int64_t k = d->k, nb = k / BLOCK;
  const uint8_t *row[RB];
  const float *scale[RB];
  for (int r = 0; r < rb; r++) {
    row[r] = (const uint8_t *)d->data + (size_t)(i + r) * (size_t)nb * 32u;
    scale[r] = d->scales + (size_t)(i + r) * (size_t)nb;
  }
  __m256 acc[RB];
  double a64[RB][8] = {{0}};
#pragma GCC unroll 4
  for (int r = 0; r < rb; r++) acc[r] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; b++) {
    __m256 s[RB];
#pragma GCC unroll 4
    for (int r = 0; r < rb; r++) s[r] = _mm256_setzero_ps();
    const float *xb = job->xn + (size_t)b * BLOCK;
#pragma GCC unroll 2
    for (int c = 0; c < 2; c++)
#pragma GCC unroll 4
      for (int r = 0; r < rb; r++) {
        __m256 w[4];
        decode32(row[r] + (size_t)b * 32u + 16u * (size_t)c, cs, w);
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) s[r] = _mm256_fmadd_ps(w[v], _mm256_loadu_ps(xb + 32 * c + 8 * v), s[r]);
      }
#pragma GCC unroll 4
    for (int r = 0; r < rb; r++) acc[r] = _mm256_fmadd_ps(s[r], _mm256_set1_ps(scale[r][b]), acc[r]);
    if ((b + 1) % CHUNK == 0 || b + 1 == nb)
#pragma GCC unroll 4
      for (int r = 0; r < rb; r++) {
        add_f64(a64[r], acc[r]);
        acc[r] = _mm256_setzero_ps();
      }
  }
  for (int r = 0; r < rb; r++) qg_cpu_store(job, 0, i + r, qg_sum_f64(a64[r], 8));
}

/* m > 1, one block of one weight row (its 8 decoded vectors at w, its scale
 * sc) against tt activation rows (x at xb, BLOCK floats apart): the
 * block's sums s[u], then acc[u] = fma(s[u], sc, acc[u]). */
AI void block_rows(const __m256 *w, float sc, const float *xb, __m256 *acc, const int tt) {
  __m256 s[TT];
#pragma GCC unroll 8
  for (int u = 0; u < tt; u++) s[u] = _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int v = 0; v < 8; v++) {
    const __m256 wv = w[v];
#pragma GCC unroll 8
    for (int u = 0; u < tt; u++) s[u] = _mm256_fmadd_ps(wv, _mm256_load_ps(xb + BLOCK * u + 8 * v), s[u]);
  }
  const __m256 scv = _mm256_set1_ps(sc);
#pragma GCC unroll 8
  for (int u = 0; u < tt; u++) acc[u] = _mm256_fmadd_ps(s[u], scv, acc[u]);
}

/* m > 1: y[t0 .. t0 + tt, i .. i + rb), rb <= RBB, tt <= TT (header). */
AI void tile_batch(const qg_cpu_job *job, const consts *cs, int64_t i, int rb, int64_t t0, const int tt) {
  const qgemv_weight_desc *d = &job->w->desc;
  const int64_t k = d->k, nb = k / BLOCK;
  const float *x = job->xn + (size_t)t0 * (size_t)k;
  _Alignas(32) double a64[RBB][TT][8];
  _Alignas(32) __m256 acc[TT];
  _Alignas(32) __m256 w[8];
  _Alignas(32) float xc[CHUNK][TT][BLOCK];
  memset(a64, 0, sizeof a64);
  for (int64_t b0 = 0; b0 < nb; b0 += CHUNK) {
    const int nbk = nb - b0 < CHUNK ? (int)(nb - b0) : CHUNK;
    for (int bb = 0; bb < nbk; bb++)
      for (int u = 0; u < tt; u++)
        memcpy(xc[bb][u], x + (size_t)u * (size_t)k + (size_t)(b0 + bb) * BLOCK, BLOCK * sizeof(float));
    for (int r = 0; r < rb; r++) {
      const uint8_t *q = (const uint8_t *)d->data + ((size_t)(i + r) * (size_t)nb + (size_t)b0) * 32u;
      const float *sc = d->scales + (size_t)(i + r) * (size_t)nb + (size_t)b0;
#pragma GCC unroll 8
      for (int u = 0; u < tt; u++) acc[u] = _mm256_setzero_ps();
      /* this row's next chunk, into L2: the next time round, RBB rows later */
#pragma GCC unroll 4
      for (int l = 0; l < 4; l++) _mm_prefetch((const char *)q + 32 * CHUNK + 64 * l, _MM_HINT_T1);
      _mm_prefetch((const char *)(sc + CHUNK), _MM_HINT_T1);
      for (int bb = 0; bb < nbk; bb++) {
        decode32(q + 32 * bb, cs, w);
        decode32(q + 32 * bb + 16, cs, w + 4);
        block_rows(w, sc[bb], xc[bb][0], acc, tt);
      }
#pragma GCC unroll 8
      for (int u = 0; u < tt; u++) add_f64(a64[r][u], acc[u]);
    }
  }
  for (int r = 0; r < rb; r++)
    for (int u = 0; u < tt; u++) qg_cpu_store(job, t0 + u, i + r, qg_sum_f64(a64[r][u], 8));
}

/* The activation rows [t0, t0 + tt) for weight rows [i, i + rb), tt < TT
 * passed as a constant so that each count gets its own registers. */
AI void batch_rows(const qg_cpu_job *job, const consts *cs, int64_t i, int rb) {
  int64_t t = 0;
  for (; t + TT <= job->m; t += TT) tile_batch(job, cs, i, rb, t, TT);
  switch (job->m - t) {
  case 7: tile_batch(job, cs, i, rb, t, 7); break;
  case 6: tile_batch(job, cs, i, rb, t, 6); break;
  case 5: tile_batch(job, cs, i, rb, t, 5); break;
  case 4: tile_batch(job, cs, i, rb, t, 4); break;
  case 3: tile_batch(job, cs, i, rb, t, 3); break;
  case 2: tile_batch(job, cs, i, rb, t, 2); break;
  case 1: tile_batch(job, cs, i, rb, t, 1); break;
  default: break;
  }
}

QG_TARGET void qg_nf4_avx2_rows(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  consts cs;
  consts_init(&cs);
  int64_t i = row0;
  if (job->m == 1) {
    for (; i + RB <= row1; i += RB) tile1(job, &cs, i, RB);
    for (; i < row1; i++) tile1(job, &cs, i, 1);
    return;
  }
  for (; i < row1; i += RBB) batch_rows(job, &cs, i, row1 - i < RBB ? (int)(row1 - i) : RBB);
}

#else
typedef int qg_nf4_avx2_absent; /* not x86-64 */
#endif
