/*
 * The CUDA module's share layout (share_layout.h), host side, on the CPU
 * (no GPU needed): the repack (share_repack.c) in runs of CTAs equals the
 * whole-range repack, writes nothing past its range and puts every word
 * and scale where the layout says, decoded the way the kernel decodes it;
 * then the kernel's arithmetic (share_kernels.cuh: share_stage's f32 x,
 * share_nf4_word's and share_q2_word's four FMA chains, the scale's FMA
 * into a round's f32 sum, the f64 accumulator at each round's and pass's
 * end, the k-parts and the norm in f64), emulated here reading only the
 * repacked bytes, meets the accuracy contract against the oracle for every
 * format, x f32 and bf16, no norm and RMSNorm with f32 and bf16 gamma, y
 * f32 and bf16, several distributions and adversarial inputs, on shapes
 * whose geometry has one row a CTA, uneven CTAs, RP below and above a
 * warp, several passes, several rounds and holes. The k-parts' f64 sum is
 * taken in k-part order, not the device's shuffle order (the contract does
 * not depend on it). The geometry choice, the automatic choice, the
 * refusals and QGEMV_CUDA_LAYOUT's "share" are checked against values
 * worked out by hand from share_layout.h's rule. The GPU suite
 * (test_cuda_backend) then checks the real kernel. QGEMV_TEST_QUICK=1
 * trims the shapes.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/backend-cuda/lut_layout.h"
#include "../src/backend-cuda/share_layout.h"
#include "expect.h"
#include "testutil.h"

#define GUARD 64          /* bytes past a repack's range that it must leave alone */
#define SMEM_OPTIN 232448 /* H100's (and H200's) shared memory a block, opted in */

/* f32 steps rounded as written (no fused multiply-add on the host) */
static float mul_f32(float a, float b) {
  volatile float r = a * b;
  return r;
}

/* The device reads a word's registers little-endian, whatever the host. */
static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint32_t rotr32(uint32_t v, int s) { return (v >> s) | (v << (32 - s)); }

static const char *fmt_name(qgemv_format f) { return f == QGEMV_NF4 ? "NF4" : "Q2_0"; }

/* ---- the repack -------------------------------------------------------- */

/* A weight in the share layout (host memory) and its geometry. */
typedef struct share_image {
  qgc_share_geom g;
  uint8_t *codes, *scales;
  size_t code_bytes, scale_bytes;
} share_image;

static void fill_guarded(uint8_t *p, size_t bytes) { memset(p, 0xee, bytes + GUARD); }
static bool untouched(const uint8_t *p, size_t from, size_t to) {
  for (size_t i = from; i < to; i++)
    if (p[i] != 0xee) return false;
  return true;
}
static bool guard_intact(const uint8_t *p, size_t bytes) { return untouched(p, bytes, bytes + GUARD); }

/* The whole range in one call, and again in pieces (the upload's runs of
 * CTAs: one CTA, up to the middle, the rest, and an empty run at the end),
 * which must concatenate to the same bytes. The buffers start as 0xee, so
 * a hole or padding the repack leaves unwritten shows in check_placement. */
static void repack(const qgemv_weight_desc *d, const qgc_share_geom *g, share_image *im, const char *what) {
  const int64_t ctas = g->ctas;
  const size_t ccb = qgc_share_cta_code_bytes(g), csb = (size_t)g->sreg;
  im->g = *g;
  im->code_bytes = qgc_share_code_bytes(g);
  im->scale_bytes = qgc_share_scale_bytes(g);
  EXPECT(ccb == (size_t)g->items * (size_t)g->threads * 16u, "%s: %zu code bytes a CTA, %d items of %d threads", what,
         ccb, g->items, g->threads);
  EXPECT(im->code_bytes == ccb * (size_t)ctas, "%s: %zu code bytes, %lld CTAs of %zu", what, im->code_bytes,
         (long long)ctas, ccb);
  EXPECT(im->scale_bytes == csb * (size_t)ctas, "%s: %zu scale bytes, %lld CTAs of %zu", what, im->scale_bytes,
         (long long)ctas, csb);
  im->codes = malloc(im->code_bytes + GUARD);
  im->scales = malloc(im->scale_bytes + GUARD);
  uint8_t *pc = malloc(im->code_bytes + GUARD), *ps = malloc(im->scale_bytes + GUARD);
  ck_assert_ptr_nonnull(im->codes);
  ck_assert_ptr_nonnull(im->scales);
  ck_assert_ptr_nonnull(pc);
  ck_assert_ptr_nonnull(ps);
  fill_guarded(im->codes, im->code_bytes);
  fill_guarded(im->scales, im->scale_bytes);
  fill_guarded(pc, im->code_bytes);
  fill_guarded(ps, im->scale_bytes);
  qgc_share_repack_codes(d, g, 0, ctas, im->codes);
  qgc_share_repack_scales(d, g, 0, ctas, im->scales);
  EXPECT(guard_intact(im->codes, im->code_bytes), "%s: the codes' repack wrote past its range", what);
  EXPECT(guard_intact(im->scales, im->scale_bytes), "%s: the scales' repack wrote past its range", what);
  const int64_t cuts[] = {0, 1, ctas / 2 > 1 ? ctas / 2 : 1, ctas, ctas};
  for (int i = 0; i + 1 < (int)(sizeof cuts / sizeof cuts[0]); i++) {
    const int64_t c0 = cuts[i], count = cuts[i + 1] - cuts[i];
    qgc_share_repack_codes(d, g, c0, count, pc + (size_t)c0 * ccb);
    qgc_share_repack_scales(d, g, c0, count, ps + (size_t)c0 * csb);
    /* each run stays in its own range: all that follows it is still
     * 0xee (one that wrote before its start would show in the memcmp) */
    const size_t ce = (size_t)(c0 + count) * ccb, se = (size_t)(c0 + count) * csb;
    EXPECT(untouched(pc, ce, im->code_bytes + GUARD) && untouched(ps, se, im->scale_bytes + GUARD),
           "%s: the run of CTAs [%lld, %lld) wrote past its end", what, (long long)c0, (long long)(c0 + count));
  }
  EXPECT(guard_intact(pc, im->code_bytes) && guard_intact(ps, im->scale_bytes), "%s: a run wrote past its range",
         what);
  EXPECT(memcmp(pc, im->codes, im->code_bytes) == 0, "%s: the codes' runs differ from the whole-range repack", what);
  EXPECT(memcmp(ps, im->scales, im->scale_bytes) == 0, "%s: the scales' runs differ from the whole-range repack",
         what);
  free(pc);
  free(ps);
}

static void image_free(share_image *im) {
  free(im->codes);
  free(im->scales);
}

/* NF4 code of k offset kk of a row (low nibble even k, high nibble odd). */
static unsigned nf4_code(const uint8_t *row, int64_t kk) { return (row[kk / 2] >> (4 * (kk % 2))) & 15u; }

/* Every word and scale where share_layout.h puts it: codes [CTA][item]
 * [thread][16] with thread t = q RP + r taking row pi RP + r of its CTA
 * and word j P + q in item pi JW + j; holes zero; every (row, word) of the
 * weight exactly once. Scales [CTA][block][row of the CTA], the padding up
 * to sreg zero. */
