/*
 * Non-finite data (issue 6, item 1; DESIGN.md s.4 and s.5).
 *
 * - A NaN or infinite scale, in any encoding, at any (row, block), makes
 *   qgemv_weight_upload, qgemv_dequantize and qgemv_reference_matvec return
 *   QGEMV_ERR_BAD_DATA with a message naming that row and block (the first
 *   in row-major order when there are several), and write nothing.
 * - The largest, smallest and signed finite scales are accepted.
 * - qgemv_quantize names the row and column of a non-finite weight and
 *   writes nothing; a finite weight it accepts must give an uploadable
 *   weight.
 * - NaN and infinite activations (and gamma) are computed through as IEEE
 *   says, never a crash: every output is NaN exactly where the oracle's is,
 *   the same infinity where the oracle has one, and within the accuracy
 *   contract elsewhere; a clean row next to poisoned ones is bit-identical
 *   to computing it alone. On every CPU level.
 */
#define _GNU_SOURCE
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "expect.h"
#include "testutil.h"

static unsigned long *cases; /* shared with the forked tests */
static void count_case(void) { __atomic_fetch_add(cases, 1, __ATOMIC_RELAXED); }

#define POISON 0x5a

static bool all_bytes(const void *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i++)
    if (((const unsigned char *)p)[i] != v) return false;
  return true;
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* BAD_DATA with a message that names `where` ("row 2 block 3") and the
 * kind of value ("NaN" or "infinite"). */
static void expect_bad_data(qgemv_status got, const char *where, const char *kind, const char *what) {
  count_case();
  const char *m = qgemv_last_error();
  EXPECT(got == QGEMV_ERR_BAD_DATA, "%s: %s, expected QGEMV_ERR_BAD_DATA (%s)", what, qgemv_status_str(got), m);
  EXPECT(strstr(m, where) != NULL, "%s: message \"%s\" does not name \"%s\"", what, m, where);
  EXPECT(kind == NULL || strstr(m, kind) != NULL, "%s: message \"%s\" does not say \"%s\"", what, m, kind);
}

/* Upload, dequantize and the oracle all refuse desc, naming `where`, and
 * leave their outputs alone. */
static void expect_desc_refused(qgemv_ctx *ctx, const qgemv_weight_desc *d, const char *where, const char *kind,
                                const char *what) {
  char call[160];
  qgemv_weight *w = (qgemv_weight *)&w;
  snprintf(call, sizeof call, "upload %s", what);
  expect_bad_data(qgemv_weight_upload(ctx, d, &w), where, kind, call);
  EXPECT(w == NULL, "%s left *out set", call);
  size_t count = (size_t)d->n * (size_t)d->k;
  float *out = malloc(count * sizeof(float));
  double *y = malloc((size_t)d->n * sizeof(double)), *x = calloc((size_t)d->k, sizeof(double));
  ck_assert(out && y && x);
  memset(out, POISON, count * sizeof(float));
  memset(y, POISON, (size_t)d->n * sizeof(double));
  snprintf(call, sizeof call, "dequantize %s", what);
  expect_bad_data(qgemv_dequantize(d, out), where, kind, call);
  EXPECT(all_bytes(out, count * sizeof(float), POISON), "%s wrote its output", call);
  snprintf(call, sizeof call, "reference_matvec %s", what);
  expect_bad_data(qgemv_reference_matvec(d, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, y, NULL), where, kind, call);
  EXPECT(all_bytes(y, (size_t)d->n * sizeof(double), POISON), "%s wrote y", call);
  free(out);
  free(y);
  free(x);
}

/* ---- scales ------------------------------------------------------------- */

static const uint32_t f32_bad[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xffffffffu, 0x7f800000u, 0xff800000u};
static const uint16_t f16_bad[] = {0x7e00u, 0xfe00u, 0x7c01u, 0xffffu, 0x7fffu, 0x7c00u, 0xfc00u};

static const char *f32_kind(uint32_t u) { return (u & 0x7fffffu) ? "NaN" : "infinite"; }
static const char *f16_kind(uint16_t h) { return (h & 0x3ffu) ? "NaN" : "infinite"; }

