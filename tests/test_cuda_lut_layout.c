/*
 * The CUDA module's lookup-table layout (lut_layout.h), host side, on the
 * CPU (no GPU needed): the repack (lut_repack.c) in pieces of chunks
 * equals the whole-range repack and puts every packed byte where the
 * layout says; then the kernel's arithmetic (lut_kernels.cuh: lut_build's
 * slot tables, lut_kernel's lookups, scales and lane sums, the chunk sums
 * and the k-split in f64, lut_finish's RMSNorm), emulated here reading only
 * the repacked bytes, meets the accuracy contract against the oracle for
 * every format, x f32 and bf16, no norm and RMSNorm with f32 and bf16
 * gamma, every k-split S, several distributions and adversarial inputs.
 * The f32 steps are rounded as the kernel rounds them (products stored
 * through volatile, so that the host compiler fuses nothing); the lane sum
 * is a pairwise tree, not the device's shuffle order. The geometry choice,
 * the fill rule, QGEMV_CUDA_LAYOUT's parse and the sizes are checked
 * against values worked out by hand from lut_layout.h's rules. The GPU
 * suite (test_cuda_backend) then checks the real kernel. QGEMV_TEST_QUICK=1
 * trims the shapes.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/backend-cuda/lut_layout.h"
#include "expect.h"
#include "testutil.h"

#define GUARD 64 /* bytes past a repack's range that it must leave alone */

/* f32 steps rounded as written (no fused multiply-add on the host) */
static float mul_f32(float a, float b) {
  volatile float r = a * b;
  return r;
}

/* ---- the repack -------------------------------------------------------- */

/* A weight in the lookup-table layout (host memory). */
typedef struct lut_image {
  uint8_t *codes, *scales;
  size_t code_bytes, scale_bytes;
} lut_image;

static void fill_guarded(uint8_t *p, size_t bytes) { memset(p, 0xee, bytes + GUARD); }
static bool guard_intact(const uint8_t *p, size_t bytes) {
  for (size_t i = 0; i < GUARD; i++)
    if (p[bytes + i] != 0xee) return false;
  return true;
}

/* The whole range in one call, and again in pieces (the upload's runs of
 * chunks: one chunk, up to the middle, the rest, and an empty run at the
 * end), which must concatenate to the same bytes. */
static void repack(const qgemv_weight_desc *d, lut_image *im, const char *what) {
  const int64_t chunks = d->k / qgc_lut_chunk_k(d->format);
  const size_t ccb = (size_t)d->n * 128u,
               csb = (size_t)d->n * (size_t)qgc_lut_chunk_blocks(d->format, d->group) *
                     (size_t)qgc_lut_scale_bytes(d->format);
  im->code_bytes = qgc_lut_code_bytes(d->format, d->n, d->k);
  im->scale_bytes = qgc_lut_scale_bytes_total(d->format, d->n, d->k, d->group);
  EXPECT(im->code_bytes == ccb * (size_t)chunks, "%s: %zu code bytes, %lld chunks of %zu", what, im->code_bytes,
         (long long)chunks, ccb);
  EXPECT(im->scale_bytes == csb * (size_t)chunks, "%s: %zu scale bytes, %lld chunks of %zu", what, im->scale_bytes,
         (long long)chunks, csb);
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
  qgc_lut_repack_codes(d, 0, chunks, im->codes);
  qgc_lut_repack_scales(d, 0, chunks, im->scales);
  EXPECT(guard_intact(im->codes, im->code_bytes), "%s: the codes' repack wrote past its range", what);
  EXPECT(guard_intact(im->scales, im->scale_bytes), "%s: the scales' repack wrote past its range", what);
  const int64_t cuts[] = {0, 1, chunks / 2 > 1 ? chunks / 2 : 1, chunks, chunks};
  for (int i = 0; i + 1 < (int)(sizeof cuts / sizeof cuts[0]); i++) {
    const int64_t c0 = cuts[i], count = cuts[i + 1] - cuts[i];
    qgc_lut_repack_codes(d, c0, count, pc + (size_t)c0 * ccb);
    qgc_lut_repack_scales(d, c0, count, ps + (size_t)c0 * csb);
  }
  EXPECT(guard_intact(pc, im->code_bytes) && guard_intact(ps, im->scale_bytes), "%s: a run wrote past its range",
         what);
  EXPECT(memcmp(pc, im->codes, im->code_bytes) == 0, "%s: the codes' runs differ from the whole-range repack", what);
  EXPECT(memcmp(ps, im->scales, im->scale_bytes) == 0, "%s: the scales' runs differ from the whole-range repack",
         what);
  free(pc);
  free(ps);
}