static void check_placement(const qgemv_weight_desc *d, const share_image *im, const char *what) {
  const qgc_share_geom *g = &im->g;
  const bool nf4 = d->format == QGEMV_NF4;
  const int64_t n = d->n, k = d->k, blocks = k / d->group;
  const size_t bb = 2u + (size_t)d->group / 4u; /* Q2_0 block bytes */
  const uint8_t *data = d->data;
  static const uint8_t zero16[16];
  uint8_t *seen = calloc((size_t)(n * g->nkw), 1);
  ck_assert_ptr_nonnull(seen);
  for (int64_t c = 0; c < g->ctas; c++) {
    const int64_t r0 = c * n / g->ctas, nr = (c + 1) * n / g->ctas - r0;
    EXPECT(qgc_share_row0(g, n, c) == r0 && nr >= 1 && nr <= g->nrmax, "%s: CTA %lld: rows %lld + %lld", what,
           (long long)c, (long long)r0, (long long)nr);
    const uint8_t *cw = im->codes + (size_t)c * qgc_share_cta_code_bytes(g);
    for (int i = 0; i < g->items; i++)
      for (int t = 0; t < g->threads; t++) {
        const int q = t >> g->lg_rp, r = t & (g->rp - 1), pi = i / g->jw, j = i % g->jw;
        const int rl = pi * g->rp + r, kw = j * g->kparts + q;
        const uint8_t *w = cw + ((size_t)i * (size_t)g->threads + (size_t)t) * 16u;
        if (rl >= nr || kw >= g->nkw) {
          EXPECT(memcmp(w, zero16, 16) == 0, "%s: CTA %lld item %d thread %d (row %d, word %d) is a hole, not zero",
                 what, (long long)c, i, t, rl, kw);
          continue;
        }
        const int64_t row = r0 + rl;
        seen[row * g->nkw + kw]++;
        if (nf4) {
          const uint8_t *rowp = data + (size_t)(row * (k / 2));
          for (int gq = 0; gq < 4; gq++) {
            /* the kernel's decode: byte b of e (o) is 4 x the code of k
             * offset 8 gq + b (8 gq + 4 + b) of the word */
            const uint32_t v = le32(w + 4 * gq), e = v & 0x3C3C3C3Cu, o = rotr32(v, 4) & 0x3C3C3C3Cu;
            uint32_t s = 0; /* and the header's exact form, rotl(s, 2) */
            for (int b = 0; b < 4; b++) {
              const int64_t k0 = 32 * (int64_t)kw + 8 * gq + b, k1 = k0 + 4;
              const unsigned c0 = nf4_code(rowp, k0), c1 = nf4_code(rowp, k1);
              EXPECT(((e >> (8 * b)) & 0xffu) == 4u * c0 && ((o >> (8 * b)) & 0xffu) == 4u * c1,
                     "%s: CTA %lld item %d thread %d, row %lld word %d register %d byte %d: decodes %u and %u, "
                     "packed codes %u and %u",
                     what, (long long)c, i, t, (long long)row, kw, gq, b, (e >> (8 * b) & 0xffu) / 4,
                     (o >> (8 * b) & 0xffu) / 4, c0, c1);
              s |= c0 << (8 * b) | c1 << (8 * b + 4);
            }
            EXPECT(v == rotr32(s, 30), "%s: row %lld word %d register %d is %#x, the header's rotl(s, 2) %#x", what,
                   (long long)row, kw, gq, v, rotr32(s, 30));
          }
        } else {
          /* the 64 codes of k 64 kw .. 64 kw + 63 as packed: block
           * (64 kw) / group, from code (64 kw) % group on */
          const int64_t kk = 64 * (int64_t)kw;
          const uint8_t *want = data + (size_t)(row * blocks + kk / d->group) * bb + 2 + (size_t)(kk % d->group) / 4;
          EXPECT(memcmp(w, want, 16) == 0,
                 "%s: CTA %lld item %d thread %d: row %lld word %d differs from the packed codes", what, (long long)c,
                 i, t, (long long)row, kw);
        }
      }
    const uint8_t *sr = im->scales + (size_t)c * (size_t)g->sreg;
    const int sb = nf4 ? 4 : 2;
    /* the kernel copies the region's first ceil(nr nblk sb / 16) 16-byte
     * chunks (cp.async), so they must lie inside it */
    EXPECT(g->sreg % 16 == 0 && (g->nblk * nr * sb + 15) / 16 * 16 <= g->sreg,
           "%s: CTA %lld: %lld rows of %d scales in a region of %d bytes", what, (long long)c, (long long)nr, g->nblk,
           g->sreg);
    for (int64_t b = 0; b < g->nblk; b++)
      for (int64_t rl = 0; rl < nr; rl++) {
        const int64_t row = r0 + rl;
        const void *want = nf4 ? (const void *)(d->scales + row * blocks + b)
                               : (const void *)(data + (size_t)(row * blocks + b) * bb);
        EXPECT(memcmp(sr + (size_t)(b * nr + rl) * (size_t)sb, want, (size_t)sb) == 0,
               "%s: scale of CTA %lld, block %lld, row %lld differs", what, (long long)c, (long long)b,
               (long long)row);
      }
    for (size_t at = (size_t)(g->nblk * nr * sb); at < (size_t)g->sreg; at++)
      EXPECT(sr[at] == 0, "%s: CTA %lld: scale padding byte %zu of %d is %#x", what, (long long)c, at, g->sreg, sr[at]);
  }
  for (int64_t i = 0; i < n * g->nkw; i++)
    EXPECT(seen[i] == 1, "%s: row %lld word %lld is in the layout %d times", what, (long long)(i / g->nkw),
           (long long)(i % g->nkw), seen[i]);
  free(seen);
}

/* ---- the kernel's arithmetic ------------------------------------------- */

/* share_nf4_word: register g's bytes give the codes of 8 g + b (e) and 8 g
 * + 4 + b (o); chain b takes both, g = 0..3 in turn: k offsets b, b + 4,
 * ..., b + 28. */
static float nf4_word(const uint8_t *w, const float *xp, const float *lut) {
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  for (int g = 0; g < 4; g++) {
    const uint32_t v = le32(w + 4 * g), e = v & 0x3C3C3C3Cu, o = rotr32(v, 4) & 0x3C3C3C3Cu;
    for (int b = 0; b < 4; b++) c[b] = fmaf(lut[((e >> (8 * b)) & 0xffu) / 4], xp[8 * g + b], c[b]);
    for (int b = 0; b < 4; b++) c[b] = fmaf(lut[((o >> (8 * b)) & 0xffu) / 4], xp[8 * g + 4 + b], c[b]);
  }
  return (c[0] + c[1]) + (c[2] + c[3]);
}

/* share_q2_word: code 16 g + j (bits 2 j of register g; from v >> 22 for
 * j >= 11) made code - 1 by the magic float, chain j % 4. */
static float q2_word(const uint8_t *w, const float *xp) {
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  for (int g = 0; g < 4; g++) {
    const uint32_t lo = le32(w + 4 * g), hi = lo >> 22;
    for (int j = 0; j < 16; j++) {
      const int jj = j < 11 ? j : j - 11;
      const uint32_t src = j < 11 ? lo : hi, bits = (src & (3u << (2 * jj))) | ((uint32_t)(150 - 2 * jj) << 23);
      float f;
      memcpy(&f, &bits, 4);
      const float v = f - (float)((1 << (23 - 2 * jj)) + 1);
      c[j % 4] = fmaf(v, xp[16 * g + j], c[j % 4]);
    }
  }
  return (c[0] + c[1]) + (c[2] + c[3]);
}

/* share_kernel, every CTA and thread in turn: per item (a hole adds
 * nothing) acc32 = fma(word, scale, acc32); at a pass's end acc32 into
 * acc64, which is the thread's partial of that pass's row; at a round's end
 * (U items) acc32 into acc64. A row's k-parts summed in f64, times inv_rms,
 * rounded once to f32. xt: x as staged (x gamma rounded to f32 with the
 * norm); reads only the repacked bytes. */
