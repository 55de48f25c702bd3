/*
 * The oracle and the CPU backend against it (DESIGN.md s.5).
 *
 * 1. qgemv_reference_matvec against a dequantize-then-dense GEMV written
 *    here from the format text, RMSNorm in double here.
 * 2. The CPU backend (best level, and QGEMV_CPU_ISA=ref) through
 *    qgemv_matvec meets the accuracy contract on poisoned, guarded outputs.
 * 3. Fused RMSNorm agrees with normalize-here-then-plain-matvec.
 * 4. Outputs made by the library, and tensors wrapped at element-aligned
 *    (not vector-aligned) addresses, are right and fully written too.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "testutil.h"

/* ---- an independent dense oracle ---------------------------------------- */

/* NormalFloat values as DESIGN.md s.4 prints them. */
static const float LUT[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f, -0.28444138169288635f,
    -0.18477343022823334f, -0.09105003625154495f, 0.0f, 0.07958029955625534f, 0.16093020141124725f,
    0.24611230194568634f, 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
    0.7229568362236023f, 1.0f,
};

/* IEEE binary16 value of a finite pattern. */
static double f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double s = (h & 0x8000u) ? -1.0 : 1.0;
  return e == 0 ? s * ldexp(m, -24) : s * ldexp(1024 + m, e - 25);
}

/* Row r of W, decoded from the bytes as s.4 lays them out, in double. */
static void decode_row(const qgemv_weight_desc *d, int64_t r, double *out) {
  const uint8_t *data = d->data;
  if (d->format == QGEMV_NF4) {
    for (int64_t c = 0; c < d->k; c++) {
      uint8_t byte = data[r * d->k / 2 + c / 2];
      int code = c % 2 ? byte >> 4 : byte & 0xf;
      out[c] = (double)LUT[code] * (double)d->scales[r * (d->k / 64) + c / 64];
    }
    return;
  }
  int64_t g = d->group, per_row = d->k / g;
  for (int64_t c = 0; c < d->k; c++) {
    const uint8_t *blk = data + (size_t)(r * per_row + c / g) * (size_t)(2 + g / 4);
    int64_t j = c % g;
    int code = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
    out[c] = (code - 1) * f16_value((uint16_t)(blk[0] | blk[1] << 8));
  }
}