static void image_free(lut_image *im) {
  free(im->codes);
  free(im->scales);
}

/* Every byte where lut_layout.h puts it: codes [chunk][row group][lane]
 * [16], byte b row 4 g + b / 4, slot 4 l + b % 4 (NF4 k 2 slot, Q2_0 k
 * 4 slot within the chunk); scales [chunk][row group][block][4 rows]. */
static void check_placement(const qgemv_weight_desc *d, const lut_image *im, const char *what) {
  const bool nf4 = d->format == QGEMV_NF4;
  const int ck = qgc_lut_chunk_k(d->format), per = nf4 ? 2 : 4, nblk = qgc_lut_chunk_blocks(d->format, d->group);
  const int64_t chunks = d->k / ck, groups = d->n / 4, blocks = d->k / d->group;
  const size_t bb = 2u + (size_t)d->group / 4u; /* Q2_0 block bytes */
  const uint8_t *data = d->data;
  for (int64_t c = 0; c < chunks; c++)
    for (int64_t g = 0; g < groups; g++) {
      for (int l = 0; l < 32; l++)
        for (int b = 0; b < 16; b++) {
          const int64_t row = 4 * g + b / 4, kk = c * ck + per * (4 * l + b % 4);
          const size_t at = nf4 ? (size_t)(row * (d->k / 2) + kk / 2)
                                : (size_t)(row * blocks + kk / d->group) * bb + 2 + (size_t)(kk % d->group) / 4;
          const uint8_t want = data[at];
          const uint8_t got = im->codes[(size_t)((c * groups + g) * 32 + l) * 16 + (size_t)b];
          EXPECT(got == want, "%s: code byte of chunk %lld, group %lld, lane %d, byte %d is %#x, packed %#x", what,
                 (long long)c, (long long)g, l, b, got, want);
        }
      for (int b = 0; b < nblk; b++)
        for (int r = 0; r < 4; r++) {
          const int64_t row = 4 * g + r, blk = c * nblk + b;
          const uint8_t *got = im->scales + (size_t)(((c * groups + g) * nblk + b) * 4 + r) * (nf4 ? 4u : 2u);
          const void *want = nf4 ? (const void *)(d->scales + row * blocks + blk)
                                 : (const void *)(data + (size_t)(row * blocks + blk) * bb);
          EXPECT(memcmp(got, want, nf4 ? 4 : 2) == 0, "%s: scale of chunk %lld, row %lld, block %d differs", what,
                 (long long)c, (long long)row, b);
        }
    }
}

/* ---- the kernel's arithmetic ------------------------------------------- */

/* The 128 slot tables of chunk c as lut_build makes them, from xt (x, or
 * x gamma rounded to f32): T[e] = A[e & 15] + B[e >> 4]. */
static void build_tables(qgemv_format f, const float *xt, int64_t c, float (*T)[256]) {
  const float *nf4 = qgemv_nf4_table();
  const int per = f == QGEMV_NF4 ? 2 : 4;
  for (int slot = 0; slot < 128; slot++) {
    const float *xs = xt + c * qgc_lut_chunk_k(f) + per * slot;
    float A[16], B[16];
    for (int v = 0; v < 16; v++) {
      if (f == QGEMV_NF4) {
        A[v] = mul_f32(nf4[v], xs[0]);
        B[v] = mul_f32(nf4[v], xs[1]);
      } else { /* (code - 1) x: exact products, one rounding in the add */
        A[v] = mul_f32((float)((v & 3) - 1), xs[0]) + mul_f32((float)((v >> 2) - 1), xs[1]);
        B[v] = mul_f32((float)((v & 3) - 1), xs[2]) + mul_f32((float)((v >> 2) - 1), xs[3]);
      }
    }
    for (int e = 0; e < 256; e++) T[slot][e] = A[e & 15] + B[e >> 4];
  }
}

/* Chunk sums cs[c][row] (f32): per lane the 4 lookups of a row's bytes,
 * ((t0 + t1) + (t2 + t3)) times the scale of the lane's block, summed over
 * the 32 lanes in a pairwise tree. Reads only the repacked bytes. */