static void emulate(const qgemv_weight_desc *d, const share_image *im, const float *xt, double inv_rms, float *y) {
  const qgc_share_geom *g = &im->g;
  const bool nf4 = d->format == QGEMV_NF4;
  const float *lut = qgemv_nf4_table();
  /* share_consume's scale index: the word over the words a block (NF4 and
   * g128 2, g64 1), fixed by the format, not read from the geometry */
  const int sb = nf4 ? 4 : 2, lgwps = nf4 || d->group == 128 ? 1 : 0;
  double *part = malloc((size_t)g->passes * (size_t)g->kparts * (size_t)g->rp * sizeof(double));
  ck_assert_ptr_nonnull(part);
  for (int64_t c = 0; c < g->ctas; c++) {
    const int64_t r0 = qgc_share_row0(g, d->n, c), nr = qgc_share_row0(g, d->n, c + 1) - r0;
    const uint8_t *codes = im->codes + (size_t)c * qgc_share_cta_code_bytes(g);
    const uint8_t *sr = im->scales + (size_t)c * (size_t)g->sreg;
    for (int t = 0; t < g->threads; t++) {
      const int q = t >> g->lg_rp, r = t & (g->rp - 1);
      float acc32 = 0.f;
      double acc64 = 0.0;
      for (int i = 0; i < g->items; i++) {
        const int pi = i / g->jw, j = i % g->jw, rl = pi * g->rp + r, kw = j * g->kparts + q;
        if (rl < nr && kw < g->nkw) {
          const uint8_t *w = codes + ((size_t)i * (size_t)g->threads + (size_t)t) * 16u;
          const float *xp = xt + (size_t)kw * (size_t)g->cw;
          const uint8_t *sp = sr + (size_t)(((int64_t)(kw >> lgwps) * nr + rl) * sb);
          float s;
          if (nf4) {
            memcpy(&s, sp, 4);
          } else {
            uint16_t h;
            memcpy(&h, sp, 2);
            s = qgemv_f16_to_f32(h);
          }
          acc32 = fmaf(nf4 ? nf4_word(w, xp, lut) : q2_word(w, xp), s, acc32);
        }
        if (j == g->jw - 1) { /* the pass ends (share_flush) */
          acc64 += (double)acc32;
          acc32 = 0.f;
          part[((size_t)pi * (size_t)g->kparts + (size_t)q) * (size_t)g->rp + (size_t)r] = acc64;
          acc64 = 0.0;
        }
        if (i % QGC_SHARE_U == QGC_SHARE_U - 1) { /* the round ends */
          acc64 += (double)acc32;
          acc32 = 0.f;
        }
      }
    }
    for (int64_t rl = 0; rl < nr; rl++) {
      const int64_t pi = rl >> g->lg_rp, r = rl & (g->rp - 1);
      double sum = 0.0;
      for (int q = 0; q < g->kparts; q++)
        sum += part[((size_t)pi * (size_t)g->kparts + (size_t)q) * (size_t)g->rp + (size_t)r];
      y[r0 + rl] = (float)(sum * inv_rms);
    }
  }
  free(part);
}

/* ---- the cases ---------------------------------------------------------- */

typedef struct shape {
  int64_t n, k;
  int sms;
  int weights, xstep; /* weight distributions 0 .. weights - 1; x patterns wd, wd + xstep, ... */
  bool adversarial;   /* also zero weights and one code everywhere */
  int threads;        /* a CTA's: 256, 512, or 0 for the automatic count */
} shape;
/* Geometries (NF4 / Q2_0, qgc_share_choose on `sms` SMs), the first
 * NQUICK the quick run's; test_shapes_cover checks that they cover what
 * they are here for. Every weight distribution and x pattern on the first
 * shape, two distributions and four of the five patterns on the others,
 * one and two on the largest: about 3 s in all. */
static const shape shapes[] = {
    /* G 132 < n = 257: CTAs of 1 and 2 rows; RP 4 / 8 < 32; 36 / 18
     * words on 64 / 32 k-parts: holes */
    {257, 1152, 132, DIST_COUNT, DIST_COUNT, false, 256},
    /* 2 CTAs of 32 and 33 rows: NF4 RP 16, 3 passes of 3 words (9
     * items: rounds across passes), 48 rows of slots, 40 words of 48;
     * Q2_0 RP 64 (4 k-parts, gp 4), 5 items in 2 rounds */
    {65, 1280, 2, 2, 3, false, 256},
    /* 512 threads: 5 CTAs of 20 rows; NF4 RP 32 (16 k-parts), 9 words
     * of 132 in 144 slots, 32 rows of slots; Q2_0 RP 32, 5 of 66 in 80 */
    {100, 4224, 5, 2, 3, false, 512},
    /* 7 CTAs of 142 or 143 rows: NF4 RP 32, 5 passes (items 5 > U, 2
     * rounds); Q2_0 RP 64, 3 passes, 4 k-parts (gp 4) */
    {1000, 256, 7, 2, 3, false, 256},
    /* NF4: RP 8, 3 passes of 5 words (15 items: rounds across passes),
     * 20 rows of 24, 132 words of 160; Q2_0: RP 32, 9 items, 3 rounds */
    {100, 4224, 5, 2, 3, true, 256},
    /* n < SMs: G = n, one row a CTA, RP 1 (NF4) and 2 */
    {33, 4224, 132, 2, 3, false, 256},
    /* the automatic choice's geometry, NF4 RP 8, I = U = 4 (Q2_0 2), as
     * at 1024 x 4096 on 132 SMs, on 8 CTAs of 7 or 8 rows */
    {60, 4096, 8, 2, 3, false, 256},
    /* and that shape itself, once, at the automatic count */
    {1024, 4096, 132, 1, 4, false, 0},
    /* 16 CTAs of 18 or 19 rows: NF4 RP 4, 5 passes; Q2_0 RP 8, 3 */
    {300, 2048, 16, 2, 3, false, 256},
    /* the same at the automatic count (256: NF4 3, Q2_0 2 items at 512) */
    {300, 2048, 16, 1, 4, false, 0},
    /* n < SMs, Q2_0 RP 32 */
    {64, 512, 132, 2, 3, false, 256},
    /* RP 64 (4 k-parts), NF4 5 words in 2 rounds */
    {513, 640, 12, 2, 3, false, 256},
    /* RP 256: one k-part; CTAs of 500 rows in 2 passes */
    {2000, 128, 4, 2, 3, false, 256},
    /* 512 threads: NF4 RP 64 (8 k-parts), 3 passes of one word; Q2_0
     * RP 256 (2 k-parts), one pass of 2 words */
    {1000, 256, 7, 2, 3, false, 512},
    /* 512 threads, RP 512: one k-part; CTAs of 500 rows, one pass */
    {2000, 128, 4, 2, 3, false, 512},
};
enum { NSHAPES = sizeof shapes / sizeof shapes[0], NQUICK = 3, XPATTERNS = DIST_COUNT + 1 };

static const char *pattern_name(int p) {
  return p < DIST_COUNT ? dist_name((dist_kind)p) : "outliers of 1e4x every 50";
}

static void make_x(rng *r, int pattern, float *x, int64_t k) {
  fill_random(r, pattern < DIST_COUNT ? (dist_kind)pattern : DIST_NORMAL, x, (size_t)k);
  if (pattern == DIST_COUNT)
    for (int64_t j = 7; j < k; j += 50) x[j] *= 1e4f;
}

/* The worst error over the contract's bound of y (f32, or bf16 when
 * y_bf16) against the oracle's ref, as tu_check_contract weighs it (bound
 * 0: y must be exact). */
