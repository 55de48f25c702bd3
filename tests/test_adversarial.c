/*
 * Inputs made to break integer activations (DESIGN.md section 5, "the
 * integer path"), on every CPU level this machine runs, through the public
 * API:
 * - one large activation per block meeting a zero weight while the small
 *   ones meet large weights: a per-block scale set by the large one leaves
 *   the small ones a few bits, and R_i is small;
 * - activations just under half a step of a 16-bit grid with every weight
 *   +1: the rounding errors of a single 16-bit term all point one way and
 *   add up linearly while R_i grows with sqrt(k);
 * - a range of 1e60 inside blocks, a tiny activation alone meeting the
 *   only nonzero weight, subnormal activations, LLM-like outlier channels,
 *   and outliers in every block (more blocks needing a second term than
 *   the quantizer has room for, so some go to its exact path), and blocks
 *   of x at three scales 2^7 apart, 2^25 under their largest, so that each
 *   needs three further terms of one digit (the kernels' one-plane pass);
 * - zero weights everywhere: R_i = 0, so y must be exactly 0;
 * - one weight value everywhere (NF4 -0.525 but the block's -1; Q2_0 +2)
 *   and every x -1: any systematic rounding of a weight value (an NF4 table
 *   held in fp16 is 3e-4 off for that code) adds up linearly in k.
 * Every output must meet the contract, batched rows must equal m = 1 bit
 * for bit, and so must 1 and 2 threads. QGEMV_TEST_LEVELS and
 * QGEMV_TEST_REQUIRE work as in test_cpu_levels (scripts/arm-check.sh runs
 * this suite under qemu too). As a control, a model of a single
 * int16 term with a per-block scale (the design the issue warned about) is
 * computed here and must break the contract on the cases built against it:
 * the inputs are hard enough to catch that design.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "testutil.h"

enum { N = 37, M = 3 }; /* two groups of 16 rows and a narrower one */

typedef enum {
  BIG_MEETS_ZERO,
  ALIGNED_ROUNDING,
  EXTREME_RANGE,
  TINY_ALONE,
  SUBNORMAL,
  OUTLIER_CHANNELS,
  OUTLIERS_EVERYWHERE,
  ZERO_WEIGHTS,
  SAME_CODE,
  NEAR_FLT_MAX,
  STAIRCASE,
  CASES
} case_kind;

static const char *const case_names[CASES] = {"one large x per block on a zero weight",
                                             "x just under half an int16 step, weights +1",
                                             "1e30 on zero weights, 1e-30 elsewhere",
                                             "a tiny x alone on the only nonzero weight",
                                             "subnormal, zero and normal x mixed",
                                             "4 outlier channels at 2000x",
                                             "an outlier of 1e4x every 50 elements",
                                             "zero weights everywhere",
                                             "one weight value everywhere, x = -1",
                                             "+-FLT_MAX on zero weights (a term's step rounds up to 2^128)",
                                             "blocks of x at 1, 2^-25, 2^-32, 2^-39, the last on the nonzero weights"};

/* Whether the single-int16 model must fail on the case (the control). */
static const bool int16_breaks[CASES] = {true, true, true, true, false, false, false, false, false, false, true};

static int64_t case_k(case_kind c) { return c == ALIGNED_ROUNDING ? 8192 : 4096; }

/* Weight codes: "zero", "+1" and a spread of nonzero values, per format.
 * NF4 code 7 is 0 and 15 is +1; Q2_0 code c is c - 1. */
static int zero_code(qgemv_format f) { return f == QGEMV_NF4 ? 7 : 1; }
static int one_code(qgemv_format f) { return f == QGEMV_NF4 ? 15 : 2; }
static int some_code(qgemv_format f, rng *r) {
  if (f == QGEMV_NF4) {
    int c = (int)(rng_next(r) % 15);
    return c >= 7 ? c + 1 : c; /* any but 7 */
  }
  static const int nonzero[3] = {0, 2, 3};
  return nonzero[rng_next(r) % 3];
}

typedef struct weight {
  qgemv_weight_desc desc;
  uint8_t *data;
  float *scales;
} weight;