static void chunk_sums(const qgemv_weight_desc *d, const lut_image *im, const float *xt, float *cs) {
  const int nblk = qgc_lut_chunk_blocks(d->format, d->group), sb = qgc_lut_scale_bytes(d->format);
  const int64_t chunks = d->k / qgc_lut_chunk_k(d->format), groups = d->n / 4;
  float(*T)[256] = malloc(128 * sizeof *T);
  ck_assert_ptr_nonnull(T);
  for (int64_t c = 0; c < chunks; c++) {
    build_tables(d->format, xt, c, T);
    for (int64_t g = 0; g < groups; g++) {
      const uint8_t *words = im->codes + (size_t)(c * groups + g) * 32 * 16;
      const uint8_t *sc = im->scales + (size_t)(c * groups + g) * (size_t)nblk * 4 * (size_t)sb;
      for (int i = 0; i < 4; i++) {
        float v[32];
        for (int l = 0; l < 32; l++) {
          const uint8_t *w = words + 16 * l + 4 * i;
          const int blk = l / (32 / nblk);
          const uint8_t *sp = sc + (size_t)(blk * 4 + i) * (size_t)sb;
          float s;
          if (sb == 4) {
            memcpy(&s, sp, 4);
          } else {
            uint16_t h;
            memcpy(&h, sp, 2);
            s = qgemv_f16_to_f32(h);
          }
          const float t0 = T[4 * l][w[0]], t1 = T[4 * l + 1][w[1]], t2 = T[4 * l + 2][w[2]], t3 = T[4 * l + 3][w[3]];
          v[l] = mul_f32((t0 + t1) + (t2 + t3), s);
        }
        for (int h = 16; h >= 1; h /= 2)
          for (int l = 0; l < h; l++) v[l] += v[l + h];
        cs[c * d->n + 4 * g + i] = v[0];
      }
    }
  }
  free(T);
}

/* y with k-split S: each slice's chunk sums added in f64, the slices
 * added in order, times 1/rms (ssc: the chunks' sums of x^2, or NULL),
 * rounded once to f32 (lut_finish). */
static void finish(const float *cs, const double *ssc, int64_t n, int64_t k, int64_t chunks, int S, float eps,
                   float *y) {
  const int64_t cpu = chunks / S;
  double t = 0.0;
  if (ssc)
    for (int ks = 0; ks < S; ks++) {
      double slice = 0.0;
      for (int64_t c = ks * cpu; c < (ks + 1) * cpu; c++) slice += ssc[c];
      t += slice;
    }
  for (int64_t row = 0; row < n; row++) {
    double s = 0.0;
    for (int ks = 0; ks < S; ks++) {
      double part = 0.0;
      for (int64_t c = ks * cpu; c < (ks + 1) * cpu; c++) part += (double)cs[c * n + row];
      s += part;
    }
    if (ssc) s *= 1.0 / sqrt(t / (double)k + (double)eps);
    y[row] = (float)s;
  }
}

/* ---- the cases ---------------------------------------------------------- */

typedef struct shape {
  int64_t n, k;
} shape;
/* n multiples of 1024 (3072: R 1024 only), several chunks; k of whole
 * chunks of every format (512) */
static const shape shapes[] = {{1024, 1024}, {2048, 2048}, {3072, 1024}};
enum { NSHAPES = sizeof shapes / sizeof shapes[0], XPATTERNS = DIST_COUNT + 1 };

static const char *pattern_name(int p) {
  return p < DIST_COUNT ? dist_name((dist_kind)p) : "outliers of 1e4x every 50";
}

static void make_x(rng *r, int pattern, float *x, int64_t k) {
  fill_random(r, pattern < DIST_COUNT ? (dist_kind)pattern : DIST_NORMAL, x, (size_t)k);
  if (pattern == DIST_COUNT)
    for (int64_t j = 7; j < k; j += 50) x[j] *= 1e4f;
}

/* The worst error over the contract's bound of y against the oracle's ref
 * (bound 0: y must be exact; as tu_check_contract, for an f32 y). */
static double worst_ratio(const float *y, const double *ref, const double *bound, int64_t n, int64_t *where) {
  double worst = 0.0;
  *where = 0;
  for (int64_t i = 0; i < n; i++) {
    const double ratio = tu_contract_ratio((double)y[i], ref[i], bound[i], false);
    if (ratio > worst) {
      worst = ratio;
      *where = i;
    }
  }
  return worst;
}

/* x of both dtypes and every norm (the kernel's XBF x NORM instances) on
 * one weight, checked for every k-split S the layout allows. */