static double worst_ratio(const float *y, bool y_bf16, const double *ref, const double *bound, int64_t n,
                          int64_t *where, double *got) {
  double worst = 0.0;
  *where = 0;
  *got = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double v = y_bf16 ? (double)qgemv_bf16_to_f32(qgemv_f32_to_bf16(y[i])) : (double)y[i];
    const double ratio = tu_contract_ratio(v, ref[i], bound[i], y_bf16);
    if (ratio > worst || i == 0) {
      if (ratio > worst) worst = ratio;
      *where = i;
      *got = v;
    }
  }
  return worst;
}

/* x of both dtypes and every norm (the kernel's XBF x NORM instances) on
 * one weight, y f32 and bf16. nonzero: the weight is not all zeros, so
 * neither may y be (the emulation read something). */
static void check_weight(const qgemv_weight_desc *d, const share_image *im, const float *x, const float *gm,
                         bool nonzero, const char *what, const char *xname) {
  const int64_t n = d->n, k = d->k;
  float *xv = malloc((size_t)k * sizeof(float)), *gv = malloc((size_t)k * sizeof(float));
  float *xt = malloc((size_t)k * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
  double *ref = malloc((size_t)n * sizeof(double)), *bound = malloc((size_t)n * sizeof(double));
  ck_assert(xv && gv && xt && y && ref && bound);
  const float eps = 1e-5f;
  for (int xd = 0; xd < 2; xd++)
    for (int norm = 0; norm < 3; norm++) { /* none, f32 gamma, bf16 gamma */
      const qgemv_dtype xt_dtype = xd ? QGEMV_BF16 : QGEMV_F32, gt = norm == 2 ? QGEMV_BF16 : QGEMV_F32;
      void *xb = tu_convert(x, (size_t)k, xt_dtype), *gb = tu_convert(gm, (size_t)k, gt);
      double ss = 0.0; /* share_stage: squares of x (exact in f64), then 1/rms in f64 */
      for (int64_t j = 0; j < k; j++) { /* the values the kernel reads, widened exactly */
        xv[j] = (float)tu_elem(xt_dtype, xb, (size_t)j);
        gv[j] = (float)tu_elem(gt, gb, (size_t)j);
        xt[j] = norm ? mul_f32(xv[j], gv[j]) : xv[j];
        ss += (double)xv[j] * (double)xv[j];
      }
      const double inv_rms = norm ? 1.0 / sqrt(ss / (double)k + (double)eps) : 1.0;
      EXPECT_OK(qgemv_reference_matvec(d, 1, xt_dtype, xb, gt, norm ? gb : NULL, eps, ref, bound));
      emulate(d, im, xt, inv_rms, y);
      if (nonzero) {
        int64_t nz = 0;
        for (int64_t i = 0; i < n; i++) nz += y[i] != 0.f;
        EXPECT(nz > 0, "%s, x %s (%s): every emulated y is 0", what, xd ? "bf16" : "f32", xname);
      }
      for (int yb = 0; yb < 2; yb++) {
        int64_t at;
        double got;
        const double worst = worst_ratio(y, yb, ref, bound, n, &at, &got);
        EXPECT(worst <= 1.0,
               "%s, x %s (%s), norm %s, y %s: %.3g of the allowed error at row %lld: emulated %.9g, oracle %.9g, "
               "R %.3g",
               what, xd ? "bf16" : "f32", xname, norm == 0 ? "off" : norm == 1 ? "f32 gamma" : "bf16 gamma",
               yb ? "bf16" : "f32", worst, (long long)at, got, ref[at], bound[at]);
      }
      free(xb);
      free(gb);
    }
  free(xv);
  free(gv);
  free(xt);
  free(y);
  free(ref);
  free(bound);
}

/* x of pattern p and a gamma, then check_weight. */
static void check_pattern(const qgemv_weight_desc *d, const share_image *im, rng *r, int pattern, bool nonzero,
                          const char *what) {
  float *x = malloc((size_t)d->k * sizeof(float)), *gm = malloc((size_t)d->k * sizeof(float));
  ck_assert(x && gm);
  make_x(r, pattern, x, d->k);
  fill_random(r, DIST_NORMAL, gm, (size_t)d->k);
  check_weight(d, im, x, gm, nonzero, what, pattern_name(pattern));
  free(x);
  free(gm);
}

static void choose(const qgemv_weight_desc *d, int sms, int threads, qgc_share_geom *g, const char *what) {
  EXPECT(qgc_share_choose(d->format, d->group, d->n, d->k, sms, SMEM_OPTIN, threads, g),
         "%s on %d SMs, %d threads: no geometry", what, sms, threads);
}

/* Loop index: format x shape. The shape's weight distributions in turn,
 * with its x patterns (four distributions and outlier channels) spread
 * over them; on an adversarial shape also two adversarial weights: all
 * zero (R = 0: y must be exactly 0), and one code everywhere (NF4 +1,
 * Q2_0 +2) against x and gamma of one sign, where every rounding of a
 * row's sum goes the same way. */
START_TEST(test_emulated_contract) {
  const int fi_index = _i / NSHAPES, si = _i % NSHAPES;
  const qgemv_format_info fi = tu_format(fi_index);
  const shape sh = shapes[si];
  const bool quick = tu_quick();
  if (quick && si >= NQUICK) return;
  rng r = {.s = 5151u + 29u * (unsigned)_i};
  /* quick: patterns 0 and 4 (normal x, and its outliers) on one weight */
  const int nweights = quick ? 1 : sh.weights, xstep = quick ? DIST_COUNT : sh.xstep;
  for (int wd = 0; wd < nweights; wd++) {
    tu_weight w;
    tu_weight_make(&r, (dist_kind)wd, fi.format, fi.group, sh.n, sh.k, &w);
    char what[192];
    qgc_share_geom g;
    snprintf(what, sizeof what, "%s %lldx%lld on %d SMs, %d threads, weights %s", fi.label, (long long)sh.n,
             (long long)sh.k, sh.sms, sh.threads, dist_name((dist_kind)wd));
    choose(&w.desc, sh.sms, sh.threads, &g, what);
    share_image im;
    repack(&w.desc, &g, &im, what);
    if (wd == 0) check_placement(&w.desc, &im, what);
    for (int p = wd; p < XPATTERNS; p += xstep) check_pattern(&w.desc, &im, &r, p, true, what);
    image_free(&im);
    if (wd == 0 && sh.adversarial && !quick) {
      const size_t bytes = qgemv_data_bytes(fi.format, sh.n, sh.k, fi.group), bb = 2u + (size_t)fi.group / 4u;
      uint8_t *data = w.data;
      for (int adv = 0; adv < 2; adv++) {
        if (fi.format == QGEMV_NF4) { /* code 7 is 0, code 15 is +1 */
          memset(data, adv ? 0xff : 0x77, bytes);
        } else { /* code 1 is 0, code 3 is +2; the fp16 d stays */
          for (size_t b = 0; b < bytes / bb; b++) memset(data + b * bb + 2, adv ? 0xff : 0x55, bb - 2);
        }
        snprintf(what, sizeof what, "%s %lldx%lld on %d SMs, %s", fi.label, (long long)sh.n, (long long)sh.k, sh.sms,
                 adv ? "one code everywhere, x > 0" : "zero weights");
        repack(&w.desc, &g, &im, what);
        float *x = malloc((size_t)sh.k * sizeof(float)), *gm = malloc((size_t)sh.k * sizeof(float));
        ck_assert(x && gm);
        fill_random(&r, DIST_NORMAL, x, (size_t)sh.k);
        fill_random(&r, DIST_NORMAL, gm, (size_t)sh.k);
        if (adv)
          for (int64_t j = 0; j < sh.k; j++) {
            x[j] = fabsf(x[j]);
            gm[j] = fabsf(gm[j]);
          }
        check_weight(&w.desc, &im, x, gm, adv == 1, what, adv ? "|normal|" : "normal");
        free(x);
        free(gm);
        image_free(&im);
      }
    }
    tu_weight_free(&w);
  }
}
END_TEST

/* The shapes above exercise what they say (for some format), and the quick
 * run's keep uneven CTAs, several passes and rounds, RP on both sides of a
 * warp and holes; so that a change of the rule cannot quietly make the
 * emulation miss a path. */
START_TEST(test_shapes_cover) {
  enum {
    ONE_ROW,
    UNEVEN,
    RP_SMALL,
    RP_WARP,
    PASSES,
    ROUNDS,
    ROUND_ACROSS_PASS,
    ROW_HOLES,
    WORD_HOLES,
    T256,
    T512,
    NCOVER
  };
  static const char *const names[NCOVER] = {"G = n",      "uneven CTAs", "RP < 32",
                                             "RP >= 32",   "NP > 1",      "items > U",
                                             "a round across a pass's end", "row holes", "word holes",
                                             "256 threads", "512 threads"};
  for (int quick = 1; quick >= 0; quick--) {
    bool seen[NCOVER] = {false};
    for (int si = 0; si < (quick ? NQUICK : NSHAPES); si++)
      for (int f = 0; f < qgemv_format_count(); f++) {
        const qgemv_format_info fi = tu_format(f);
        qgc_share_geom g;
        EXPECT(qgc_share_choose(fi.format, fi.group, shapes[si].n, shapes[si].k, shapes[si].sms, SMEM_OPTIN,
                                shapes[si].threads, &g),
               "%s %lldx%lld on %d SMs: no geometry", fi.label, (long long)shapes[si].n, (long long)shapes[si].k,
               shapes[si].sms);
        seen[ONE_ROW] |= g.ctas == shapes[si].n;
        seen[UNEVEN] |= shapes[si].n % g.ctas != 0;
        seen[RP_SMALL] |= g.rp < 32;
        seen[RP_WARP] |= g.rp >= 32;
        seen[PASSES] |= g.passes > 1;
        seen[ROUNDS] |= g.items > QGC_SHARE_U;
        seen[ROUND_ACROSS_PASS] |= g.passes > 1 && g.jw > 1 && g.jw % QGC_SHARE_U != 0;
        seen[ROW_HOLES] |= g.passes * g.rp > g.nrmax;
        seen[WORD_HOLES] |= g.jw * g.kparts > g.nkw;
        seen[T256] |= g.threads == 256;
        seen[T512] |= g.threads == 512;
      }
    for (int c = 0; c < NCOVER; c++)
      EXPECT(seen[c] || (quick && c == ONE_ROW), "%s shapes: none has %s", quick ? "the quick" : "the", names[c]);
  }
}
END_TEST

/* ---- the geometry, the automatic choice, the preference ----------------- */

static void expect_geom(qgemv_format f, int32_t group, int64_t n, int64_t k, int sms, int threads,
                        qgc_share_geom want) {
  qgc_share_geom g;
  memset(&g, 0, sizeof g);
  EXPECT(qgc_share_choose(f, group, n, k, sms, SMEM_OPTIN, threads, &g), "%s/%d %lldx%lld on %d SMs: no geometry",
         fmt_name(f), (int)group, (long long)n, (long long)k, sms);
#define FIELD(x)                                                                                                 \
  EXPECT(g.x == want.x, "%s/%d %lldx%lld on %d SMs, %d threads: " #x " %d, expected %d", fmt_name(f), (int)group, \
         (long long)n, (long long)k, sms, threads, g.x, want.x)
  FIELD(threads);
  FIELD(ctas);
  FIELD(cw);
  FIELD(scale_bytes);
  FIELD(lg_wps);
  FIELD(nkw);
  FIELD(nblk);
  FIELD(nrmax);
  FIELD(rp);
  FIELD(lg_rp);
  FIELD(kparts);
  FIELD(passes);
  FIELD(jw);
  FIELD(items);
  FIELD(kwe);
  FIELD(gp);
  FIELD(sreg);
  FIELD(xs_bytes);
  FIELD(red_bytes);
  FIELD(smem);
#undef FIELD
}

/* Worked out by hand from share_layout.h: G = min(SMs, n), nrmax =
 * ceil(n / G), nkw = k / cw; for each RP (T down to 1, P = T / RP) items
 * NP JW = ceil(nrmax / RP) ceil(nkw / P); RP the largest within 4% of the
 * fewest; kwe = max(1, 32 / RP), gp = P / kwe; sreg = nrmax nblk scale
 * bytes up to 16; xs = nkw (cw + 4) 4; red = NP gp RP 8 + T / 32 x 8 + 64
 * (at T = 256: + 64 + 64 = 128). */
START_TEST(test_choose) {
  /* 512 threads. NF4 4096 x 4096, 132 SMs: nrmax 32, nkw 128. RP 512 ..
   * 1 (P = 512 / RP): 1 x 128, 1 x 64, 1 x 32, 1 x 16, 1 x 8 (RP 32, P
   * 16), 2 x 4, 4 x 2, 8 x 1, 16 x 1, 32 x 1: fewest 8, RP 32. kwe 1, gp
   * 16; sreg 32 x 64 x 4 = 8192; red 1 x 16 x 32 x 8 + 16 x 8 + 64 =
   * 4288; smem 18432 + 8192 + 4288 = 30912. */
  expect_geom(QGEMV_NF4, 64, 4096, 4096, 132, 512,
              (qgc_share_geom){.threads = 512, .ctas = 132, .cw = 32, .scale_bytes = 4, .lg_wps = 1, .nkw = 128,
                               .nblk = 64, .nrmax = 32, .rp = 32, .lg_rp = 5, .kparts = 16, .passes = 1, .jw = 8,
                               .items = 8, .kwe = 1, .gp = 16, .sreg = 8192, .xs_bytes = 18432, .red_bytes = 4288,
                               .smem = 30912});
  /* NF4 1024 x 14336, 132 SMs, 512 threads: nrmax 8, nkw 448, nblk 224.
   * RP 512 .. 1: 448, 224, 112, 56, 28, 14 (RP 16, P 32), 7 (RP 8, P
   * 64), 2 x 4 (RP 4, P 128: 3.5 words up to 4), 4 x 2, 8 x 1: fewest 7,
   * RP 8. kwe 4, gp 16; sreg 8 x 224 x 4 = 7168; xs 448 x 36 x 4 =
   * 64512; red 1 x 16 x 8 x 8 + 128 + 64 = 1216; smem 72896. */
  expect_geom(QGEMV_NF4, 64, 1024, 14336, 132, 512,
              (qgc_share_geom){.threads = 512, .ctas = 132, .cw = 32, .scale_bytes = 4, .lg_wps = 1, .nkw = 448,
                               .nblk = 224, .nrmax = 8, .rp = 8, .lg_rp = 3, .kparts = 64, .passes = 1, .jw = 7,
                               .items = 7, .kwe = 4, .gp = 16, .sreg = 7168, .xs_bytes = 64512, .red_bytes = 1216,
                               .smem = 72896});
  /* Q2_0 g64 2000 x 128, 4 SMs, 512 threads: nrmax 500, nkw 2. RP 512:
   * 1 x 2 = 2; 256: 2 x 1 = 2; 128: 4 x 1: fewest 2, RP 512 (one k-part,
   * kwe 1, gp 1). sreg 2000; xs 544; red 1 x 1 x 512 x 8 + 128 + 64 =
   * 4288; smem 6832. */
  expect_geom(QGEMV_Q2_0, 64, 2000, 128, 4, 512,
              (qgc_share_geom){.threads = 512, .ctas = 4, .cw = 64, .scale_bytes = 2, .lg_wps = 0, .nkw = 2, .nblk = 2,
                               .nrmax = 500, .rp = 512, .lg_rp = 9, .kparts = 1, .passes = 1, .jw = 2, .items = 2,
                               .kwe = 1, .gp = 1, .sreg = 2000, .xs_bytes = 544, .red_bytes = 4288, .smem = 6832});
  /* 256 threads. */
  /* NF4 1024 x 4096, 132 SMs: G 132, nrmax ceil(1024 / 132) = 8 (7 x 132
   * = 924), nkw 128, nblk 64. Items, RP 256 .. 1: 1 x 128, 1 x 64, 1 x
   * 32, 1 x 16, 1 x 8, 1 x 4 (RP 8), 2 x 2, 4 x 1, 8 x 1: fewest 4, RP 8
   * the largest with 4. kwe 4, gp 8; sreg 8 x 64 x 4 = 2048; xs 128 x 36
   * x 4 = 18432; red 1 x 8 x 8 x 8 + 128 = 640; smem 21120. */
  expect_geom(QGEMV_NF4, 64, 1024, 4096, 132, 256,
              (qgc_share_geom){.threads = 256, .ctas = 132, .cw = 32, .scale_bytes = 4, .lg_wps = 1, .nkw = 128,
                               .nblk = 64, .nrmax = 8, .rp = 8, .lg_rp = 3, .kparts = 32, .passes = 1, .jw = 4,
                               .items = 4, .kwe = 4, .gp = 8, .sreg = 2048, .xs_bytes = 18432, .red_bytes = 640,
                               .smem = 21120});
  /* NF4 4096 x 4096, 132 SMs: nrmax ceil(4096 / 132) = 32 (31 x 132 =
   * 4092). RP 256 .. 1: 1 x 128, 1 x 64, 1 x 32, 1 x 16 (RP 32), 2 x 8,
   * 4 x 4, 8 x 2, 16 x 1, 32 x 1: fewest 16, RP 32. kwe 1, gp 8; sreg 32
   * x 64 x 4 = 8192; red 1 x 8 x 32 x 8 + 128 = 2176; smem 18432 + 8192
   * + 2176 = 28800. */
  expect_geom(QGEMV_NF4, 64, 4096, 4096, 132, 256,
              (qgc_share_geom){.threads = 256, .ctas = 132, .cw = 32, .scale_bytes = 4, .lg_wps = 1, .nkw = 128,
                               .nblk = 64, .nrmax = 32, .rp = 32, .lg_rp = 5, .kparts = 8, .passes = 1, .jw = 16,
                               .items = 16, .kwe = 1, .gp = 8, .sreg = 8192, .xs_bytes = 18432, .red_bytes = 2176,
                               .smem = 28800});
  /* NF4 14336 x 4096, 132 SMs (the header's example): nrmax ceil(14336
   * / 132) = 109 (108 x 132 = 14256). RP 256 .. 1: 1 x 128, 1 x 64, 2 x
   * 32, 4 x 16, 7 x 8 = 56, 14 x 4 = 56, 28 x 2 = 56, 55 x 1 = 55, 109 x
   * 1: fewest 55, within 4% (57.2): 56, RP 16 the largest. kwe 2, gp 8;
   * sreg 109 x 64 x 4 = 27904 (a multiple of 16); red 7 x 8 x 16 x 8 +
   * 128 = 7296; smem 18432 + 27904 + 7296 = 53632. */
  expect_geom(QGEMV_NF4, 64, 14336, 4096, 132, 256,
              (qgc_share_geom){.threads = 256, .ctas = 132, .cw = 32, .scale_bytes = 4, .lg_wps = 1, .nkw = 128,
                               .nblk = 64, .nrmax = 109, .rp = 16, .lg_rp = 4, .kparts = 16, .passes = 7, .jw = 8,
                               .items = 56, .kwe = 2, .gp = 8, .sreg = 27904, .xs_bytes = 18432, .red_bytes = 7296,
                               .smem = 53632});
  /* NF4 20 x 4096, 132 SMs: n < SMs, G 20, one row a CTA. RP 256 .. 1:
   * 128, 64, 32, 16, 8, 4, 2 (RP 4: 64 k-parts), 1 (RP 2), 1: RP 2.
   * kwe 16, gp 8; sreg 64 x 4 = 256; red 1 x 8 x 2 x 8 + 128 = 256; smem
   * 18432 + 256 + 256 = 18944. */
  expect_geom(QGEMV_NF4, 64, 20, 4096, 132, 256,
              (qgc_share_geom){.threads = 256, .ctas = 20, .cw = 32, .scale_bytes = 4, .lg_wps = 1, .nkw = 128,
                               .nblk = 64, .nrmax = 1, .rp = 2, .lg_rp = 1, .kparts = 128, .passes = 1, .jw = 1,
                               .items = 1, .kwe = 16, .gp = 8, .sreg = 256, .xs_bytes = 18432, .red_bytes = 256,
                               .smem = 18944});
  /* Q2_0 g64 256 x 4096, 132 SMs: nrmax 2, nkw 64, nblk 64 (a word a
   * block). RP 256 .. 1: 64, 32, 16, 8, 4, 2 (RP 8), 1 (RP 4), 1, 2 x 1:
   * RP 4. kwe 8, gp 8; sreg 2 x 64 x 2 = 256; xs 64 x 68 x 4 = 17408;
   * red 1 x 8 x 4 x 8 + 128 = 384; smem 17408 + 256 + 384 = 18048. */
  expect_geom(QGEMV_Q2_0, 64, 256, 4096, 132, 256,
              (qgc_share_geom){.threads = 256, .ctas = 132, .cw = 64, .scale_bytes = 2, .lg_wps = 0, .nkw = 64,
                               .nblk = 64, .nrmax = 2, .rp = 4, .lg_rp = 2, .kparts = 64, .passes = 1, .jw = 1,
                               .items = 1, .kwe = 8, .gp = 8, .sreg = 256, .xs_bytes = 17408, .red_bytes = 384,
                               .smem = 18048});
  /* Q2_0 g128, the same: nblk 32 (two words a block), sreg 2 x 32 x 2 =
   * 128, smem 17920. */
  expect_geom(QGEMV_Q2_0, 128, 256, 4096, 132, 256,
              (qgc_share_geom){.threads = 256, .ctas = 132, .cw = 64, .scale_bytes = 2, .lg_wps = 1, .nkw = 64,
                               .nblk = 32, .nrmax = 2, .rp = 4, .lg_rp = 2, .kparts = 64, .passes = 1, .jw = 1,
                               .items = 1, .kwe = 8, .gp = 8, .sreg = 128, .xs_bytes = 17408, .red_bytes = 384,
                               .smem = 17920});
  /* Q2_0 g128 1000 x 256, 7 SMs: nrmax ceil(1000 / 7) = 143 (142 x 7 =
   * 994), nkw 4, nblk 2. RP 256: 1 x 4; 128: 2 x 2; 64: 3 x 1; 32: 5 x
   * 1; ...: fewest 3, RP 64 (4 k-parts, kwe 1, gp 4). sreg 143 x 2 x 2 =
   * 572, up to 576; xs 4 x 68 x 4 = 1088; red 3 x 4 x 64 x 8 + 128 =
   * 6272; smem 7936. */
  expect_geom(QGEMV_Q2_0, 128, 1000, 256, 7, 256,
              (qgc_share_geom){.threads = 256, .ctas = 7, .cw = 64, .scale_bytes = 2, .lg_wps = 1, .nkw = 4, .nblk = 2,
                               .nrmax = 143, .rp = 64, .lg_rp = 6, .kparts = 4, .passes = 3, .jw = 1, .items = 3,
                               .kwe = 1, .gp = 4, .sreg = 576, .xs_bytes = 1088, .red_bytes = 6272, .smem = 7936});
  /* Q2_0 g64 2000 x 128, 4 SMs: nrmax 500, nkw 2. RP 256: 2 x 2 = 4;
   * 128: 4 x 1 = 4; 64: 8 x 1: fewest 4, RP 256 (one k-part: kwe 1, gp
   * 1). sreg 500 x 2 x 2 = 2000; xs 2 x 68 x 4 = 544; red 2 x 1 x 256 x 8
   * + 128 = 4224; smem 6768. */
  expect_geom(QGEMV_Q2_0, 64, 2000, 128, 4, 256,
              (qgc_share_geom){.threads = 256, .ctas = 4, .cw = 64, .scale_bytes = 2, .lg_wps = 0, .nkw = 2, .nblk = 2,
                               .nrmax = 500, .rp = 256, .lg_rp = 8, .kparts = 1, .passes = 2, .jw = 2, .items = 4,
                               .kwe = 1, .gp = 1, .sreg = 2000, .xs_bytes = 544, .red_bytes = 4224, .smem = 6768});
}
END_TEST

/* The automatic rule: at most 24 rows a CTA for NF4, 16 for Q2_0. */
START_TEST(test_auto) {
  qgc_share_geom g;
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 1024, 4096, 132, SMEM_OPTIN, 0, &g)); /* 8 rows a CTA */
  ck_assert(qgc_share_auto(&g));
  ck_assert(qgc_share_choose(QGEMV_Q2_0, 64, 2112, 14336, 132, SMEM_OPTIN, 0, &g)); /* 16 */
  ck_assert(qgc_share_auto(&g));
  ck_assert(qgc_share_choose(QGEMV_Q2_0, 128, 2113, 4096, 132, SMEM_OPTIN, 0, &g)); /* 17 */
  ck_assert(!qgc_share_auto(&g));
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 2113, 4096, 132, SMEM_OPTIN, 0, &g)); /* 17 */
  ck_assert(qgc_share_auto(&g));
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 3168, 4096, 132, SMEM_OPTIN, 0, &g)); /* 24 */
  ck_assert(qgc_share_auto(&g));
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 3169, 4096, 132, SMEM_OPTIN, 0, &g)); /* 25 */
  ck_assert(!qgc_share_auto(&g));
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 4096, 4096, 132, SMEM_OPTIN, 0, &g)); /* 32 */
  ck_assert(!qgc_share_auto(&g));
  for (int nf4 = 0; nf4 < 2; nf4++) {
    memset(&g, 0, sizeof g);
    g.cw = nf4 ? 32 : 64;
    for (int rows = 1; rows <= 40; rows++) {
      g.nrmax = rows;
      EXPECT(qgc_share_auto(&g) == (rows <= (nf4 ? 24 : 16)), "%s, %d rows a CTA: auto %d", nf4 ? "NF4" : "Q2_0",
             rows, qgc_share_auto(&g));
    }
  }
}
END_TEST