static void set_code(weight *w, int64_t r, int64_t j, int code) {
  const qgemv_weight_desc *d = &w->desc;
  if (d->format == QGEMV_NF4) {
    uint8_t *p = w->data + (size_t)r * (size_t)(d->k / 2) + (size_t)(j / 2);
    *p = (uint8_t)(j % 2 ? (*p & 0x0f) | (code << 4) : (*p & 0xf0) | code);
    return;
  }
  const int g = d->group;
  uint8_t *b = w->data + ((size_t)r * (size_t)(d->k / g) + (size_t)(j / g)) * (2u + (size_t)g / 4u);
  int e = (int)(j % g);
  b[2 + e / 4] = (uint8_t)((b[2 + e / 4] & ~(3 << (2 * (e % 4)))) | (code << (2 * (e % 4))));
}

/* Every block's scale: 1, or a spread when the case wants it. */
static void set_scales(weight *w, rng *r, bool spread) {
  const qgemv_weight_desc *d = &w->desc;
  const int g = d->format == QGEMV_NF4 ? 64 : d->group;
  for (int64_t row = 0; row < d->n; row++)
    for (int64_t b = 0; b < d->k / g; b++) {
      float s = spread ? (float)(0.5 + rng_uniform(r)) : 1.0f;
      if (d->format == QGEMV_NF4) {
        w->scales[(size_t)row * (size_t)(d->k / 64) + (size_t)b] = s;
      } else {
        uint16_t h = qgemv_f32_to_f16(s);
        memcpy(w->data + ((size_t)row * (size_t)(d->k / g) + (size_t)b) * (2u + (size_t)g / 4u), &h, 2);
      }
    }
}

/* The case's weight (format f, group g) and M rows of x, the adversarial
 * row in the middle and normal rows around it. */
static void make_case(case_kind c, qgemv_format f, int32_t g, rng *r, weight *w, float *x) {
  const int64_t k = case_k(c), bg = f == QGEMV_NF4 ? 64 : g;
  w->desc = (qgemv_weight_desc){.format = f, .n = N, .k = k, .group = g};
  w->data = calloc(qgemv_data_bytes(f, N, k, g), 1);
  w->scales = f == QGEMV_NF4 ? malloc(qgemv_scale_count(f, N, k, g) * sizeof(float)) : NULL;
  ck_assert_ptr_nonnull(w->data);
  w->desc.data = w->data;
  w->desc.scales = w->scales;
  set_scales(w, r, c != ALIGNED_ROUNDING && c != ZERO_WEIGHTS && c != SAME_CODE);
  for (int64_t row = 0; row < N; row++)
    for (int64_t j = 0; j < k; j++) {
      int code;
      switch (c) {
      case ALIGNED_ROUNDING: code = one_code(f); break;
      case ZERO_WEIGHTS: code = zero_code(f); break;
      case BIG_MEETS_ZERO:
      case EXTREME_RANGE:
      case NEAR_FLT_MAX: code = j % bg == 0 ? zero_code(f) : some_code(f, r); break;
      case TINY_ALONE: code = j % bg == 5 ? one_code(f) : zero_code(f); break;
      case STAIRCASE: code = j % 4 == 3 ? some_code(f, r) : zero_code(f); break;
      case SAME_CODE: code = f == QGEMV_NF4 ? (j % bg == 0 ? 0 : 2) : 3; break;
      default: code = some_code(f, r); break;
      }
      set_code(w, row, j, code);
    }
  for (int t = 0; t < M; t++) {
    float *xt = x + (size_t)t * (size_t)k;
    fill_random(r, DIST_NORMAL, xt, (size_t)k);
    if (t != 1) continue; /* the middle row is the adversarial one */
    for (int64_t j = 0; j < k; j++) {
      double v = xt[j];
      switch (c) {
      case BIG_MEETS_ZERO: v = j % bg == 0 ? 1000.0 : 0.01 * v; break;
      case ALIGNED_ROUNDING: /* the block max 1, the rest q + 0.499 steps of 1/32767 */
        v = j % bg == 0 ? 1.0 : (16384.0 + (double)(rng_next(r) % 16000) + 0.499) / 32767.0;
        break;
      case EXTREME_RANGE: v = j % bg == 0 ? 1e30 : 1e-30 * v; break;
      case TINY_ALONE: v = j % bg == 5 ? 1e-7 * (1.0 + 0.1 * v) : v; break;
      case SUBNORMAL: v = j % 3 == 0 ? 1e-40 * v : j % 3 == 1 ? 0.0 : v; break;
      case OUTLIER_CHANNELS: v = (j == 17 || j == 300 || j == 1234 || j == 4000) ? 2000.0 * v : v; break;
      case OUTLIERS_EVERYWHERE: v = j % 50 == 7 ? 1e4 * v : v; break;
      case SAME_CODE: v = -1.0; break;
      case NEAR_FLT_MAX: v = j % bg == 0 ? (j % (2 * bg) ? -FLT_MAX : FLT_MAX) : v; break;
      case STAIRCASE: /* every 8th block 1, 2^-25, 2^-32, 2^-39 by j % 4 (the
                         last on the nonzero weights), 4 significant bits
                         each, so that each scale is one further term's
                         worth; the other blocks at 2^-39, so that R is
                         made of values at 2^-39 */
        if ((j / bg) % 8 == 3) {
          double m = (v < 0 ? -1.0 : 1.0) * (1.0 + (double)(rng_next(r) % 8) / 8.0);
          v = j % 4 == 0 ? 1.0 : ldexp(m, -25 - 7 * (int)(j % 4 - 1));
        } else {
          v = ldexp(v, -39);
        }
        break;
      default: break;
      }
      xt[j] = (float)v;
    }
  }
}