static void check_weight(const qgemv_weight_desc *d, const lut_image *im, rng *r, int pattern, const char *what) {
  const int64_t n = d->n, k = d->k, chunks = k / qgc_lut_chunk_k(d->format);
  float *x = malloc((size_t)k * sizeof(float)), *gm = malloc((size_t)k * sizeof(float));
  float *xv = malloc((size_t)k * sizeof(float)), *gv = malloc((size_t)k * sizeof(float));
  float *xt = malloc((size_t)k * sizeof(float)), *cs = malloc((size_t)(chunks * n) * sizeof(float));
  float *y = malloc((size_t)n * sizeof(float));
  double *ref = malloc((size_t)n * sizeof(double)), *bound = malloc((size_t)n * sizeof(double));
  double *ssc = malloc((size_t)chunks * sizeof(double));
  ck_assert(x && gm && xv && gv && xt && cs && y && ref && bound && ssc);
  make_x(r, pattern, x, k);
  fill_random(r, DIST_NORMAL, gm, (size_t)k);
  const float eps = 1e-5f;
  for (int xd = 0; xd < 2; xd++)
    for (int norm = 0; norm < 3; norm++) { /* none, f32 gamma, bf16 gamma */
      const qgemv_dtype xt_dtype = xd ? QGEMV_BF16 : QGEMV_F32, gt = norm == 2 ? QGEMV_BF16 : QGEMV_F32;
      void *xb = tu_convert(x, (size_t)k, xt_dtype), *gb = tu_convert(gm, (size_t)k, gt);
      for (int64_t j = 0; j < k; j++) { /* the values the kernel reads, widened exactly */
        xv[j] = (float)tu_elem(xt_dtype, xb, (size_t)j);
        gv[j] = (float)tu_elem(gt, gb, (size_t)j);
        xt[j] = norm ? mul_f32(xv[j], gv[j]) : xv[j];
      }
      for (int64_t c = 0; c < chunks; c++) {
        const int ck = qgc_lut_chunk_k(d->format);
        ssc[c] = 0.0;
        for (int64_t j = c * ck; j < (c + 1) * ck; j++) ssc[c] += (double)xv[j] * (double)xv[j];
      }
      EXPECT_OK(qgemv_reference_matvec(d, 1, xt_dtype, xb, gt, norm ? gb : NULL, eps, ref, bound));
      chunk_sums(d, im, xt, cs);
      for (int S = 1; S <= QGC_LUT_MAX_SPLIT && S <= chunks; S++) {
        if (chunks % S) continue;
        finish(cs, norm ? ssc : NULL, n, k, chunks, S, eps, y);
        int64_t at;
        const double worst = worst_ratio(y, ref, bound, n, &at);
        EXPECT(worst <= 1.0,
               "%s, x %s (%s), norm %s, S %d: %.3g of the allowed error at row %lld: emulated %.9g, oracle %.9g, "
               "allowed +-%.3g",
               what, xd ? "bf16" : "f32", pattern_name(pattern),
               norm == 0 ? "off" : norm == 1 ? "f32 gamma" : "bf16 gamma", S, worst, (long long)at, y[at], ref[at],
               tu_contract_allowed(ref[at], bound[at], false));
      }
      free(xb);
      free(gb);
    }
  free(x);
  free(gm);
  free(xv);
  free(gv);
  free(xt);
  free(cs);
  free(y);
  free(ref);
  free(bound);
  free(ssc);
}

/* Loop index: format x shape. Each weight distribution in turn, with
 * every x pattern (four distributions and outlier channels) spread over
 * them; on the first shape also zero weights everywhere (R = 0: y must be
 * exactly 0). */
START_TEST(test_emulated_contract) {
  const int fi_index = _i / NSHAPES, si = _i % NSHAPES;
  const qgemv_format_info fi = tu_format(fi_index);
  const shape sh = shapes[si];
  const bool quick = tu_quick();
  if (quick && si > 0) return;
  rng r = {.s = 4242u + 17u * (unsigned)_i};
  const int nweights = quick ? 1 : si == 0 ? DIST_COUNT : 2;
  for (int wd = 0; wd < nweights; wd++) {
    tu_weight w;
    tu_weight_make(&r, (dist_kind)wd, fi.format, fi.group, sh.n, sh.k, &w);
    char what[160];
    snprintf(what, sizeof what, "%s %lldx%lld, weights %s", fi.label, (long long)sh.n, (long long)sh.k,
             dist_name((dist_kind)wd));
    lut_image im;
    repack(&w.desc, &im, what);
    if (wd == 0) check_placement(&w.desc, &im, what);
    for (int p = wd; p < XPATTERNS; p += quick ? 2 : nweights) check_weight(&w.desc, &im, &r, p, what);
    image_free(&im);
    if (wd == 0 && si == 0 && !quick) { /* zero weights: NF4 code 7, Q2_0 code 1 */
      const size_t bytes = qgemv_data_bytes(fi.format, sh.n, sh.k, fi.group);
      uint8_t *data = w.data;
      if (fi.format == QGEMV_NF4) {
        memset(data, 0x77, bytes);
      } else {
        const size_t bb = 2u + (size_t)fi.group / 4u;
        for (size_t b = 0; b < bytes / bb; b++) memset(data + b * bb + 2, 0x55, bb - 2);
      }
      snprintf(what, sizeof what, "%s %lldx%lld, zero weights", fi.label, (long long)sh.n, (long long)sh.k);
      repack(&w.desc, &im, what);
      check_weight(&w.desc, &im, &r, DIST_NORMAL, what);
      image_free(&im);
    }
    tu_weight_free(&w);
  }
}
END_TEST