/* The automatic thread count (share_layout.h's rule), worked out by hand
 * from the items a thread at 512 (test_choose's rule at T = 512), and the
 * counts that are refused. */
START_TEST(test_threads) {
  static const struct {
    qgemv_format f;
    int32_t group;
    int64_t n, k;
    int want;
  } c[] = {
      /* 132 SMs. NF4 1024 x 4096: nrmax 8, nkw 128; at 512 RP 8 (P 64):
       * 1 x 2, the fewest (RP 4: 2 x 1, RP 16: 1 x 4): 2 items, less than
       * a round */
      {QGEMV_NF4, 64, 1024, 4096, 256},
      /* NF4 1536 x 4096: nrmax 12; RP 4 (P 128): 3 x 1, the fewest (RP
       * 8: 2 x 2, RP 16: 1 x 4) */
      {QGEMV_NF4, 64, 1536, 4096, 256},
      /* NF4 2048 x 4096: nrmax 16; RP 16 (P 32): 1 x 4, the fewest (RP
       * 8: 2 x 2, RP 4: 4 x 1): one round */
      {QGEMV_NF4, 64, 2048, 4096, 512},
      /* Q2_0 g64 2048 x 4096: nkw 64; RP 16: 1 x 2 (RP 8: 2 x 1) */
      {QGEMV_Q2_0, 64, 2048, 4096, 256},
      /* Q2_0 g64 1024 x 8192: nrmax 8, nkw 128; RP 8: 1 x 2 */
      {QGEMV_Q2_0, 64, 1024, 8192, 256},
      /* Q2_0 g64 4096 x 4096: nrmax 32, nkw 64; RP 32 (P 16): 1 x 4, the
       * fewest (RP 16: 2 x 2, RP 8: 4 x 1) */
      {QGEMV_Q2_0, 64, 4096, 4096, 512},
      /* NF4 4096 x 4096: 8 items, NF4 1024 x 14336: 7 (test_choose) */
      {QGEMV_NF4, 64, 4096, 4096, 512},
      {QGEMV_NF4, 64, 1024, 14336, 512},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    qgc_share_geom g;
    EXPECT(qgc_share_choose(c[i].f, c[i].group, c[i].n, c[i].k, 132, SMEM_OPTIN, 0, &g) && g.threads == c[i].want,
           "%s/%d %lldx%lld: %d threads, expected %d", fmt_name(c[i].f), (int)c[i].group, (long long)c[i].n,
           (long long)c[i].k, g.threads, c[i].want);
  }
  /* where 512 would not fit the shared memory and 256 does: NF4 1024 x
   * 32768 on 132 SMs takes 164480 bytes at 256 (test_refusals); at 512
   * nrmax 8, nkw 1024: RP 8 (P 64) 1 x 16 items, red 1 x 16 x 8 x 8 + 128
   * + 64 = 1216, so 147456 + 16384 + 1216 = 165056 bytes */
  qgc_share_geom g;
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 1024, 32768, 132, 165056, 0, &g) && g.threads == 512);
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 1024, 32768, 132, 165055, 0, &g) && g.threads == 256);
  ck_assert_int_eq(g.smem, 164480);
  static const int bad[] = {128, 384, 1024, 257, -256, -1, 1};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    qgc_share_geom g, before;
    memset(&g, 0x5a, sizeof g);
    before = g;
    EXPECT(!qgc_share_choose(QGEMV_NF4, 64, 1024, 4096, 132, SMEM_OPTIN, bad[i], &g), "%d threads: a geometry",
           bad[i]);
    EXPECT(memcmp(&g, &before, sizeof g) == 0, "%d threads: refused, yet the geometry was written", bad[i]);
  }
}
END_TEST