/* (row, block) positions over a 5-row weight: corners, middle, last. */
static const int positions[][2] = {{0, 0}, {0, 3}, {2, 1}, {4, 0}, {4, 3}};
enum { NPOS = sizeof positions / sizeof positions[0], SN = 5 };

START_TEST(nf4_nonfinite_scales) {
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  rng r = {.s = 71};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, SN, 256, &hw); /* 4 blocks per row */
  for (size_t v = 0; v < sizeof f32_bad / sizeof f32_bad[0]; v++) {
    for (int p = 0; p < NPOS; p++) {
      int row = positions[p][0], blk = positions[p][1];
      size_t at = (size_t)row * 4 + (size_t)blk;
      float saved = hw.scales[at];
      hw.scales[at] = bits_f32(f32_bad[v]);
      char where[48], what[96];
      snprintf(where, sizeof where, "row %d block %d", row, blk);
      snprintf(what, sizeof what, "NF4 scale 0x%08x at %s", (unsigned)f32_bad[v], where);
      expect_desc_refused(ctx, &hw.desc, where, f32_kind(f32_bad[v]), what);
      /* a second bad scale later in row-major order changes nothing */
      if (at + 1 < (size_t)SN * 4) {
        float next = hw.scales[at + 1];
        hw.scales[at + 1] = NAN;
        snprintf(what, sizeof what, "NF4 scale 0x%08x at %s, NaN after it", (unsigned)f32_bad[v], where);
        expect_desc_refused(ctx, &hw.desc, where, f32_kind(f32_bad[v]), what);
        hw.scales[at + 1] = next;
      }
      hw.scales[at] = saved;
    }
  }
  /* extreme finite scales are data, not errors */
  const float fine[] = {FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, bits_f32(1u), -0.0f, 0.0f};
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
    hw.scales[6] = fine[i];
    qgemv_weight *w;
    EXPECT_OK(qgemv_weight_upload(ctx, &hw.desc, &w));
    qgemv_weight_free(w);
  }
  tu_weight_free(&hw);
  qgemv_close(ctx);
}
END_TEST

START_TEST(q2_nonfinite_scales) {
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  rng r = {.s = 72};
  for (int32_t g = 64; g <= 128; g += 64) {
    tu_weight hw;
    const int64_t k = 4 * g; /* 4 blocks per row */
    const size_t bb = 2 + (size_t)g / 4;
    tu_weight_make(&r, DIST_NORMAL, QGEMV_Q2_0, g, SN, k, &hw);
    uint8_t *data = hw.data;
    for (size_t v = 0; v < sizeof f16_bad / sizeof f16_bad[0]; v++) {
      for (int p = 0; p < NPOS; p++) {
        int row = positions[p][0], blk = positions[p][1];
        uint8_t *d = data + ((size_t)row * 4 + (size_t)blk) * bb;
        uint8_t lo = d[0], hi = d[1];
        d[0] = (uint8_t)(f16_bad[v] & 0xff);
        d[1] = (uint8_t)(f16_bad[v] >> 8);
        char where[48], what[96];
        snprintf(where, sizeof where, "row %d block %d", row, blk);
        snprintf(what, sizeof what, "Q2_0/%d d=0x%04x at %s", (int)g, (unsigned)f16_bad[v], where);
        expect_desc_refused(ctx, &hw.desc, where, f16_kind(f16_bad[v]), what);
        if (row < SN - 1) { /* and a bad block in the next row too */
          uint8_t *e = d + 4 * bb;
          uint8_t elo = e[0], ehi = e[1];
          e[0] = 0x00;
          e[1] = 0x7c;
          snprintf(what, sizeof what, "Q2_0/%d d=0x%04x at %s, inf below", (int)g, (unsigned)f16_bad[v], where);
          expect_desc_refused(ctx, &hw.desc, where, f16_kind(f16_bad[v]), what);
          e[0] = elo;
          e[1] = ehi;
        }
        d[0] = lo;
        d[1] = hi;
      }
    }
    /* the largest, smallest subnormal and negative fp16 scales are fine */
    const uint16_t fine[] = {0x7bffu, 0xfbffu, 0x0001u, 0x8001u, 0x8000u, 0x0000u, 0x0400u};
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
      data[bb * 7] = (uint8_t)(fine[i] & 0xff);
      data[bb * 7 + 1] = (uint8_t)(fine[i] >> 8);
      qgemv_weight *w;
      EXPECT_OK(qgemv_weight_upload(ctx, &hw.desc, &w));
      qgemv_weight_free(w);
    }
    tu_weight_free(&hw);
  }
  qgemv_close(ctx);
}
END_TEST