/* ---- the geometry, the fill rule, the preference, the sizes ------------- */

static void expect_geom_from(int min_rows, qgemv_format f, int64_t n, int64_t k, int sms, int rows, int ksplit,
                             int64_t units, int fills) {
  qgc_lut_geom g;
  EXPECT(qgc_lut_choose(f, n, k, sms, min_rows, &g), "%s %lldx%lld on %d SMs: no geometry", f == QGEMV_NF4 ? "NF4" : "Q2_0",
         (long long)n, (long long)k, sms);
  EXPECT(g.rows == rows && g.nb == rows / (QGC_LUT_WARPS * QGC_LUT_BATCH) && g.ksplit == ksplit && g.units == units,
         "%s %lldx%lld on %d SMs: R %d (nb %d), S %d, %lld units; expected R %d, S %d, %lld units",
         f == QGEMV_NF4 ? "NF4" : "Q2_0", (long long)n, (long long)k, sms, g.rows, g.nb, g.ksplit, (long long)g.units,
         rows, ksplit, (long long)units);
  EXPECT(qgc_lut_fills(&g, sms) == fills, "%s %lldx%lld on %d SMs: %d units %s", f == QGEMV_NF4 ? "NF4" : "Q2_0",
         (long long)n, (long long)k, sms, (int)g.units, fills ? "do not fill" : "fill");
}
static void expect_geom(qgemv_format f, int64_t n, int64_t k, int sms, int rows, int ksplit, int64_t units,
                        int fills) {
  expect_geom_from(QGC_LUT_ROWS_MIN, f, n, k, sms, rows, ksplit, units, fills);
}

/* Worked out by hand: R 2048 (n / 2048 row units), R 1024 (n / 1024) and
 * R 512 (n / 512), times each S <= 64 dividing the chunks (NF4 k / 256,
 * Q2_0 k / 512), at most `sms` units; the most units, the larger R on a
 * tie; fills: units >= 3/4 of the SMs. */