/* Shapes the layout cannot hold, no SMs, and x past the shared memory;
 * a refusal sets nothing. */
START_TEST(test_refusals) {
  static const struct {
    qgemv_format f;
    int32_t group;
    int64_t n, k;
    int sms;
    size_t smem;
  } none[] = {
      {QGEMV_NF4, 64, 1024, 100, 132, SMEM_OPTIN},          /* k not whole words */
      {QGEMV_NF4, 64, 1024, 96, 132, SMEM_OPTIN},           /* 3 NF4 words, half a block */
      {QGEMV_Q2_0, 64, 1024, 96, 132, SMEM_OPTIN},          /* 1.5 Q2_0 words */
      {QGEMV_Q2_0, 128, 1024, 192, 132, SMEM_OPTIN},        /* whole words, 1.5 blocks */
      {QGEMV_Q2_0, 32, 1024, 4096, 132, SMEM_OPTIN},        /* no such group */
      {QGEMV_Q2_0, 256, 1024, 4096, 132, SMEM_OPTIN},       /* no such group */
      {QGEMV_NF4, 64, 0, 4096, 132, SMEM_OPTIN},            /* no rows */
      {QGEMV_NF4, 64, -64, 4096, 132, SMEM_OPTIN},          /* negative */
      {QGEMV_NF4, 64, 1024, 0, 132, SMEM_OPTIN},            /* no columns */
      {QGEMV_NF4, 64, 1024, -4096, 132, SMEM_OPTIN},        /* negative */
      {QGEMV_NF4, 64, 2147483648, 64, 132, SMEM_OPTIN},     /* n past int */
      {QGEMV_NF4, 64, 1024, 2147483648, 132, SMEM_OPTIN},   /* k past int (whole words) */
      {QGEMV_NF4, 64, 1024, 4096, 0, SMEM_OPTIN},           /* no SMs */
      {QGEMV_NF4, 64, 1024, 4096, -1, SMEM_OPTIN},          /* no SMs */
      {QGEMV_NF4, 64, 1024, 65536, 132, 101376},            /* x alone 2048 x 144 = 294912 bytes */
      {QGEMV_NF4, 64, 1024, 65536, 132, SMEM_OPTIN},        /* ... past H100's too */
      {QGEMV_NF4, 64, 1024, 32768, 132, 101376},            /* 164480 bytes (below), past 99 KiB */
      {QGEMV_NF4, 64, 1024, 32768, 132, 164479},            /* one byte short */
  };
  static const int counts[] = {256, 512, 0}; /* the larger count's sums take more shared memory, not less */
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
      qgc_share_geom g, before;
      memset(&g, 0x5a, sizeof g);
      before = g;
      EXPECT(!qgc_share_choose(none[i].f, none[i].group, none[i].n, none[i].k, none[i].sms, none[i].smem, counts[c],
                               &g),
             "case %zu: %s/%d %lldx%lld on %d SMs, %zu bytes, %d threads: a geometry (RP %d, items %d, smem %d)", i,
             fmt_name(none[i].f), (int)none[i].group, (long long)none[i].n, (long long)none[i].k, none[i].sms,
             none[i].smem, counts[c], g.rp, g.items, g.smem);
      EXPECT(memcmp(&g, &before, sizeof g) == 0, "case %zu, %d threads: refused, yet the geometry was written", i,
             counts[c]);
    }
  /* NF4 1024 x 32768, 132 SMs: nrmax 8, nkw 1024; RP 8 (1 x 32 items,
   * as RP 4, 2, 1: 2 x 16, 4 x 8, 8 x 4); xs 1024 x 144 = 147456, sreg 8
   * x 512 x 4 = 16384, red 640: 164480 bytes, exactly enough */
  qgc_share_geom g;
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 1024, 32768, 132, 164480, 256, &g));
  ck_assert_int_eq(g.smem, 164480);
  ck_assert_int_eq(g.rp, 8);
  ck_assert_int_eq(g.items, 32);
  /* what the refusals above are not: k = 192, whole words and blocks of
   * Q2_0 g64 and NF4 (3 blocks of 2 words) */
  ck_assert(qgc_share_choose(QGEMV_Q2_0, 64, 1024, 192, 132, SMEM_OPTIN, 256, &g) && g.nkw == 3 && g.nblk == 3);
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 1024, 192, 132, SMEM_OPTIN, 256, &g) && g.nkw == 6 && g.nblk == 3);
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 1, 64, 1, SMEM_OPTIN, 256, &g) && g.ctas == 1 && g.items == 1);
}
END_TEST