static void free_weight(weight *w) {
  free(w->data);
  free(w->scales);
}

/* The control: y of a single int16 term per block of x (scale max|x| /
 * 32767), products summed exactly; its worst error over the allowed one. */
static double int16_model(const weight *w, const float *x) {
  const qgemv_weight_desc *d = &w->desc;
  const int64_t k = d->k, bg = d->format == QGEMV_NF4 ? 64 : d->group;
  double *wd = malloc((size_t)(N * k) * sizeof(double)), ref[N], bound[N];
  float *wf = malloc((size_t)(N * k) * sizeof(float));
  EXPECT_OK(qgemv_dequantize(d, wf));
  for (int64_t i = 0; i < N * k; i++) wd[i] = wf[i];
  EXPECT_OK(qgemv_reference_matvec(d, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, ref, bound));
  double worst = 0.0;
  for (int64_t row = 0; row < N; row++) {
    double acc = 0.0;
    for (int64_t b = 0; b < k / bg; b++) {
      double mx = 0.0;
      for (int64_t j = b * bg; j < (b + 1) * bg; j++) mx = fmax(mx, fabs(x[j]));
      double s = mx / 32767.0;
      for (int64_t j = b * bg; j < (b + 1) * bg; j++) acc += wd[row * k + j] * (s > 0 ? nearbyint(x[j] / s) * s : 0.0);
    }
    double e = fabs(acc - ref[row]) / (1e-3 * bound[row]);
    if (bound[row] == 0) e = acc == ref[row] ? 0.0 : INFINITY;
    worst = fmax(worst, e);
  }
  free(wd);
  free(wf);
  return worst;
}

/* One level: every case and format, f32 and bf16 y, m = 1 and batched, 1
 * and 2 threads. */