START_TEST(test_choose) {
  /* chunks 32; R 2048: 14 x 8 = 112 (x 16 = 224 > 132); R 1024: 28 x 4 =
   * 112 and R 512: 56 x 2 = 112, ties */
  expect_geom(QGEMV_NF4, 28672, 8192, 132, 2048, 8, 112, 1);
  /* chunks 112 (divisors 1 2 4 7 8 14 16 28 56); R 2048: 4 x 28 = 112;
   * R 1024: 8 x 16 = 128 <= 132 (8 x 28 = 224 past the wave): 128 wins;
   * R 512: 16 x 8 = 128, a tie */
  expect_geom(QGEMV_NF4, 8192, 28672, 132, 1024, 16, 128, 1);
  /* chunks 16; R 2048: 7 x 16 = 112; R 1024: 14 x 8 and R 512: 28 x 4,
   * ties */
  expect_geom(QGEMV_NF4, 14336, 4096, 132, 2048, 16, 112, 1);
  /* chunks 8; R 2048: 7 x 8 = 56 at most; R 1024: 14 x 8 = 112; R 512: 28
   * x 4 = 112, a tie */
  expect_geom(QGEMV_Q2_0, 14336, 4096, 132, 1024, 8, 112, 1);
  /* chunks 16; R 2048: 2 x 16 = 32; R 1024: 4 x 16 = 64; R 512: 8 x 16 =
   * 128 */
  expect_geom(QGEMV_NF4, 4096, 4096, 132, 512, 16, 128, 1);
  /* chunks 8; R 2048: 2 x 8 = 16; R 1024: 4 x 8 = 32; R 512: 8 x 8 = 64;
   * 64 x 4 < 132 x 3 */
  expect_geom(QGEMV_Q2_0, 4096, 4096, 132, 512, 8, 64, 0);
  /* chunks 32; R 2048: 4 x 32 = 128; R 1024: 8 x 16 = 128 (x 32 = 256
   * past the wave) and R 512: 16 x 8, ties at other S */
  expect_geom(QGEMV_NF4, 8192, 8192, 132, 2048, 32, 128, 1);
  /* chunks 32; R 1024: 3 x 32 = 96; R 512: 6 x 16 = 96 (x 32 = 192), a
   * tie; 96 x 4 < 132 x 3 */
  expect_geom(QGEMV_NF4, 3072, 8192, 132, 1024, 32, 96, 0);
  /* 114 SMs: R 2048: 4 x 16 = 64 (x 32 = 128 > 114); R 1024: 8 x 8 = 64
   * and R 512: 16 x 4 = 64, ties; 64 x 4 < 114 x 3 */
  expect_geom(QGEMV_NF4, 8192, 8192, 114, 2048, 16, 64, 0);
  /* 114 SMs: R 2048: 14 x 8 = 112; R 1024: 28 x 4 and R 512: 56 x 2,
   * ties */
  expect_geom(QGEMV_NF4, 28672, 8192, 114, 2048, 8, 112, 1);
  /* the S cap: chunks 128; n 1024: R 1024: 1 x 64, R 512: 2 x 64 = 128 (S
   * 128 > 64), even where 1000 SMs would take 256 */
  expect_geom(QGEMV_NF4, 1024, 32768, 132, 512, 64, 128, 1);
  expect_geom(QGEMV_NF4, 1024, 32768, 1000, 512, 64, 128, 0);
  /* S divides the chunks: 96 (S <= 64: 48 at most); R 2048: 1 x 48; R
   * 1024: 2 x 48 = 96; R 512: 4 x 32 = 128 (4 x 48 = 192 past the wave) */
  expect_geom(QGEMV_NF4, 2048, 24576, 132, 512, 32, 128, 1);
  /* one chunk: S 1, n / 512 units */
  expect_geom(QGEMV_Q2_0, 1024, 512, 132, 512, 1, 2, 0);
  expect_geom(QGEMV_NF4, 2048, 256, 132, 512, 1, 4, 0);
  /* The automatic choice's geometries (R 2048 and 1024 only, R 512 not
   * yet measured): the choices before R 512 existed, where R 512 changed
   * one above */
  expect_geom_from(QGC_LUT_AUTO_ROWS_MIN, QGEMV_NF4, 4096, 4096, 132, 1024, 16, 64, 0);
  expect_geom_from(QGC_LUT_AUTO_ROWS_MIN, QGEMV_Q2_0, 4096, 4096, 132, 1024, 8, 32, 0);
  expect_geom_from(QGC_LUT_AUTO_ROWS_MIN, QGEMV_NF4, 1024, 32768, 132, 1024, 64, 64, 0);
  expect_geom_from(QGC_LUT_AUTO_ROWS_MIN, QGEMV_NF4, 2048, 24576, 132, 1024, 48, 96, 0);
  expect_geom_from(QGC_LUT_AUTO_ROWS_MIN, QGEMV_Q2_0, 1024, 512, 132, 1024, 1, 1, 0);
  expect_geom_from(QGC_LUT_AUTO_ROWS_MIN, QGEMV_NF4, 28672, 8192, 132, 2048, 8, 112, 1);
  expect_geom_from(QGC_LUT_AUTO_ROWS_MIN, QGEMV_NF4, 8192, 28672, 132, 1024, 16, 128, 1);
  /* n / R past the SMs even at S 1: the fewest units, R 2048 (half the
   * table builds a row): 307200 / 2048 = 150 (R 1024: 300) */
  expect_geom(QGEMV_NF4, 307200, 4096, 132, 2048, 1, 150, 1);
  /* Gemma's output layer: 256000 / 2048 = 125 <= 132, one wave at S 1
   * (chunks 9; S 3 gives 375, past the wave); R 1024: 250, past it */
  expect_geom(QGEMV_NF4, 256000, 2304, 132, 2048, 1, 125, 1);
  /* exactly one wave at R 2048 (270336 / 2048 = 132) beats R 1024's 264 */
  expect_geom(QGEMV_NF4, 270336, 4096, 132, 2048, 1, 132, 1);
  /* shapes the layout cannot hold, and no SMs */
  static const struct {
    qgemv_format f;
    int64_t n, k;
    int sms;
  } none[] = {{QGEMV_NF4, 1000, 300, 132},  {QGEMV_NF4, 1024, 300, 132},  {QGEMV_NF4, 1000, 256, 132},
              {QGEMV_Q2_0, 1024, 256, 132}, {QGEMV_Q2_0, 1024, 768, 132}, {QGEMV_NF4, 1536, 4096, 132},
              {QGEMV_NF4, 0, 4096, 132},    {QGEMV_NF4, 4096, 0, 132},    {QGEMV_NF4, 4096, 4096, 0}};
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
    qgc_lut_geom g = {0, 0, 0, 0};
    EXPECT(!qgc_lut_choose(none[i].f, none[i].n, none[i].k, none[i].sms, QGC_LUT_ROWS_MIN, &g),
           "case %zu: %lldx%lld on %d SMs has a geometry (R %d, S %d)", i, (long long)none[i].n, (long long)none[i].k,
           none[i].sms, g.rows, g.ksplit);
  }
}
END_TEST