/* The resident sizes: G I 4096 code bytes and G sreg scale bytes, the
 * packed bytes plus the holes and padding. */
START_TEST(test_sizes) {
  qgc_share_geom g;
  /* NF4 1024 x 4096 on 132: 132 x 4 x 4096 = 2162688 code bytes, 132 x
   * 4 x 256 = 135168 word slots for the 1024 x 128 = 131072 words of the
   * packed 2097152 bytes: 4096 holes, the 32 rows of 132 x 8 = 1056 that
   * no CTA has; 132 x 2048 = 270336 scale bytes (packed 262144) */
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 1024, 4096, 132, SMEM_OPTIN, 256, &g));
  ck_assert_uint_eq(qgc_share_cta_code_bytes(&g), 16384u);
  ck_assert_uint_eq(qgc_share_code_bytes(&g), 2162688u);
  ck_assert_uint_eq(qgc_share_scale_bytes(&g), 270336u);
  /* Q2_0 g64 256 x 4096 on 132: one item, 132 x 4096 = 540672 code bytes
   * (packed 262144: a CTA's 1 or 2 rows fill 1 or 2 of its RP 4 rows of
   * 64 words), 132 x 256 = 33792 scale bytes */
  ck_assert(qgc_share_choose(QGEMV_Q2_0, 64, 256, 4096, 132, SMEM_OPTIN, 256, &g));
  ck_assert_uint_eq(qgc_share_code_bytes(&g), 540672u);
  ck_assert_uint_eq(qgc_share_scale_bytes(&g), 33792u);
  /* rows: CTA c's are [c n / G, (c + 1) n / G): 257 on 132, 1 or 2 */
  ck_assert(qgc_share_choose(QGEMV_NF4, 64, 257, 1152, 132, SMEM_OPTIN, 256, &g));
  ck_assert_int_eq(qgc_share_row0(&g, 257, 0), 0);
  ck_assert_int_eq(qgc_share_row0(&g, 257, 1), 1);   /* 257 / 132 */
  ck_assert_int_eq(qgc_share_row0(&g, 257, 2), 3);   /* 514 / 132 */
  ck_assert_int_eq(qgc_share_row0(&g, 257, 131), 255); /* 33667 / 132 */
  ck_assert_int_eq(qgc_share_row0(&g, 257, 132), 257);
}
END_TEST