/* ---- quantize ----------------------------------------------------------- */

START_TEST(quantize_nonfinite_weights) {
  enum { N = 3, K = 256 };
  static float w[N * K];
  static unsigned char data[N * K];
  static float scales[N * K / 64];
  rng r = {.s = 73};
  static const int at[][2] = {{0, 0}, {0, 255}, {1, 64}, {2, 130}, {2, 255}};
  const float bad[] = {NAN, -NAN, INFINITY, -INFINITY, bits_f32(0x7f800001u)};
  for (int f = 0; f < qgemv_format_count(); f++) {
    const qgemv_format fmt = tu_format(f).format;
    const int32_t g = tu_format(f).group;
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
      for (size_t p = 0; p < sizeof at / sizeof at[0]; p++) {
        fill_random(&r, DIST_NORMAL, w, N * K);
        w[at[p][0] * K + at[p][1]] = bad[b];
        if (p > 0) w[N * K - 1] = INFINITY; /* a later one must not be the one named */
        memset(data, POISON, sizeof data);
        memset(scales, POISON, sizeof scales);
        char where[48], what[96];
        snprintf(where, sizeof where, "row %d column %d", at[p][0], at[p][1]);
        snprintf(what, sizeof what, "quantize %s %g at %s", tu_format(f).label, (double)bad[b], where);
        expect_bad_data(qgemv_quantize(fmt, N, K, g, w, data, scales), where, NULL, what);
        EXPECT(all_bytes(data, sizeof data, POISON) && all_bytes(scales, sizeof scales, POISON), "%s wrote output",
               what);
      }
    }
  }
}
END_TEST

/*
 * Q2_0 stores max|w| of a block as an fp16 scale. A finite weight whose
 * block maximum rounds past fp16's largest value (65504; anything from
 * 65520 up) would be stored as an infinite scale that upload refuses, so
 * quantize refuses it (BAD_DATA naming its row and column, nothing
 * written); anything below must quantize to a weight that uploads.
 */
START_TEST(quantize_q2_beyond_fp16) {
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  const float big[] = {65504.0f, 65519.0f, -65519.99f, 65520.0f, -65520.0f, 1.0e5f, -7.0e4f, FLT_MAX};
  for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
    float w[2 * 128];
    for (int j = 0; j < 2 * 128; j++) w[j] = (float)(j % 5) - 2.0f;
    w[128 + 77] = big[i]; /* row 1 column 77 */
    unsigned char data[2 * 34];
    memset(data, POISON, sizeof data);
    qgemv_status s = qgemv_quantize(QGEMV_Q2_0, 2, 128, 128, w, data, NULL);
    char what[64];
    snprintf(what, sizeof what, "Q2_0 quantize of %.9g", (double)big[i]);
    if (fabsf(big[i]) >= 65520.0f) {
      expect_bad_data(s, "row 1 column 77", NULL, what);
      EXPECT(all_bytes(data, sizeof data, POISON), "%s: refused but wrote data", what);
      continue;
    }
    EXPECT(s == QGEMV_OK, "%s: %s (%s)", what, qgemv_status_str(s), qgemv_last_error());
    qgemv_weight_desc d = {.format = QGEMV_Q2_0, .n = 2, .k = 128, .group = 128, .data = data, .scales = NULL};
    qgemv_weight *wt;
    s = qgemv_weight_upload(ctx, &d, &wt);
    if (s != QGEMV_OK) {
      char why[512];
      snprintf(why, sizeof why, "%s (%s)", qgemv_status_str(s), qgemv_last_error());
      qgemv_close(ctx); /* before failing: under CK_NOFORK the failure would leak it */
      ck_abort_msg("%s was accepted (fp16 scale 0x%02x%02x) but qgemv_weight_upload refuses it: %s", what, data[35],
                   data[34], why);
    }
    qgemv_weight_free(wt);
  }
  qgemv_close(ctx);
}
END_TEST