START_TEST(test_shape_ok) {
  ck_assert(qgc_lut_shape_ok(QGEMV_NF4, 1024, 256));
  ck_assert(qgc_lut_shape_ok(QGEMV_NF4, 3072, 768));
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, 1024, 128));
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, 1024, 320));
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, 512, 256));
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, 1000, 256));
  ck_assert(qgc_lut_shape_ok(QGEMV_Q2_0, 1024, 512));
  ck_assert(qgc_lut_shape_ok(QGEMV_Q2_0, 2048, 1536));
  ck_assert(!qgc_lut_shape_ok(QGEMV_Q2_0, 1024, 256));
  ck_assert(!qgc_lut_shape_ok(QGEMV_Q2_0, 1024, 768));
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, 0, 256));
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, 1024, 0));
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, -1024, 256));
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, 1024, -256));
  /* n and k within int (the kernel's indices) */
  ck_assert(qgc_lut_shape_ok(QGEMV_NF4, 2147482624, 256)); /* 2^31 - 1024 */
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, 2147483648, 256));
  ck_assert(qgc_lut_shape_ok(QGEMV_NF4, 1024, 2147483392)); /* 2^31 - 256 */
  ck_assert(!qgc_lut_shape_ok(QGEMV_NF4, 1024, 2147483648));
}
END_TEST

START_TEST(test_fills) {
  /* units x 4 >= sms x 3: 99 of 132 fill (396 = 396), 98 do not */
  static const struct {
    int64_t units;
    int sms, fills;
  } c[] = {{99, 132, 1}, {98, 132, 0}, {112, 132, 1}, {64, 132, 0}, {132, 132, 1}, {300, 132, 1},
           {86, 114, 1}, {85, 114, 0}, {1, 1, 1},    {3, 4, 1},     {2, 4, 0}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    const qgc_lut_geom g = {8, 2048, 1, c[i].units};
    EXPECT(qgc_lut_fills(&g, c[i].sms) == c[i].fills, "%lld units on %d SMs: fills %d, expected %d",
           (long long)c[i].units, c[i].sms, qgc_lut_fills(&g, c[i].sms), c[i].fills);
    /* the automatic choice: NF4 where it fills, Q2_0 never */
    EXPECT(qgc_lut_auto(QGEMV_NF4, &g, c[i].sms) == c[i].fills, "NF4 auto, %lld units on %d SMs",
           (long long)c[i].units, c[i].sms);
    EXPECT(!qgc_lut_auto(QGEMV_Q2_0, &g, c[i].sms), "Q2_0 auto, %lld units on %d SMs", (long long)c[i].units,
           c[i].sms);
  }
}
END_TEST

/* The L2 prefetch: NF4 where a CTA sums one chunk (k / 256 / S == 1),
 * nothing for Q2_0 or for several chunks a CTA. */
START_TEST(test_l2pf) {
  static const struct {
    qgemv_format f;
    int64_t k;
    int ksplit, batches;
  } c[] = {
      {QGEMV_NF4, 4096, 16, QGC_LUT_L2PF_BATCHES},  /* 14336 x 4096: 16 chunks, S 16 */
      {QGEMV_NF4, 14336, 56, QGC_LUT_L2PF_BATCHES}, /* 4096 x 14336: 56 chunks, S 56 */
      {QGEMV_NF4, 256, 1, QGC_LUT_L2PF_BATCHES},    /* one chunk, no split */
      {QGEMV_NF4, 8192, 8, 0},                      /* 28672 x 8192: 4 chunks a CTA */
      {QGEMV_NF4, 28672, 16, 0},                    /* 8192 x 28672: 7 */
      {QGEMV_NF4, 512, 1, 0},                       /* 2 */
      {QGEMV_Q2_0, 4096, 8, 0},                     /* one chunk of 512, but Q2_0 */
      {QGEMV_Q2_0, 512, 1, 0},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    const qgc_lut_geom g = {8, 2048, c[i].ksplit, 112};
    const int got = qgc_lut_l2pf(c[i].f, &g, c[i].k);
    EXPECT(got == c[i].batches, "%s k %lld S %d: prefetch %d batches ahead, expected %d",
           c[i].f == QGEMV_NF4 ? "NF4" : "Q2_0", (long long)c[i].k, c[i].ksplit, got, c[i].batches);
  }
}
END_TEST