START_TEST(test_pref_parse) {
  static const struct {
    const char *s;
    int ok;
    qgc_layout_pref pref;
  } c[] = {{"share", 1, QGC_LAYOUT_SHARE}, {"auto", 1, QGC_LAYOUT_AUTO}, {"tiles", 1, QGC_LAYOUT_TILES},
           {"lut", 1, QGC_LAYOUT_LUT},     {"SHARE", 0, 0},               {"shared", 0, 0},
           {"shar", 0, 0},                 {"share ", 0, 0},              {" share", 0, 0}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
    for (int start = 0; start < 4; start++) { /* a refusal leaves pref as it was */
      qgc_layout_pref p = (qgc_layout_pref)start;
      const int ok = qgc_layout_pref_parse(c[i].s, &p);
      EXPECT(ok == c[i].ok, "'%s': returned %d", c[i].s, ok);
      EXPECT(p == (c[i].ok ? c[i].pref : (qgc_layout_pref)start), "'%s': pref %d (was %d)", c[i].s, (int)p, start);
    }
}
END_TEST

int main(void) {
  Suite *s = suite_create("cuda_share_layout");
  TCase *tg = tcase_create("geometry");
  tcase_add_test(tg, test_choose);
  tcase_add_test(tg, test_auto);
  tcase_add_test(tg, test_threads);
  tcase_add_test(tg, test_refusals);
  tcase_add_test(tg, test_sizes);
  tcase_add_test(tg, test_pref_parse);
  tcase_add_test(tg, test_shapes_cover);
  suite_add_tcase(s, tg);
  TCase *te = tcase_create("emulated");
  tcase_set_timeout(te, 300);
  tcase_add_loop_test(te, test_emulated_contract, 0, qgemv_format_count() * NSHAPES);
  suite_add_tcase(s, te);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