static void run_level(const char *level) {
  for (int c = 0; c < CASES; c++)
    for (int f = 0; f < qgemv_format_count(); f++) {
      qgemv_format_info fi = tu_format(f);
      rng r = {.s = 1000u + 10u * (unsigned)c + (unsigned)f};
      const int64_t k = case_k((case_kind)c);
      weight w;
      float *x = malloc((size_t)(M * k) * sizeof(float));
      make_case((case_kind)c, fi.format, fi.group, &r, &w, x);
      if (level == NULL && int16_breaks[c]) { /* the control, once per case and format */
        double e = int16_model(&w, x + k);
        EXPECT(e > 1.0, "control: a single int16 term meets the contract on \"%s\" (%s, %.2g of the bound): the case "
               "does not test what it claims", case_names[c], fi.label, e);
      }
      unsigned char first[M * N * 4];
      for (int threads = 1; threads <= 2; threads++) {
        char nt[8];
        snprintf(nt, sizeof nt, "%d", threads);
        setenv("QGEMV_NUM_THREADS", nt, 1);
        if (level) setenv("QGEMV_CPU_ISA", level, 1);
        qgemv_ctx *ctx;
        EXPECT_OK(qgemv_open("cpu", &ctx));
        qgemv_device_info info;
        EXPECT_OK(qgemv_ctx_info(ctx, &info));
        qgemv_weight *qw;
        EXPECT_OK(qgemv_weight_upload(ctx, &w.desc, &qw));
        for (int yt = 0; yt < 2; yt++) {
          const size_t ye = yt ? 2 : 4;
          qgemv_tensor *tx, *ty, *t1, *y1;
          tu_guarded ym = tu_guarded_new(M * N * ye);
          EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, M, k, &tx));
          EXPECT_OK(qgemv_tensor_write(tx, x, (size_t)(M * k) * sizeof(float)));
          EXPECT_OK(qgemv_tensor_wrap(ctx, (qgemv_dtype)yt, M, N, ym.mem, &ty));
          EXPECT_OK(qgemv_matvec(ctx, qw, tx, ty, NULL));
          EXPECT_OK(qgemv_sync(ctx));
          EXPECT(tu_guard_intact(&ym), "%s, %s: a write past y", info.isa, case_names[c]);
          char where[256];
          double worst = tu_check_contract(&w.desc, M, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, (qgemv_dtype)yt, ym.mem,
                                           where, sizeof where);
          EXPECT(worst <= 1.0, "level %s, %s, %s, y %s: %.3g of the allowed error at %s", info.isa, case_names[c],
                 fi.label, yt ? "bf16" : "f32", worst, where);
          if (yt == 0 && threads == 1) memcpy(first, ym.mem, M * N * 4);
          if (yt == 0 && threads == 2)
            EXPECT(memcmp(first, ym.mem, M * N * 4) == 0, "level %s, %s, %s: 2 threads differ from 1", info.isa,
                   case_names[c], fi.label);
          for (int t = 0; t < M; t++) { /* each row alone, bit for bit */
            unsigned char alone[N * 4];
            EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, k, &t1));
            EXPECT_OK(qgemv_tensor_write(t1, x + (size_t)t * (size_t)k, (size_t)k * sizeof(float)));
            EXPECT_OK(qgemv_tensor_new(ctx, (qgemv_dtype)yt, 1, N, &y1));
            EXPECT_OK(qgemv_matvec(ctx, qw, t1, y1, NULL));
            EXPECT_OK(qgemv_tensor_read(y1, alone, N * ye));
            EXPECT(memcmp(alone, ym.mem + (size_t)t * N * ye, N * ye) == 0,
                   "level %s, %s, %s: batched row %d differs from computing it alone", info.isa, case_names[c],
                   fi.label, t);
            qgemv_tensor_free(t1);
            qgemv_tensor_free(y1);
          }
          qgemv_tensor_free(tx);
          qgemv_tensor_free(ty);
          tu_guarded_free(&ym);
        }
        qgemv_weight_free(qw);
        qgemv_close(ctx);
      }
      unsetenv("QGEMV_NUM_THREADS");
      unsetenv("QGEMV_CPU_ISA");
      free_weight(&w);
      free(x);
    }
}

/* Level i of the library's list, skipped (with a line) where it does not
 * run; _i == count: the default level, which also runs the control. */
START_TEST(adversarial_inputs) {
  const char *only = getenv("QGEMV_TEST_LEVELS");
  if (_i == qgemv_cpu_level_count()) {
    if (!only || !*only) run_level(NULL);
    return;
  }
  qgemv_cpu_level_info l;
  EXPECT_OK(qgemv_cpu_level_get(_i, &l));
  if (strcmp(l.name, "ref") == 0) return; /* the oracle itself */
  if (only && *only && !tu_env_lists("QGEMV_TEST_LEVELS", l.name)) return;
  EXPECT(l.supported || !tu_env_lists("QGEMV_TEST_REQUIRE", l.name), "level %s is required here", l.name);
  if (!l.supported) {
    printf("level %s does not run here (skipped)\n", l.name);
    return;
  }
  run_level(l.name);
}
END_TEST

int main(void) {
  if (!tu_env_levels_valid()) return EXIT_FAILURE;
  Suite *s = suite_create("adversarial");
  TCase *tc = tcase_create("inputs");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, adversarial_inputs, 0, qgemv_cpu_level_count() + 1);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