START_TEST(test_pref_parse) {
  static const struct {
    const char *s;
    int ok;
    qgc_layout_pref pref;
  } c[] = {{NULL, 1, QGC_LAYOUT_AUTO}, {"", 1, QGC_LAYOUT_AUTO},     {"auto", 1, QGC_LAYOUT_AUTO},
           {"tiles", 1, QGC_LAYOUT_TILES}, {"lut", 1, QGC_LAYOUT_LUT}, {"LUT", 0, 0},
           {"lut ", 0, 0},                 {"tile", 0, 0},             {"autox", 0, 0},
           {" auto", 0, 0},                {"0", 0, 0}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
    for (int start = 0; start < 3; start++) { /* a refusal leaves pref as it was */
      qgc_layout_pref p = (qgc_layout_pref)start;
      const int ok = qgc_layout_pref_parse(c[i].s, &p);
      EXPECT(ok == c[i].ok, "'%s': returned %d", c[i].s ? c[i].s : "(null)", ok);
      EXPECT(p == (c[i].ok ? c[i].pref : (qgc_layout_pref)start), "'%s': pref %d (was %d)",
             c[i].s ? c[i].s : "(null)", (int)p, start);
    }
}
END_TEST

/* The resident bytes are the packed format's: NF4 codes = data, scales =
 * the f32 scales; Q2_0 codes + fp16 scales = data. The workspace: S x n
 * partial rows and S sums of squares, f64. */
START_TEST(test_sizes) {
  static const shape s[] = {{1024, 512}, {4096, 4096}, {14336, 4096}, {8192, 28672}, {3072, 1536}};
  for (int f = 0; f < qgemv_format_count(); f++) {
    const qgemv_format_info fi = tu_format(f);
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
      const int64_t n = s[i].n, k = s[i].k;
      const size_t cb = qgc_lut_code_bytes(fi.format, n, k), sb = qgc_lut_scale_bytes_total(fi.format, n, k, fi.group);
      const size_t data = qgemv_data_bytes(fi.format, n, k, fi.group),
                   nsc = qgemv_scale_count(fi.format, n, k, fi.group);
      if (fi.format == QGEMV_NF4) {
        EXPECT(cb == data && sb == nsc * sizeof(float) && cb == (size_t)(n * k / 2) && sb == (size_t)(n * k / 64 * 4),
               "%s %lldx%lld: codes %zu (data %zu), scales %zu (%zu f32)", fi.label, (long long)n, (long long)k, cb,
               data, sb, nsc);
      } else {
        EXPECT(cb + sb == data && nsc == 0 && cb == (size_t)(n * k / 4) && sb == (size_t)(n * (k / fi.group) * 2),
               "%s %lldx%lld: codes %zu + scales %zu, data %zu", fi.label, (long long)n, (long long)k, cb, sb, data);
      }
      /* and what one chunk of a row holds */
      const int ck = qgc_lut_chunk_k(fi.format);
      EXPECT(ck == (fi.format == QGEMV_NF4 ? 256 : 512) && qgc_lut_chunk_blocks(fi.format, fi.group) == ck / fi.group,
             "%s: chunk k %d", fi.label, ck);
    }
  }
  ck_assert_uint_eq(qgc_lut_work_bytes(4096, 16), (16u * 4096u + 16u) * 8u);
  ck_assert_uint_eq(qgc_lut_work_bytes(14336, 1), (14336u + 1u) * 8u);
  ck_assert_uint_eq(qgc_lut_work_bytes(1024, 64), (64u * 1024u + 64u) * 8u);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cuda_lut_layout");
  TCase *tg = tcase_create("geometry");
  tcase_add_test(tg, test_choose);
  tcase_add_test(tg, test_shape_ok);
  tcase_add_test(tg, test_fills);
  tcase_add_test(tg, test_l2pf);
  tcase_add_test(tg, test_pref_parse);
  tcase_add_test(tg, test_sizes);
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