static double elem(qgemv_dtype t, const void *p, size_t i) {
  if (t == QGEMV_F32) return ((const float *)p)[i];
  uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* xn[m, k] in double: x, or x * 1/sqrt(mean(x^2) + eps) * gamma per row. */
static void normalize(int64_t m, int64_t k, qgemv_dtype xt, const void *x, qgemv_dtype gt, const void *gamma,
                      float eps, double *xn) {
  for (int64_t r = 0; r < m; r++) {
    double ss = 0.0;
    for (int64_t j = 0; j < k; j++) ss += elem(xt, x, (size_t)(r * k + j)) * elem(xt, x, (size_t)(r * k + j));
    double inv = gamma ? 1.0 / sqrt(ss / (double)k + (double)eps) : 1.0;
    for (int64_t j = 0; j < k; j++)
      xn[r * k + j] = elem(xt, x, (size_t)(r * k + j)) * (gamma ? inv * elem(gt, gamma, (size_t)j) : 1.0);
  }
}

/* y[m, n] and the contract's R[m, n] by the definition. */
static void dense_oracle(const qgemv_weight_desc *d, int64_t m, qgemv_dtype xt, const void *x, qgemv_dtype gt,
                         const void *gamma, float eps, double *y, double *R) {
  double *xn = malloc((size_t)(m * d->k) * sizeof(double)), *wr = malloc((size_t)d->k * sizeof(double));
  ck_assert(xn && wr);
  normalize(m, d->k, xt, x, gt, gamma, eps, xn);
  for (int64_t i = 0; i < d->n; i++) {
    decode_row(d, i, wr);
    for (int64_t r = 0; r < m; r++) {
      double acc = 0.0, sq = 0.0;
      for (int64_t j = 0; j < d->k; j++) {
        double p = wr[j] * xn[r * d->k + j];
        acc += p;
        sq += p * p;
      }
      y[r * d->n + i] = acc;
      R[r * d->n + i] = sqrt(sq);
    }
  }
  free(xn);
  free(wr);
}

/* ---- cases -------------------------------------------------------------- */

typedef struct shape { int64_t n, k; } shape;
/* The last is the longest k a backend must handle (DESIGN.md s.6). */
static const shape SHAPES[] = {{1, 128}, {7, 128}, {33, 256}, {65, 1152}, {300, 4224}, {3, 65536}};
enum { NSHAPES = sizeof SHAPES / sizeof SHAPES[0] };

/* Quick mode leaves out the two largest shapes. */
static bool shape_skipped(int s) { return tu_quick() && SHAPES[s].n * SHAPES[s].k > 100000; }

/* The long-k shape is costly to generate and check: a subset of cases. */
static bool big_k_skip(int s, int xt, int yt, int norm, int64_t m) {
  return SHAPES[s].k > 10000 && (m > 1 || norm == 1 || xt != yt);
}


/* Norm variants: 0 none, 1 f32 gamma, 2 bf16 gamma. The weight is shared
 * by many cases (quantizing it is the costly part), the rest is per case. */
typedef struct host_inputs {
  const qgemv_weight_desc *wd;
  void *x, *gamma;
  qgemv_dtype xt, gt;
  float eps;
  int64_t m;
} host_inputs;

static void make_weight(rng *r, int f, shape sh, int variant, tu_weight *w) {
  tu_weight_make(r, (dist_kind)(variant % DIST_COUNT), tu_format(f).format, tu_format(f).group, sh.n,
                 tu_whole_blocks(f, sh.k), w);
}

/* Random activations and gamma; eps is large against tiny activations now
 * and then so that it visibly matters. */
static void make_inputs(rng *r, const tu_weight *w, int64_t m, qgemv_dtype xt, int norm, int variant,
                        host_inputs *h) {
  int64_t k = w->desc.k;
  dist_kind xd = (dist_kind)((variant / 2 + 1) % DIST_COUNT);
  size_t xc = (size_t)(m * k);
  float *xf = malloc(xc * sizeof(float)), *gf = malloc((size_t)k * sizeof(float));
  ck_assert(xf && gf);
  fill_random(r, xd, xf, xc);
  fill_random(r, DIST_NORMAL, gf, (size_t)k);
  h->wd = &w->desc;
  h->m = m;
  h->xt = xt;
  h->gt = norm == 2 ? QGEMV_BF16 : QGEMV_F32;
  h->x = tu_convert(xf, xc, xt);
  h->gamma = norm ? tu_convert(gf, (size_t)k, h->gt) : NULL;
  h->eps = xd == DIST_TINY && variant % 3 == 0 ? 1e-6f : 1e-5f;
  free(xf);
  free(gf);
}

static void free_inputs(host_inputs *h) {
  free(h->x);
  free(h->gamma);
}

/* ---- 1. the oracle against the definition ------------------------------- */

/* The library's oracle equals the definition for one input set. */
static void compare_with_definition(const host_inputs *h, int f, int norm) {
  size_t yc = (size_t)(h->m * h->wd->n);
  double *y = malloc(yc * sizeof(double)), *bound = malloc(yc * sizeof(double));
  double *yo = malloc(yc * sizeof(double)), *R = malloc(yc * sizeof(double));
  ck_assert(y && bound && yo && R);
  EXPECT_OK(qgemv_reference_matvec(h->wd, h->m, h->xt, h->x, h->gt, h->gamma, h->eps, y, bound));
  dense_oracle(h->wd, h->m, h->xt, h->x, h->gt, h->gamma, h->eps, yo, R);
  for (size_t i = 0; i < yc; i++) {
    /* both are double sums of the same exact products: they may differ
     * only by double rounding, far below the contract */
    EXPECT(fabs(y[i] - yo[i]) <= 1e-9 * R[i] && fabs(bound[i] - R[i]) <= 1e-9 * R[i],
           "n=%lld k=%lld format %d x %d norm %d elem %zu: oracle %.17g (R %.17g), definition %.17g (R %.17g)",
           (long long)h->wd->n, (long long)h->wd->k, f, h->xt, norm, i, y[i], bound[i], yo[i], R[i]);
    EXPECT(isfinite(y[i]) && R[i] > 0.0, "elem %zu: y %g R %g", i, y[i], R[i]);
  }
  free(y);
  free(bound);
  free(yo);
  free(R);
}

START_TEST(reference_matches_definition) {
  rng r = {.s = 0x0ac1e};
  int variant = 0;
  for (int s = 0; s < NSHAPES; s++)
    for (int f = 0; f < qgemv_format_count() && !shape_skipped(s); f++) {
      tu_weight w;
      make_weight(&r, f, SHAPES[s], s + f, &w);
      /* c = xt + 2 * norm: all six on small shapes, three on large ones */
      bool large = SHAPES[s].n * SHAPES[s].k > 100000;
      for (int c = 0; c < 6; c++, variant++) {
        if (large && c != 0 && c != 3 && c != 5) continue;
        host_inputs h;
        make_inputs(&r, &w, 1 + variant % 3, (qgemv_dtype)(c % 2), c / 2, variant, &h);
        compare_with_definition(&h, f, c / 2);
        free_inputs(&h);
      }
      tu_weight_free(&w);
    }
}
END_TEST

/* Integer-valued weights and activations: the sum is exact. NF4 codes 0
 * and 15 with scale 2 are -2 and +2; Q2_0 codes with d = 1 are -1..2. */
START_TEST(reference_exact_small_case) {
  enum { K = 128 };
  uint8_t nf4[K / 2], q2[2 * 34];
  float scales[2] = {2.0f, 2.0f}, x[K];
  double want_nf4 = 0.0, want_q2 = 0.0;
  memset(q2, 0, sizeof q2);
  for (int j = 0; j < K; j++) {
    x[j] = (float)(j % 7 - 3);
    int nf4_code = (j * 5) % 3 == 0 ? 0 : 15;
    nf4[j / 2] = (uint8_t)(j % 2 ? (nf4[j / 2] & 0x0f) | nf4_code << 4 : nf4_code);
    want_nf4 += (nf4_code ? 2.0 : -2.0) * x[j];
    int q2_code = (j * 3) % 4; /* 0..3, including +2 */
    q2[2 + j / 4] = (uint8_t)(q2[2 + j / 4] | q2_code << (2 * (j % 4)));
    want_q2 += (q2_code - 1) * x[j];
  }
  q2[0] = 0x00;
  q2[1] = 0x3c; /* d = 1 */
  qgemv_weight_desc dn = {.format = QGEMV_NF4, .n = 1, .k = K, .group = 64, .data = nf4, .scales = scales};
  qgemv_weight_desc dq = {.format = QGEMV_Q2_0, .n = 1, .k = K, .group = 128, .data = q2, .scales = NULL};
  double y, bound;
  EXPECT_OK(qgemv_reference_matvec(&dn, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, &y, &bound));
  ck_assert_msg(y == want_nf4, "NF4: %.17g, exact %.17g", y, want_nf4);
  EXPECT_OK(qgemv_reference_matvec(&dq, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, &y, &bound));
  ck_assert_msg(y == want_q2, "Q2_0: %.17g, exact %.17g", y, want_q2);
}
END_TEST

/* ---- 2. the CPU backend meets the contract ------------------------------- */

/* QGEMV_CPU_ISA for loop index: even = best level (unset), odd = ref. */
static qgemv_ctx *open_cpu_level(int ref) {
  if (ref)
    setenv("QGEMV_CPU_ISA", "ref", 1);
  else
    unsetenv("QGEMV_CPU_ISA");
  qgemv_ctx *ctx = NULL;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  qgemv_device_info info;
  EXPECT_OK(qgemv_ctx_info(ctx, &info));
  if (ref) ck_assert_str_eq(info.isa, "ref");
  return ctx;
}

/* Tensors for one matvec; y wraps a poisoned buffer with a guard after it. */
typedef struct dev_io {
  qgemv_weight *w;
  qgemv_tensor *x, *y, *g;
  tu_guarded ymem;
} dev_io;

static void upload(qgemv_ctx *ctx, const host_inputs *h, qgemv_dtype yt, dev_io *io) {
  int64_t n = h->wd->n, k = h->wd->k;
  memset(io, 0, sizeof *io);
  EXPECT_OK(qgemv_weight_upload(ctx, h->wd, &io->w));
  EXPECT_OK(qgemv_tensor_new(ctx, h->xt, h->m, k, &io->x));
  EXPECT_OK(qgemv_tensor_write(io->x, h->x, (size_t)(h->m * k) * tu_dtype_size(h->xt)));
  if (h->gamma) {
    EXPECT_OK(qgemv_tensor_new(ctx, h->gt, 1, k, &io->g));
    EXPECT_OK(qgemv_tensor_write(io->g, h->gamma, (size_t)k * tu_dtype_size(h->gt)));
  }
  io->ymem = tu_guarded_new((size_t)(h->m * n) * tu_dtype_size(yt));
  EXPECT_OK(qgemv_tensor_wrap(ctx, yt, h->m, n, io->ymem.mem, &io->y));
}

static void release(dev_io *io) {
  qgemv_weight_free(io->w);
  qgemv_tensor_free(io->x);
  qgemv_tensor_free(io->y);
  qgemv_tensor_free(io->g);
  tu_guarded_free(&io->ymem);
}

/* One matvec into the poisoned y; returns the contract ratio. */
static double run_checked(qgemv_ctx *ctx, const host_inputs *h, qgemv_dtype yt, const char *what) {
  dev_io io;
  upload(ctx, h, yt, &io);
  qgemv_rmsnorm norm = {.gamma = io.g, .eps = h->eps};
  EXPECT_OK(qgemv_matvec(ctx, io.w, io.x, io.y, h->gamma ? &norm : NULL));
  EXPECT_OK(qgemv_sync(ctx));
  EXPECT(tu_guard_intact(&io.ymem), "%s: the guard after y was overwritten", what);
  char where[192];
  double ratio = tu_check_contract(h->wd, h->m, h->xt, h->x, h->gt, h->gamma, h->eps, yt, io.ymem.mem, where,
                                   sizeof where);
  EXPECT(ratio <= 1.0, "%s: error %.3g x the contract at %s", what, ratio, where);
  /* the input is left as it was */
  size_t xbytes = (size_t)(h->m * h->wd->k) * tu_dtype_size(h->xt);
  void *xback = malloc(xbytes);
  ck_assert_ptr_nonnull(xback);
  EXPECT_OK(qgemv_tensor_read(io.x, xback, xbytes));
  EXPECT(memcmp(xback, h->x, xbytes) == 0, "%s: matvec changed x", what);
  free(xback);
  release(&io);
  return ratio;
}

/* Loop index: level (best / ref) x format. Every shape, x and y dtype,
 * norm variant; m 1 or 3 in turn. */
START_TEST(cpu_meets_contract) {
  int ref = _i % 2, f = _i / 2;
  qgemv_ctx *ctx = open_cpu_level(ref);
  rng r = {.s = 0xc0de + (uint64_t)_i};
  int variant = 0;
  for (int s = 0; s < NSHAPES; s++) {
    if (shape_skipped(s)) continue;
    tu_weight w;
    make_weight(&r, f, SHAPES[s], s + _i, &w);
    for (int xt = 0; xt < 2; xt++)
      for (int yt = 0; yt < 2; yt++)
        for (int norm = 0; norm < 3; norm++, variant++) {
          int64_t m = 1 + 2 * ((xt + yt + norm + s) % 2); /* 1 or 3, alternating */
          if (big_k_skip(s, xt, yt, norm, m)) continue;
          host_inputs h;
          make_inputs(&r, &w, m, (qgemv_dtype)xt, norm, variant, &h);
          char what[160];
          snprintf(what, sizeof what, "%s level, format %d, n=%lld k=%lld m=%lld, x %d y %d norm %d",
                   ref ? "ref" : "best", f, (long long)SHAPES[s].n, (long long)SHAPES[s].k, (long long)m, xt,
                   yt, norm);
          run_checked(ctx, &h, (qgemv_dtype)yt, what);
          free_inputs(&h);
        }
    tu_weight_free(&w);
  }
  qgemv_close(ctx);
}
END_TEST

/* ---- 3. fused RMSNorm = normalize here, then a plain matvec ------------- */

/* One input set: the fused call and the separate path each meet the
 * contract, and they agree within twice it. */
static void fused_vs_separate(qgemv_ctx *ctx, const host_inputs *h, qgemv_dtype yt, const char *what) {
  int64_t m = h->m, n = h->wd->n, k = h->wd->k;
  size_t yc = (size_t)(m * n), xc = (size_t)(m * k);
  /* the separate path: normalize in double here, round to f32 */
  double *xn = malloc(xc * sizeof(double));
  float *xnf = malloc(xc * sizeof(float));
  ck_assert(xn && xnf);
  normalize(m, k, h->xt, h->x, h->gt, h->gamma, h->eps, xn);
  for (size_t i = 0; i < xc; i++) xnf[i] = (float)xn[i];
  host_inputs plain = *h;
  plain.x = xnf;
  plain.xt = QGEMV_F32;
  plain.gamma = NULL;
  dev_io fused, sep;
  upload(ctx, h, yt, &fused);
  upload(ctx, &plain, yt, &sep);
  qgemv_rmsnorm rn = {.gamma = fused.g, .eps = h->eps};
  EXPECT_OK(qgemv_matvec(ctx, fused.w, fused.x, fused.y, &rn));
  EXPECT_OK(qgemv_matvec(ctx, sep.w, sep.x, sep.y, NULL));
  EXPECT_OK(qgemv_sync(ctx));
  double *yo = malloc(yc * sizeof(double)), *R = malloc(yc * sizeof(double));
  ck_assert(yo && R);
  dense_oracle(h->wd, m, h->xt, h->x, h->gt, h->gamma, h->eps, yo, R);
  for (size_t i = 0; i < yc; i++) {
    double a = tu_elem(yt, fused.ymem.mem, i), b = tu_elem(yt, sep.ymem.mem, i);
    double allowed = 1e-3 * R[i] + (yt == QGEMV_BF16 ? ldexp(fabs(yo[i]), -8) : 0.0);
    EXPECT(fabs(a - b) <= 2.0 * allowed && fabs(a - yo[i]) <= allowed && fabs(b - yo[i]) <= allowed,
           "%s elem %zu: fused %.9g, separate %.9g, oracle %.9g, allowed %.3g", what, i, a, b, yo[i], allowed);
  }
  EXPECT(tu_guard_intact(&fused.ymem) && tu_guard_intact(&sep.ymem), "%s: guard overwritten", what);
  free(yo);
  free(R);
  free(xn);
  free(xnf);
  release(&fused);
  release(&sep);
}

START_TEST(fused_rmsnorm_matches_separate) {
  int ref = _i % 2, f = _i / 2;
  qgemv_ctx *ctx = open_cpu_level(ref);
  rng r = {.s = 0xf05e + (uint64_t)_i};
  int variant = 0;
  for (int s = 1; s < NSHAPES; s++) {
    if (shape_skipped(s)) continue;
    tu_weight w;
    make_weight(&r, f, SHAPES[s], s + _i, &w);
    for (int xt = 0; xt < 2; xt++)
      for (int yt = 0; yt < 2; yt++, variant++) {
        int norm = 1 + (xt + yt + s) % 2; /* f32 and bf16 gamma in turn */
        int64_t m = 1 + variant % 4;
        if (big_k_skip(s, xt, yt, norm, 1)) continue;
        host_inputs h;
        make_inputs(&r, &w, m, (qgemv_dtype)xt, norm, variant, &h);
        char what[128];
        snprintf(what, sizeof what, "%s level format %d n=%lld k=%lld m=%lld x %d y %d gamma %d",
                 ref ? "ref" : "best", f, (long long)w.desc.n, (long long)w.desc.k, (long long)m, xt, yt, norm);
        fused_vs_separate(ctx, &h, (qgemv_dtype)yt, what);
        free_inputs(&h);
      }
    tu_weight_free(&w);
  }
  qgemv_close(ctx);
}
END_TEST

/* A y tensor made by the library (not wrapped) is fully written too. */
START_TEST(device_tensor_fully_written) {
  qgemv_ctx *ctx = open_cpu_level(_i);
  rng r = {.s = 0xd1ce};
  for (int f = 0; f < qgemv_format_count(); f++)
    for (int yt = 0; yt < 2; yt++) {
      tu_weight hw;
      make_weight(&r, f, SHAPES[3], f + yt, &hw);
      host_inputs h;
      make_inputs(&r, &hw, 5, QGEMV_BF16, 1 + yt, f + yt, &h);
      int64_t n = hw.desc.n, k = hw.desc.k;
      size_t ybytes = (size_t)(5 * n) * tu_dtype_size((qgemv_dtype)yt);
      qgemv_weight *w;
      qgemv_tensor *x, *y, *g;
      EXPECT_OK(qgemv_weight_upload(ctx, &hw.desc, &w));
      EXPECT_OK(qgemv_tensor_new(ctx, h.xt, 5, k, &x));
      EXPECT_OK(qgemv_tensor_write(x, h.x, (size_t)(5 * k) * 2));
      EXPECT_OK(qgemv_tensor_new(ctx, h.gt, 1, k, &g));
      EXPECT_OK(qgemv_tensor_write(g, h.gamma, (size_t)k * tu_dtype_size(h.gt)));
      EXPECT_OK(qgemv_tensor_new(ctx, (qgemv_dtype)yt, 5, n, &y));
      unsigned char *host = malloc(ybytes);
      ck_assert_ptr_nonnull(host);
      memset(host, 0xff, ybytes);
      EXPECT_OK(qgemv_tensor_write(y, host, ybytes));
      qgemv_rmsnorm rn = {.gamma = g, .eps = h.eps};
      EXPECT_OK(qgemv_matvec(ctx, w, x, y, &rn));
      EXPECT_OK(qgemv_sync(ctx));
      EXPECT_OK(qgemv_tensor_read(y, host, ybytes));
      char where[192];
      double ratio = tu_check_contract(&hw.desc, 5, h.xt, h.x, h.gt, h.gamma, h.eps, (qgemv_dtype)yt, host, where,
                                       sizeof where);
      EXPECT(ratio <= 1.0, "format %d y %d: %.3g x the contract at %s", f, yt, ratio, where);
      free(host);
      qgemv_weight_free(w);
      qgemv_tensor_free(x);
      qgemv_tensor_free(y);
      qgemv_tensor_free(g);
      free_inputs(&h);
      tu_weight_free(&hw);
    }
  qgemv_close(ctx);
}
END_TEST

/* Allocates `bytes` plus a guard at one element past a 64-byte boundary:
 * aligned to the element, to no vector width. *base is what to free. */
static unsigned char *misaligned(size_t bytes, size_t elem, void **base) {
  unsigned char *raw = aligned_alloc(64, 64 * ((bytes + elem + 64 + 63) / 64));
  ck_assert_ptr_nonnull(raw);
  *base = raw;
  memset(raw + elem + bytes, 0x3c, 64);
  return raw + elem;
}

static bool guard_ok(const unsigned char *p, size_t bytes) {
  for (size_t i = 0; i < 64; i++)
    if (p[bytes + i] != 0x3c) return false;
  return true;
}

/* Tensors wrapped at addresses aligned to their element but not to any
 * vector width (CPU: "host memory aligned to the element size"). */
START_TEST(element_aligned_wrapped_tensors) {
  qgemv_ctx *ctx = open_cpu_level(0);
  rng r = {.s = 0xa119};
  for (int f = 0; f < qgemv_format_count(); f++)
    for (int xt = 0; xt < 2; xt++)
      for (int yt = 0; yt < 2; yt++) {
        tu_weight w;
        make_weight(&r, f, SHAPES[3], f + xt, &w);
        host_inputs h;
        make_inputs(&r, &w, 3, (qgemv_dtype)xt, 2 - yt, f + yt, &h);
        int64_t n = w.desc.n, k = w.desc.k;
        size_t xb = (size_t)(3 * k) * tu_dtype_size(h.xt), gb = (size_t)k * tu_dtype_size(h.gt);
        size_t yb = (size_t)(3 * n) * tu_dtype_size((qgemv_dtype)yt);
        void *xbase, *gbase, *ybase;
        unsigned char *xp = misaligned(xb, tu_dtype_size(h.xt), &xbase);
        unsigned char *gp = misaligned(gb, tu_dtype_size(h.gt), &gbase);
        unsigned char *yp = misaligned(yb, tu_dtype_size((qgemv_dtype)yt), &ybase);
        memcpy(xp, h.x, xb);
        memcpy(gp, h.gamma, gb);
        memset(yp, 0xff, yb);
        qgemv_weight *wt;
        qgemv_tensor *x, *g, *y;
        EXPECT_OK(qgemv_weight_upload(ctx, &w.desc, &wt));
        EXPECT_OK(qgemv_tensor_wrap(ctx, h.xt, 3, k, xp, &x));
        EXPECT_OK(qgemv_tensor_wrap(ctx, h.gt, 1, k, gp, &g));
        EXPECT_OK(qgemv_tensor_wrap(ctx, (qgemv_dtype)yt, 3, n, yp, &y));
        qgemv_rmsnorm rn = {.gamma = g, .eps = h.eps};
        EXPECT_OK(qgemv_matvec(ctx, wt, x, y, &rn));
        EXPECT_OK(qgemv_sync(ctx));
        char where[192];
        double ratio = tu_check_contract(&w.desc, 3, h.xt, h.x, h.gt, h.gamma, h.eps, (qgemv_dtype)yt, yp, where,
                                         sizeof where);
        EXPECT(ratio <= 1.0, "format %d x %d y %d: %.3g x the contract at %s", f, xt, yt, ratio, where);
        EXPECT(guard_ok(yp, yb), "format %d x %d y %d: bytes after y were written", f, xt, yt);
        qgemv_weight_free(wt);
        qgemv_tensor_free(x);
        qgemv_tensor_free(g);
        qgemv_tensor_free(y);
        free(xbase);
        free(gbase);
        free(ybase);
        free_inputs(&h);
        tu_weight_free(&w);
      }
  qgemv_close(ctx);
}
END_TEST

static Suite *oracle_suite(void) {
  Suite *s = suite_create("oracle");
  TCase *ref = tcase_create("reference");
  tcase_set_timeout(ref, 60);
  tcase_add_test(ref, reference_matches_definition);
  tcase_add_test(ref, reference_exact_small_case);
  suite_add_tcase(s, ref);
  TCase *cpu = tcase_create("cpu");
  tcase_set_timeout(cpu, 120);
  tcase_add_loop_test(cpu, cpu_meets_contract, 0, 2 * qgemv_format_count());
  tcase_add_loop_test(cpu, fused_rmsnorm_matches_separate, 0, 2 * qgemv_format_count());
  tcase_add_loop_test(cpu, device_tensor_fully_written, 0, 2);
  tcase_add_test(cpu, element_aligned_wrapped_tensors);
  suite_add_tcase(s, cpu);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(oracle_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