/* ---- activations -------------------------------------------------------- */

enum { AN = 16, AK = 256, AM = 5 };

/* Rows of x: NaN in one place, +inf, -inf, both infinities, and clean. */
static void poisoned_x(rng *r, float *x) {
  fill_random(r, DIST_NORMAL, x, AM * AK);
  x[0 * AK + 17] = NAN;
  x[1 * AK + 100] = INFINITY;
  x[2 * AK + 3] = -INFINITY;
  x[3 * AK + 5] = INFINITY;
  x[3 * AK + 250] = -INFINITY;
}

/* y against the oracle element by element: NaN where it has NaN, the same
 * infinity, else within the contract. */
static void compare_ieee(const qgemv_weight_desc *wd, qgemv_dtype xt, const void *x, qgemv_dtype gt,
                         const void *gamma, qgemv_dtype yt, const void *y, const char *what) {
  double ref[AM * AN], bound[AM * AN];
  EXPECT_OK(qgemv_reference_matvec(wd, AM, xt, x, gt, gamma, 1e-5f, ref, bound));
  for (int i = 0; i < AM * AN; i++) {
    double v = tu_elem(yt, y, (size_t)i);
    if (isnan(ref[i])) {
      EXPECT(isnan(v), "%s: y[%d][%d] = %g where the oracle has NaN", what, i / AN, i % AN, v);
    } else if (isinf(ref[i])) {
      EXPECT(v == ref[i], "%s: y[%d][%d] = %g where the oracle has %g", what, i / AN, i % AN, v, ref[i]);
    } else {
      double allowed = 1e-3 * bound[i] + (yt == QGEMV_BF16 ? ldexp(fabs(ref[i]), -8) : 0.0);
      EXPECT(fabs(v - ref[i]) <= allowed, "%s: y[%d][%d] = %.9g, oracle %.9g, allowed +-%.3g", what, i / AN,
             i % AN, v, ref[i], allowed);
    }
  }
}

/* One level, weight, dtype mix and norm: the poisoned batch, then its
 * clean last row alone, which must match bit for bit. */
static void run_case(qgemv_ctx *ctx, const tu_weight *hw, qgemv_dtype xt, qgemv_dtype yt, int norm_kind,
                     const float *xf, const float *gf, const char *what) {
  void *x = tu_convert(xf, AM * AK, xt), *gamma = NULL;
  qgemv_dtype gt = norm_kind == 2 ? QGEMV_BF16 : QGEMV_F32;
  qgemv_weight *w;
  qgemv_tensor *xtn, *ytn, *x1, *y1, *gtn = NULL;
  EXPECT_OK(qgemv_weight_upload(ctx, &hw->desc, &w));
  EXPECT_OK(qgemv_tensor_new(ctx, xt, AM, AK, &xtn));
  EXPECT_OK(qgemv_tensor_write(xtn, x, AM * AK * tu_dtype_size(xt)));
  tu_guarded ym = tu_guarded_new(AM * AN * tu_dtype_size(yt));
  EXPECT_OK(qgemv_tensor_wrap(ctx, yt, AM, AN, ym.mem, &ytn));
  qgemv_rmsnorm norm = {.eps = 1e-5f};
  if (norm_kind) {
    gamma = tu_convert(gf, AK, gt);
    EXPECT_OK(qgemv_tensor_new(ctx, gt, 1, AK, &gtn));
    EXPECT_OK(qgemv_tensor_write(gtn, gamma, AK * tu_dtype_size(gt)));
    norm.gamma = gtn;
  }
  count_case();
  EXPECT_OK(qgemv_matvec(ctx, w, xtn, ytn, norm_kind ? &norm : NULL));
  EXPECT_OK(qgemv_sync(ctx));
  EXPECT(tu_guard_intact(&ym), "%s: the guard after y was overwritten", what);
  compare_ieee(&hw->desc, xt, x, gt, gamma, yt, ym.mem, what);

  size_t xe = tu_dtype_size(xt), ye = tu_dtype_size(yt);
  unsigned char y_alone[AN * 4];
  EXPECT_OK(qgemv_tensor_new(ctx, xt, 1, AK, &x1));
  EXPECT_OK(qgemv_tensor_write(x1, (char *)x + (AM - 1) * AK * xe, AK * xe));
  EXPECT_OK(qgemv_tensor_new(ctx, yt, 1, AN, &y1));
  EXPECT_OK(qgemv_matvec(ctx, w, x1, y1, norm_kind ? &norm : NULL));
  EXPECT_OK(qgemv_tensor_read(y1, y_alone, AN * ye));
  EXPECT(memcmp(y_alone, ym.mem + (AM - 1) * AN * ye, AN * ye) == 0,
         "%s: the clean row next to NaN/inf rows differs from computing it alone", what);
  qgemv_weight_free(w);
  qgemv_tensor_free(xtn);
  qgemv_tensor_free(ytn);
  qgemv_tensor_free(x1);
  qgemv_tensor_free(y1);
  qgemv_tensor_free(gtn);
  tu_guarded_free(&ym);
  free(x);
  free(gamma);
}

/* Loop index: every level a user may name (those not built or not
 * supported here are skipped), then the default choice. */
static const char *level_of(int i) {
  qgemv_cpu_level_info l;
  return qgemv_cpu_level_get(i, &l) == QGEMV_OK ? l.name : NULL;
}

START_TEST(nonfinite_activations) {
  const char *level = level_of(_i);
  if (level)
    setenv("QGEMV_CPU_ISA", level, 1);
  else
    unsetenv("QGEMV_CPU_ISA");
  qgemv_ctx *ctx;
  qgemv_status st = qgemv_open("cpu", &ctx);
  if (level && st == QGEMV_ERR_UNSUPPORTED) {
    unsetenv("QGEMV_CPU_ISA");
    return; /* not in this build, or not on this CPU */
  }
  EXPECT_OK(st);
  qgemv_device_info info;
  EXPECT_OK(qgemv_ctx_info(ctx, &info));
  rng r = {.s = 74};
  float xf[AM * AK], gf[AK];
  poisoned_x(&r, xf);
  fill_random(&r, DIST_NORMAL, gf, AK);
  for (int f = 0; f < qgemv_format_count(); f++) {
    const qgemv_format_info fi = tu_format(f);
    tu_weight hw;
    tu_weight_make(&r, DIST_NORMAL, fi.format, fi.group, AN, AK, &hw);
    for (int xt = 0; xt < 2; xt++)
      for (int yt = 0; yt < 2; yt++)
        for (int nk = 0; nk < 3; nk++) {
          char what[128];
          snprintf(what, sizeof what, "level %s, %s, x %s, y %s, norm %s", info.isa, fi.label,
                   xt ? "bf16" : "f32", yt ? "bf16" : "f32", nk == 0 ? "none" : nk == 1 ? "f32 gamma" : "bf16 gamma");
          run_case(ctx, &hw, (qgemv_dtype)xt, (qgemv_dtype)yt, nk, xf, gf, what);
        }
    tu_weight_free(&hw);
  }
  /* a NaN and an infinity in gamma reach only the rows' products with them */
  gf[9] = NAN;
  gf[200] = INFINITY;
  tu_weight hw;
  tu_weight_make(&r, DIST_HEAVY, QGEMV_NF4, 64, AN, AK, &hw);
  run_case(ctx, &hw, QGEMV_F32, QGEMV_F32, 1, xf, gf, "NaN and inf in gamma");
  tu_weight_free(&hw);
  qgemv_close(ctx);
  unsetenv("QGEMV_CPU_ISA");
}
END_TEST

int main(void) {
  cases = mmap(NULL, sizeof *cases, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (cases == MAP_FAILED) return 99;
  Suite *s = suite_create("hardening_nonfinite");
  TCase *sc = tcase_create("scales");
  tcase_add_test(sc, nf4_nonfinite_scales);
  tcase_add_test(sc, q2_nonfinite_scales);
  tcase_add_test(sc, quantize_nonfinite_weights);
  tcase_add_test(sc, quantize_q2_beyond_fp16);
  suite_add_tcase(s, sc);
  TCase *act = tcase_create("activations");
  tcase_set_timeout(act, 60);
  tcase_add_loop_test(act, nonfinite_activations, 0, qgemv_cpu_level_count() + 1);
  suite_add_tcase(s, act);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  printf("hardening non-finite: %lu bad inputs tried\n", *cases);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
