/* The CUDA backend against the oracle, on the GPU (issue 3).
 *
 * Every combination of format (NF4, Q2_0 g64, Q2_0 g128), x and y dtype,
 * RMSNorm (gamma f32 or bf16) on random data of several distributions and
 * awkward shapes (k not a multiple of 256, n not a multiple of 16, m = 1, 7,
 * 8, 9, 33, k = 65536, n = 131072), checked under the accuracy contract with
 * poisoned outputs and a guard region after every output on the device;
 * batched rows bit-identical to m = 1; runs bit-identical; a caller's stream;
 * misaligned activations; NO_MEMORY that leaves the context usable; the
 * kernel lab's contract cases (a large activation on the zero code; rows of
 * one repeated code against all-positive x up to k = 65536, where an NF4
 * table held in one fp16 term fails); chains of matvecs that each read
 * the previous output (programmatic dependent launch), bit-identical to the
 * chain run one call at a time, also captured in a CUDA graph; NaN and
 * infinite activations through every staging path, as IEEE says. The
 * lookup-table form (a weight uploaded for m = 1, or any weight under
 * QGEMV_CUDA_LAYOUT=lut): when it is chosen, and the same contract,
 * batched-row, pattern and IEEE cases through it. The share form (a small
 * weight uploaded for m = 1, or any weight under QGEMV_CUDA_LAYOUT=share):
 * the same, plus misaligned activations and the chains; its combinations
 * at the automatic thread count and at 512 threads (QGEMV_CUDA_PLAN=st=512).
 *
 * Where no CUDA device is usable the suite exits 77 (SKIP) saying why; the
 * probe runs in this process and CUDA does not survive fork, so the suite
 * runs without Check's fork (CK_NOFORK). QGEMV_TEST_QUICK=1 trims sizes
 * (compute-sanitizer runs). */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/backend-cuda/share_layout.h"
#include "testutil.h"

static qgemv_ctx *ctx;
static qgemv_ctx *lut_ctx; /* opened with QGEMV_CUDA_LAYOUT=lut */
static qgemv_ctx *share_ctx; /* opened with QGEMV_CUDA_LAYOUT=share */
static qgemv_ctx *share512_ctx; /* and QGEMV_CUDA_PLAN=st=512: every share weight at 512 threads */
static bool lut_device;    /* 192 KB of shared memory a block (Hopper) */
static bool quick;

static const char *dt(qgemv_dtype t) { return t == QGEMV_F32 ? "f32" : "bf16"; }

#define CHECK_OK(call)                                                                                          \
  do {                                                                                                          \
    qgemv_status s_ = (call);                                                                                   \
    ck_assert_msg(s_ == QGEMV_OK, "%s: %s: %s", #call, qgemv_status_str(s_), qgemv_last_error());               \
  } while (0)

static qgemv_tensor *tensor_from(qgemv_dtype t, int64_t rows, int64_t cols, const void *host) {
  qgemv_tensor *x;
  CHECK_OK(qgemv_tensor_new(ctx, t, rows, cols, &x));
  CHECK_OK(qgemv_tensor_write(x, host, (size_t)(rows * cols) * tu_dtype_size(t)));
  return x;
}

/* Device pointer + offset as a tensor (wraps are not freed with the data). */
static qgemv_tensor *wrap_at(qgemv_tensor *base, size_t offset, qgemv_dtype t, int64_t rows, int64_t cols) {
  void *p;
  qgemv_tensor *w;
  CHECK_OK(qgemv_tensor_ptr(base, &p));
  CHECK_OK(qgemv_tensor_wrap(ctx, t, rows, cols, (char *)p + offset, &w));
  return w;
}

/* Runs the matvec into the front of a device buffer whose last
 * TU_GUARD_BYTES hold a pattern, the output poisoned (0xff: NaN) first;
 * returns the host copy (payload and guard), the guard already checked. */
static tu_guarded run_guarded(qgemv_weight *w, qgemv_tensor *x, qgemv_tensor *gamma, qgemv_dtype yt, int64_t m,
                              int64_t n) {
  const size_t ybytes = (size_t)(m * n) * tu_dtype_size(yt);
  tu_guarded h = tu_guarded_new(ybytes);
  qgemv_tensor *big = tensor_from(QGEMV_BF16, 1, (int64_t)(ybytes + TU_GUARD_BYTES) / 2, h.mem);
  qgemv_tensor *y = wrap_at(big, 0, yt, m, n);
  qgemv_rmsnorm norm = {.gamma = gamma, .eps = 1e-5f};
  CHECK_OK(qgemv_matvec(ctx, w, x, y, gamma ? &norm : NULL));
  CHECK_OK(qgemv_sync(ctx));
  CHECK_OK(qgemv_tensor_read(big, h.mem, ybytes + TU_GUARD_BYTES));
  ck_assert_msg(tu_guard_intact(&h), "the matvec wrote past the end of y [%lld, %lld]", (long long)m, (long long)n);
  qgemv_tensor_free(y);
  qgemv_tensor_free(big);
  return h;
}

typedef struct problem {
  tu_weight hw;
  qgemv_weight *w;
  float *xf, *gf;
  void *xh, *gh;  /* host x, gamma in their dtypes */
  qgemv_tensor *x, *g;
  int64_t m;
  qgemv_dtype xt, gt;
} problem;

/* p's activations (m rows) and gamma (norm), drawn from r; the old ones
 * freed. */
static void problem_set_x(problem *p, rng *r, dist_kind d, int64_t m, qgemv_dtype xt, bool norm, qgemv_dtype gt) {
  const int64_t k = p->hw.desc.k;
  qgemv_tensor_free(p->x);
  qgemv_tensor_free(p->g);
  free(p->xf);
  free(p->gf);
  free(p->xh);
  free(p->gh);
  p->x = p->g = NULL;
  p->xf = p->gf = NULL;
  p->xh = p->gh = NULL;
  p->m = m;
  p->xt = xt;
  p->gt = gt;
  p->xf = malloc((size_t)(m * k) * sizeof(float));
  ck_assert_ptr_nonnull(p->xf);
  fill_random(r, d, p->xf, (size_t)(m * k));
  p->xh = tu_convert(p->xf, (size_t)(m * k), xt);
  p->x = tensor_from(xt, m, k, p->xh);
  if (norm) {
    p->gf = malloc((size_t)k * sizeof(float));
    ck_assert_ptr_nonnull(p->gf);
    for (int64_t j = 0; j < k; j++) p->gf[j] = (float)(0.5 + rng_uniform(r));
    p->gh = tu_convert(p->gf, (size_t)k, gt);
    p->g = tensor_from(gt, 1, k, p->gh);
  }
}

static void problem_make(problem *p, uint64_t seed, dist_kind d, int fi, int64_t n, int64_t k, int64_t m,
                         qgemv_dtype xt, bool norm, qgemv_dtype gt) {
  memset(p, 0, sizeof *p);
  rng r = {seed};
  tu_weight_make(&r, d, tu_format(fi).format, tu_format(fi).group, n, k, &p->hw);
  CHECK_OK(qgemv_weight_upload(ctx, &p->hw.desc, &p->w));
  problem_set_x(p, &r, d, m, xt, norm, gt);
}

static void problem_free(problem *p) {
  qgemv_weight_free(p->w);
  qgemv_tensor_free(p->x);
  qgemv_tensor_free(p->g);
  tu_weight_free(&p->hw);
  free(p->xf);
  free(p->gf);
  free(p->xh);
  free(p->gh);
}

/* y checked against the oracle; the message names the case. */
static void check_contract(const problem *p, qgemv_dtype yt, const void *y, const char *what) {
  char where[256];
  double worst = tu_check_contract(&p->hw.desc, p->m, p->xt, p->xh, p->gt, p->g ? p->gh : NULL, 1e-5f, yt, y,
                                   where, sizeof where);
  ck_assert_msg(worst <= 1.0, "%s %lldx%lld m=%lld x=%s y=%s norm=%s: worst error %.3g of the bound at %s", what,
                (long long)p->hw.desc.n, (long long)p->hw.desc.k, (long long)p->m, dt(p->xt), dt(yt),
                p->g ? dt(p->gt) : "off", worst, where);
}

/* Every dtype and RMSNorm combination of one format over several shapes,
 * distributions and m. */
START_TEST(test_combinations) {
  const int fi = _i;
  static const int64_t shapes[][2] = {{33, 320}, {130, 1152}, {257, 4224}, {1000, 2112}, {4100, 896}};
  static const int64_t ms[] = {1, 7, 8, 9, 33};
  const int nshapes = quick ? 2 : 5;
  int iter = 0;
  for (int si = 0; si < nshapes; si++) {
    const int64_t n = shapes[si][0], k = shapes[si][1];
    if (k % tu_format(fi).group) continue;
    for (int xt = 0; xt < 2; xt++)
      for (int yt = 0; yt < 2; yt++)
        for (int norm = 0; norm < 3; norm++, iter++) { /* off, f32 gamma, bf16 gamma */
          const int64_t m = ms[iter % 5];
          const dist_kind d = (dist_kind)(iter % DIST_COUNT);
          problem p;
          problem_make(&p, 1000 + (uint64_t)iter, d, fi, n, k, m, (qgemv_dtype)xt, norm > 0,
                       norm == 2 ? QGEMV_BF16 : QGEMV_F32);
          tu_guarded y = run_guarded(p.w, p.x, p.g, (qgemv_dtype)yt, m, n);
          check_contract(&p, (qgemv_dtype)yt, y.mem, tu_format(fi).name);
          tu_guarded_free(&y);
          problem_free(&p);
        }
  }
}
END_TEST

/* Row r of a batched call is bit-identical to an m = 1 call on row r (m
 * past one launch's rows, every operand mode), and a second run of the
 * batched call is bit-identical to the first. */
START_TEST(test_batched_bit_identical) {
  const int fi = _i;
  const int64_t n = 203, k = tu_whole_blocks(fi, 1408), m = 33;
  for (int xt = 0; xt < 2; xt++)
    for (int norm = 0; norm < 2; norm++) {
      problem p;
      problem_make(&p, 77 + (uint64_t)(2 * xt + norm), DIST_NORMAL, fi, n, k, m, (qgemv_dtype)xt, norm, QGEMV_F32);
      tu_guarded all = run_guarded(p.w, p.x, p.g, QGEMV_F32, m, n);
      check_contract(&p, QGEMV_F32, all.mem, tu_format(fi).name);
      tu_guarded again = run_guarded(p.w, p.x, p.g, QGEMV_F32, m, n);
      ck_assert_msg(memcmp(all.mem, again.mem, (size_t)(m * n) * 4) == 0, "%s: two runs differ (x %s, norm %d)",
                    tu_format(fi).name, dt(p.xt), norm);
      for (int64_t r = 0; r < m; r += quick ? 8 : 1) {
        qgemv_tensor *xr = wrap_at(p.x, (size_t)(r * k) * tu_dtype_size(p.xt), p.xt, 1, k);
        tu_guarded one = run_guarded(p.w, xr, p.g, QGEMV_F32, 1, n);
        ck_assert_msg(memcmp(one.mem, all.mem + (size_t)(r * n) * 4, (size_t)n * 4) == 0,
                      "%s: row %lld of the m=%lld call differs from m=1 (x %s, norm %d)", tu_format(fi).name,
                      (long long)r, (long long)m, dt(p.xt), norm);
        tu_guarded_free(&one);
        qgemv_tensor_free(xr);
      }
      tu_guarded_free(&all);
      tu_guarded_free(&again);
      problem_free(&p);
    }
}
END_TEST

/* k = 65536 (the largest the design names) and n = 131072 (plus an odd
 * n past it), sized to stay quick. */
START_TEST(test_large_shapes) {
  const int fi = _i;
  static const int64_t shapes[][3] = {{24, 65536, 2}, {131072, 128, 1}, {131077, 192, 3}};
  for (int si = 0; si < 3; si++) {
    const int64_t n = shapes[si][0], k = shapes[si][1], m = shapes[si][2];
    if (k % tu_format(fi).group) continue;
    if (quick && si == 2) continue;
    for (int xt = 0; xt < 2; xt++) {
      problem p;
      problem_make(&p, 500 + (uint64_t)si, DIST_HEAVY, fi, n, k, m, (qgemv_dtype)xt, xt == 0, QGEMV_BF16);
      tu_guarded y = run_guarded(p.w, p.x, p.g, QGEMV_BF16, m, n);
      check_contract(&p, QGEMV_BF16, y.mem, tu_format(fi).name);
      tu_guarded_free(&y);
      problem_free(&p);
    }
  }
}
END_TEST

/* Activations and gamma at an address that is element-aligned only. */
static void misaligned_case(int fi) {
  const int64_t n = 70, k = tu_whole_blocks(fi, 640), m = 3;
  for (int xt = 0; xt < 2; xt++)
    for (int norm = 0; norm < 2; norm++) {
      problem p;
      problem_make(&p, 31 + (uint64_t)xt, DIST_NORMAL, fi, n, k, m, (qgemv_dtype)xt, norm, (qgemv_dtype)xt);
      const size_t es = tu_dtype_size(p.xt);
      qgemv_tensor *xbig, *gbig = NULL, *xs, *gs = NULL;
      CHECK_OK(qgemv_tensor_new(ctx, p.xt, 1, m * k + 8, &xbig));
      xs = wrap_at(xbig, es, p.xt, m, k);
      CHECK_OK(qgemv_tensor_write(xs, p.xh, (size_t)(m * k) * es));
      if (norm) {
        CHECK_OK(qgemv_tensor_new(ctx, p.gt, 1, k + 8, &gbig));
        gs = wrap_at(gbig, tu_dtype_size(p.gt), p.gt, 1, k);
        CHECK_OK(qgemv_tensor_write(gs, p.gh, (size_t)k * tu_dtype_size(p.gt)));
      }
      tu_guarded y = run_guarded(p.w, xs, gs, QGEMV_F32, m, n);
      check_contract(&p, QGEMV_F32, y.mem, tu_format(fi).name);
      tu_guarded ya = run_guarded(p.w, p.x, p.g, QGEMV_F32, m, n);
      ck_assert_msg(memcmp(y.mem, ya.mem, (size_t)(m * n) * 4) == 0,
                    "%s: misaligned x gives other bits than aligned x", tu_format(fi).name);
      tu_guarded_free(&y);
      tu_guarded_free(&ya);
      qgemv_tensor_free(xs);
      qgemv_tensor_free(gs);
      qgemv_tensor_free(xbig);
      qgemv_tensor_free(gbig);
      problem_free(&p);
    }
}

START_TEST(test_misaligned_inputs) { misaligned_case(_i); }
END_TEST

/* A caller's stream through the driver API (libcuda is there wherever a
 * GPU is): same bits as on the context's own stream; NULL goes back. */
static void *cuda_driver(const char *name, const char *alt) {
  static void *lib;
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return NULL;
  void *f = dlsym(lib, name);
  return f ? f : (alt ? dlsym(lib, alt) : NULL);
}

START_TEST(test_user_stream) {
  int (*cu_init)(unsigned) = cuda_driver("cuInit", NULL);
  int (*cu_device_get)(int *, int) = cuda_driver("cuDeviceGet", NULL);
  int (*cu_retain)(void **, int) = cuda_driver("cuDevicePrimaryCtxRetain", NULL);
  int (*cu_release)(int) = cuda_driver("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
  int (*cu_push)(void *) = cuda_driver("cuCtxPushCurrent_v2", "cuCtxPushCurrent");
  int (*cu_pop)(void **) = cuda_driver("cuCtxPopCurrent_v2", "cuCtxPopCurrent");
  int (*cu_stream_create)(void **, unsigned) = cuda_driver("cuStreamCreate", NULL);
  int (*cu_stream_destroy)(void *) = cuda_driver("cuStreamDestroy_v2", "cuStreamDestroy");
  ck_assert_msg(cu_init && cu_device_get && cu_retain && cu_release && cu_push && cu_pop && cu_stream_create &&
                    cu_stream_destroy,
                "libcuda.so.1 lacks the stream API");
  int dev;
  void *pctx, *stream, *popped;
  ck_assert_int_eq(cu_init(0), 0);
  ck_assert_int_eq(cu_device_get(&dev, qgemv_ctx_device(ctx)), 0);
  ck_assert_int_eq(cu_retain(&pctx, dev), 0);
  ck_assert_int_eq(cu_push(pctx), 0);
  ck_assert_int_eq(cu_stream_create(&stream, 1 /* CU_STREAM_NON_BLOCKING */), 0);
  cu_pop(&popped);

  problem p;
  problem_make(&p, 4242, DIST_NORMAL, 1, 300, 1024, 4, QGEMV_BF16, false, QGEMV_F32);
  tu_guarded own = run_guarded(p.w, p.x, NULL, QGEMV_F32, 4, 300);
  CHECK_OK(qgemv_set_stream(ctx, stream));
  tu_guarded theirs = run_guarded(p.w, p.x, NULL, QGEMV_F32, 4, 300);
  CHECK_OK(qgemv_set_stream(ctx, NULL));
  ck_assert_msg(memcmp(own.mem, theirs.mem, 4 * 300 * 4) == 0, "the caller's stream gives other bits");
  check_contract(&p, QGEMV_F32, theirs.mem, "user stream");
  tu_guarded_free(&own);
  tu_guarded_free(&theirs);
  problem_free(&p);

  cu_push(pctx);
  cu_stream_destroy(stream);
  cu_pop(&popped);
  cu_release(dev);
}
END_TEST

/* A weight too big for the device: NO_MEMORY, and the context still works. */
static qgemv_weight_desc zero_desc(qgemv_format f, int64_t n, int64_t k, void **data, float **scales) {
  const size_t bytes = qgemv_data_bytes(f, n, k, 64), ns = qgemv_scale_count(f, n, k, 64);
  *data = calloc(1, bytes);
  *scales = ns ? calloc(ns, sizeof(float)) : NULL;
  ck_assert_ptr_nonnull(*data);
  return (qgemv_weight_desc){.format = f, .n = n, .k = k, .group = 64, .data = *data, .scales = *scales};
}

START_TEST(test_no_memory) {
  qgemv_tensor *t = NULL;
  qgemv_status s = qgemv_tensor_new(ctx, QGEMV_F32, (int64_t)1 << 22, (int64_t)1 << 22, &t); /* 64 TiB */
  ck_assert_msg(s == QGEMV_ERR_NO_MEMORY, "an absurd tensor gave %s: %s", qgemv_status_str(s), qgemv_last_error());
  ck_assert_ptr_null(t);
  if (!quick) {
    /* Fill the device, then upload a 72 MB weight. */
    qgemv_tensor *fill[4096];
    int nfill = 0;
    for (int64_t cols = (int64_t)1 << 30; cols >= ((int64_t)1 << 22) && nfill < 4096;) {
      if (qgemv_tensor_new(ctx, QGEMV_F32, 1, cols, &fill[nfill]) == QGEMV_OK)
        nfill++;
      else
        cols /= 2;
    }
    void *data;
    float *scales;
    qgemv_weight_desc d = zero_desc(QGEMV_NF4, 8192, 16384, &data, &scales);
    qgemv_weight *w = NULL;
    s = qgemv_weight_upload(ctx, &d, &w);
    ck_assert_msg(s == QGEMV_ERR_NO_MEMORY, "an upload into a full device gave %s: %s", qgemv_status_str(s),
                  qgemv_last_error());
    ck_assert_ptr_null(w);
    while (nfill > 0) qgemv_tensor_free(fill[--nfill]);
    free(data);
    free(scales);
  }
  /* still usable */
  problem p;
  problem_make(&p, 9, DIST_NORMAL, 0, 64, 256, 2, QGEMV_F32, true, QGEMV_F32);
  tu_guarded y = run_guarded(p.w, p.x, p.g, QGEMV_F32, 2, 64);
  check_contract(&p, QGEMV_F32, y.mem, "after NO_MEMORY");
  tu_guarded_free(&y);
  problem_free(&p);
}
END_TEST

/* A weight of format fi whose codes and scales are set directly (the
 * quantizer would not make these rows): random codes and positive scales;
 * ADVERSARIAL: rows r % 4 == 3 hold the zero code (NF4 7, Q2_0 1) at
 * adv_pos(b) of every 64-block b, where adversarial_x puts its one large
 * value; CORRELATED: rows r < n / 2 hold one code over all of k (NF4 r %
 * 16, Q2_0 r % 4). */
enum { ADVERSARIAL, CORRELATED };
static int adv_pos(int64_t b) { return (int)((b * 37 + 11) % 64); }

static void set_code(const qgemv_format_info *f, uint8_t *row, int64_t kk, int code) {
  if (f->format == QGEMV_NF4) {
    uint8_t *b = &row[kk / 2];
    *b = (kk & 1) ? (uint8_t)((*b & 0x0f) | (code << 4)) : (uint8_t)((*b & 0xf0) | code);
  } else {
    const int64_t j = kk % f->group;
    uint8_t *b = &row[(kk / f->group) * (2 + f->group / 4) + 2 + j / 4];
    *b = (uint8_t)((*b & ~(3 << (2 * (j % 4)))) | (code << (2 * (j % 4))));
  }
}

static qgemv_weight_desc coded_weight(int fi, int64_t n, int64_t k, int kind, uint64_t seed) {
  const qgemv_format_info f = tu_format(fi);
  rng r = {seed};
  const size_t bytes = qgemv_data_bytes(f.format, n, k, f.group), ns = qgemv_scale_count(f.format, n, k, f.group);
  uint8_t *data = malloc(bytes);
  float *scales = ns ? malloc(ns * sizeof(float)) : NULL;
  ck_assert_ptr_nonnull(data);
  for (size_t i = 0; i < bytes; i++) data[i] = (uint8_t)(rng_next(&r) >> 24);
  for (size_t i = 0; i < ns; i++) scales[i] = (float)(0.01 + 0.02 * rng_uniform(&r));
  const size_t row_bytes = bytes / (size_t)n;
  for (int64_t row = 0; row < n; row++) {
    uint8_t *rp = data + (size_t)row * row_bytes;
    if (f.format != QGEMV_NF4) /* fp16 d of every block, in (0.01, 0.03) */
      for (int64_t b = 0; b < k / f.group; b++) {
        const uint16_t d = qgemv_f32_to_f16((float)(0.01 + 0.02 * rng_uniform(&r)));
        rp[b * (2 + f.group / 4)] = (uint8_t)d;
        rp[b * (2 + f.group / 4) + 1] = (uint8_t)(d >> 8);
      }
    for (int64_t kk = 0; kk < k; kk++) {
      if (kind == ADVERSARIAL && row % 4 == 3 && kk % 64 == adv_pos(kk / 64))
        set_code(&f, rp, kk, f.format == QGEMV_NF4 ? 7 : 1);
      if (kind == CORRELATED && row < n / 2) set_code(&f, rp, kk, (int)(row % (f.format == QGEMV_NF4 ? 16 : 4)));
    }
  }
  return (qgemv_weight_desc){.format = f.format, .n = n, .k = k, .group = f.group, .data = data, .scales = scales};
}

/* m rows of k activations: one value of magnitude 2^12..2^13 per 64-block
 * (at adv_pos), three exact zeros after it, the rest 2^-12..2^-11, random
 * signs (ADVERSARIAL); or uniform in [0.5, 1.5) (CORRELATED). */
static float *pattern_x(int64_t m, int64_t k, int kind, uint64_t seed) {
  rng r = {seed};
  float *x = malloc((size_t)(m * k) * sizeof(float));
  ck_assert_ptr_nonnull(x);
  for (int64_t i = 0; i < m * k; i++) {
    const int64_t kk = i % k, j = kk % 64, p = adv_pos(kk / 64);
    const double sign = (rng_next(&r) & 1) ? -1.0 : 1.0, mag = 1.0 + rng_uniform(&r);
    if (kind == CORRELATED)
      x[i] = (float)(0.5 + rng_uniform(&r));
    else if (j == p)
      x[i] = (float)(sign * 4096.0 * mag);
    else
      x[i] = (j - p + 64) % 64 <= 3 ? 0.0f : (float)(sign * mag / 4096.0);
  }
  return x;
}

/* The pattern's weight and x through every dtype pair under the contract. */
static void run_pattern(int fi, int64_t n, int64_t k, int64_t m, int kind) {
  qgemv_weight_desc d = coded_weight(fi, n, k, kind, 4000 + (uint64_t)(fi * 7 + kind));
  qgemv_weight *w;
  CHECK_OK(qgemv_weight_upload(ctx, &d, &w));
  if (ctx == lut_ctx) ck_assert_str_eq(qgemv_weight_form(w), "lut");
  if (ctx == share_ctx) ck_assert_str_eq(qgemv_weight_form(w), "share");
  float *xf = pattern_x(m, k, kind, 5000 + (uint64_t)kind);
  for (int xt = 0; xt < 2; xt++)
    for (int yt = 0; yt < 2; yt++) {
      void *xh = tu_convert(xf, (size_t)(m * k), (qgemv_dtype)xt);
      qgemv_tensor *x = tensor_from((qgemv_dtype)xt, m, k, xh);
      tu_guarded y = run_guarded(w, x, NULL, (qgemv_dtype)yt, m, n);
      char where[256];
      const double worst = tu_check_contract(&d, m, (qgemv_dtype)xt, xh, QGEMV_F32, NULL, 1e-5f, (qgemv_dtype)yt,
                                             y.mem, where, sizeof where);
      ck_assert_msg(worst <= 1.0, "%s %s %lldx%lld x=%s y=%s: worst error %.3g of the bound at %s", tu_format(fi).name,
                    kind == ADVERSARIAL ? "adversarial" : "correlated", (long long)n, (long long)k, dt((qgemv_dtype)xt),
                    dt((qgemv_dtype)yt), worst, where);
      tu_guarded_free(&y);
      qgemv_tensor_free(x);
      free(xh);
    }
  free(xf);
  qgemv_weight_free(w);
  free((void *)d.data);
  free((void *)d.scales);
}

/* A large activation on a zero weight, so that R is made of the tiny
 * elements alone (within the fp16 staging's range: 2^25 of each block's
 * largest). */
START_TEST(test_adversarial_rows) { run_pattern(_i, quick ? 64 : 515, tu_whole_blocks(_i, 4160), 3, ADVERSARIAL); }
END_TEST

/* Rows of one repeated code against all-positive x: the table's rounding
 * errors add up over k (an fp16 NF4 table is 27x the bound at k = 8192,
 * 77x at 65536). */
START_TEST(test_correlated_rows) {
  static const int64_t ks[] = {8192, 65536};
  for (int i = 0; i < 2; i++) run_pattern(_i, quick ? 64 : (i ? 512 : 2048), ks[i], quick ? 1 : 2, CORRELATED);
}
END_TEST

/* A chain of square matvecs, x(i + 1) = y(i), ping-pong tensors, queued
 * back to back (the next launch may start before the previous ends:
 * programmatic dependent launch), against the same chain with a sync
 * after every call: bit-identical. With RMSNorm the values stay in range.
 * Then the back-to-back chain captured in a CUDA graph on a caller's
 * stream and replayed: bit-identical too. */
static void run_chain(qgemv_weight *w, qgemv_tensor *const pp[2], qgemv_tensor *g, const void *x0, size_t bytes,
                      int steps, bool sync_each, void *out) {
  qgemv_rmsnorm norm = {.gamma = g, .eps = 1e-5f};
  CHECK_OK(qgemv_tensor_write(pp[0], x0, bytes));
  for (int i = 0; i < steps; i++) {
    CHECK_OK(qgemv_matvec(ctx, w, pp[i % 2], pp[(i + 1) % 2], g ? &norm : NULL));
    if (sync_each) CHECK_OK(qgemv_sync(ctx));
  }
  CHECK_OK(qgemv_sync(ctx));
  CHECK_OK(qgemv_tensor_read(pp[steps % 2], out, bytes));
}

static void *cuda_driver(const char *name, const char *alt);

static void pdl_chain_case(int fi) {
  const int steps = 8;
  const int64_t n = tu_whole_blocks(fi, 4096), m = 3;
  int (*begin)(void *, int) = cuda_driver("cuStreamBeginCapture_v2", "cuStreamBeginCapture");
  int (*end)(void *, void **) = cuda_driver("cuStreamEndCapture", NULL);
  int (*inst)(void **, void *, unsigned long long) = cuda_driver("cuGraphInstantiateWithFlags", NULL);
  int (*launch)(void *, void *) = cuda_driver("cuGraphLaunch", NULL);
  int (*ssync)(void *) = cuda_driver("cuStreamSynchronize", NULL);
  int (*exec_destroy)(void *) = cuda_driver("cuGraphExecDestroy", NULL);
  int (*graph_destroy)(void *) = cuda_driver("cuGraphDestroy", NULL);
  int (*screate)(void **, unsigned) = cuda_driver("cuStreamCreate", NULL);
  int (*sdestroy)(void *) = cuda_driver("cuStreamDestroy_v2", "cuStreamDestroy");
  int (*retain)(void **, int) = cuda_driver("cuDevicePrimaryCtxRetain", NULL);
  int (*release)(int) = cuda_driver("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
  int (*push)(void *) = cuda_driver("cuCtxPushCurrent_v2", "cuCtxPushCurrent");
  int (*pop)(void **) = cuda_driver("cuCtxPopCurrent_v2", "cuCtxPopCurrent");
  ck_assert_msg(begin && end && inst && launch && ssync && exec_destroy && graph_destroy && screate && sdestroy &&
                    retain && release && push && pop,
                "libcuda.so.1 lacks the graph API");
  for (int xt = 0; xt < 2; xt++)
    for (int norm = 0; norm < 2; norm++) {
      problem p;
      problem_make(&p, 60 + (uint64_t)(2 * xt + norm), DIST_NORMAL, fi, n, n, m, (qgemv_dtype)xt, norm, QGEMV_F32);
      const size_t bytes = (size_t)(m * n) * tu_dtype_size(p.xt);
      qgemv_tensor *pp[2];
      CHECK_OK(qgemv_tensor_new(ctx, p.xt, m, n, &pp[0]));
      CHECK_OK(qgemv_tensor_new(ctx, p.xt, m, n, &pp[1]));
      const int nsteps = norm ? steps : 2; /* without the norm, values grow */
      unsigned char *serial = malloc(bytes), *chained = malloc(bytes), *graphed = malloc(bytes);
      ck_assert_ptr_nonnull(serial);
      ck_assert_ptr_nonnull(chained);
      ck_assert_ptr_nonnull(graphed);
      run_chain(p.w, pp, p.g, p.xh, bytes, nsteps, true, serial);
      run_chain(p.w, pp, p.g, p.xh, bytes, nsteps, false, chained);
      ck_assert_msg(memcmp(serial, chained, bytes) == 0, "%s: the back-to-back chain differs (x %s, norm %d)",
                    tu_format(fi).name, dt(p.xt), norm);
      /* the same chain captured in a graph on a caller's stream */
      int dev;
      void *pctx, *stream, *graph, *exec, *popped;
      dev = qgemv_ctx_device(ctx);
      ck_assert_int_eq(retain(&pctx, dev), 0);
      ck_assert_int_eq(push(pctx), 0);
      ck_assert_int_eq(screate(&stream, 1 /* non-blocking */), 0);
      pop(&popped);
      CHECK_OK(qgemv_tensor_write(pp[0], p.xh, bytes));
      CHECK_OK(qgemv_set_stream(ctx, stream));
      push(pctx);
      ck_assert_int_eq(begin(stream, 2 /* relaxed */), 0);
      pop(&popped);
      qgemv_rmsnorm rn = {.gamma = p.g, .eps = 1e-5f};
      for (int i = 0; i < nsteps; i++)
        CHECK_OK(qgemv_matvec(ctx, p.w, pp[i % 2], pp[(i + 1) % 2], norm ? &rn : NULL));
      push(pctx);
      ck_assert_int_eq(end(stream, &graph), 0);
      ck_assert_int_eq(inst(&exec, graph, 0), 0);
      ck_assert_int_eq(launch(exec, stream), 0);
      ck_assert_int_eq(ssync(stream), 0);
      pop(&popped);
      CHECK_OK(qgemv_set_stream(ctx, NULL));
      CHECK_OK(qgemv_tensor_read(pp[nsteps % 2], graphed, bytes));
      ck_assert_msg(memcmp(serial, graphed, bytes) == 0, "%s: the chain in a CUDA graph differs (x %s, norm %d)",
                    tu_format(fi).name, dt(p.xt), norm);
      push(pctx);
      exec_destroy(exec);
      graph_destroy(graph);
      sdestroy(stream);
      pop(&popped);
      release(dev);
      free(serial);
      free(chained);
      free(graphed);
      qgemv_tensor_free(pp[0]);
      qgemv_tensor_free(pp[1]);
      problem_free(&p);
    }
}

START_TEST(test_pdl_chain) { pdl_chain_case(_i); }
END_TEST

/* The wide kernel (QGEMV_CUDA_PLAN w over 16: 28 warps of one tile, B per
 * CTA, NF4 bf16 x or Q2_0 direct) gives the bits of the 16-warp kernels at
 * the same k-split, m = 1 and 8 (one launch of 8 rows), with a short last
 * chunk and a tail of n % 16 rows; a call it cannot take (f32 x, or the
 * norm) is refused, saying what to change, or, where the module has a wide
 * kernel for that mode too (the experiment QGC_EXP_WIDEB3: Q2_0's three
 * bf16 terms), gives the 16-warp kernels' bits as well. */
START_TEST(test_wide_kernel) {
  const int fi = _i;
  const int64_t n = 1000, k = tu_whole_blocks(fi, 4160);
  qgemv_ctx *const base = ctx, *c[2];
  const char *plans[2] = {"ks=2", "ks=2,w=28,t=1"};
  for (int i = 0; i < 2; i++) {
    setenv("QGEMV_CUDA_PLAN", plans[i], 1);
    const qgemv_status s = qgemv_open("cuda:0", &c[i]);
    unsetenv("QGEMV_CUDA_PLAN");
    CHECK_OK(s);
  }
  for (int64_t m = 1; m <= 8; m += 7) {
    tu_guarded y[2];
    for (int i = 0; i < 2; i++) {
      ctx = c[i];
      problem p;
      problem_make(&p, 900 + (uint64_t)m, DIST_NORMAL, fi, n, k, m, QGEMV_BF16, false, QGEMV_F32);
      y[i] = run_guarded(p.w, p.x, NULL, QGEMV_F32, m, n);
      check_contract(&p, QGEMV_F32, y[i].mem, plans[i]);
      problem_free(&p);
    }
    ctx = base;
    ck_assert_msg(memcmp(y[0].mem, y[1].mem, (size_t)(m * n) * 4) == 0, "%s m=%lld: the wide kernel's bits differ",
                  tu_format(fi).name, (long long)m);
    tu_guarded_free(&y[0]);
    tu_guarded_free(&y[1]);
  }
  for (int mode = 0; mode < 2; mode++) { /* f32 x; bf16 x with the norm */
    const qgemv_dtype xt = mode ? QGEMV_BF16 : QGEMV_F32;
    void *out[2] = {NULL, NULL};
    for (int i = 1; i >= 0; i--) {
      ctx = c[i];
      problem p;
      problem_make(&p, 999 + (uint64_t)mode, DIST_NORMAL, fi, n, k, 1, xt, mode == 1, QGEMV_F32);
      qgemv_tensor *y = NULL;
      CHECK_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, n, &y));
      qgemv_rmsnorm norm = {.gamma = p.g, .eps = 1e-5f};
      const qgemv_status s = qgemv_matvec(ctx, p.w, p.x, y, mode ? &norm : NULL);
      if (i == 1 && s != QGEMV_OK) { /* refused: the wide kernel has no such mode */
        ck_assert_msg(strstr(qgemv_last_error(), "QGEMV_CUDA_PLAN"), "%s mode %d, w=28: %s (%s)", tu_format(fi).name,
                      mode, qgemv_status_str(s), qgemv_last_error());
        qgemv_tensor_free(y);
        problem_free(&p);
        break;
      }
      CHECK_OK(s);
      out[i] = malloc((size_t)n * 4);
      ck_assert_ptr_nonnull(out[i]);
      CHECK_OK(qgemv_sync(ctx));
      CHECK_OK(qgemv_tensor_read(y, out[i], (size_t)n * 4));
      check_contract(&p, QGEMV_F32, out[i], plans[i]);
      qgemv_tensor_free(y);
      problem_free(&p);
    }
    if (out[0] && out[1])
      ck_assert_msg(memcmp(out[0], out[1], (size_t)n * 4) == 0, "%s mode %d: the wide kernel's bits differ",
                    tu_format(fi).name, mode);
    free(out[0]);
    free(out[1]);
  }
  ctx = base;
  qgemv_close(c[0]);
  qgemv_close(c[1]);
}
END_TEST

/* The plan's own wide kernel for batched Q2_0 g64 (28667 x 1024, bf16 x,
 * m = 8 on an H200: 128 CTAs of 28 warps at k-split 2, B per CTA), and
 * NF4's two column groups at two tiles per warp (bf16 x m = 16, f32 x
 * m = 8: 128 CTAs of 14 warps, QGC_EXP_NG2T2), against m = 1, which
 * takes other geometries at the same k-split: every row the same bits.
 * The emulated test_plan checks those choices for this shape; other
 * formats and devices run the same check on their own plans. */
START_TEST(test_batched_wide_plan) {
  const int fi = _i;
  const int64_t n = 28667, k = 1024;
  const struct {
    qgemv_dtype xt;
    int64_t m;
  } cases[] = {{QGEMV_BF16, 8}, {QGEMV_BF16, 16}, {QGEMV_F32, 8}};
  for (int ci = 0; ci < 3; ci++) {
    const qgemv_dtype xt = cases[ci].xt;
    const int64_t m = cases[ci].m;
    if (ci > 0 && tu_format(fi).format != QGEMV_NF4) continue;
    problem p;
    problem_make(&p, 4242 + (uint64_t)ci, DIST_NORMAL, fi, n, k, m, xt, false, QGEMV_F32);
    tu_guarded all = run_guarded(p.w, p.x, NULL, QGEMV_F32, m, n);
    check_contract(&p, QGEMV_F32, all.mem, tu_format(fi).name);
    for (int64_t r = 0; r < m; r += quick ? 7 : 1) {
      qgemv_tensor *xr = wrap_at(p.x, (size_t)(r * k) * tu_dtype_size(xt), xt, 1, k);
      tu_guarded one = run_guarded(p.w, xr, NULL, QGEMV_F32, 1, n);
      ck_assert_msg(memcmp(one.mem, all.mem + (size_t)(r * n) * 4, (size_t)n * 4) == 0,
                    "%s %lldx%lld x %s: row %lld of the m=%lld call differs from m=1", tu_format(fi).name,
                    (long long)n, (long long)k, dt(xt), (long long)r, (long long)m);
      tu_guarded_free(&one);
      qgemv_tensor_free(xr);
    }
    tu_guarded_free(&all);
    problem_free(&p);
  }
}
END_TEST

/* Batched rows (f32 x: two launches) against m = 1, bit for bit, and the
 * contract, at shapes of the plan's fill rules on the H200: 895 full tiles
 * at k = 2048, the k-split of 2 with one tile per warp (QGC_EXP_KS2_FILL,
 * as at 14336 x 4096) where the warp slots give 4; 687 at k = 4096 and
 * 1183 at k = 3584, qgc_wave_fit's picks (QGC_EXP_WAVE_FIT: as at 11008 x
 * 4096, k-split 4 in 12 warps; as at 18944 x 3584, k-split 2, NF4 in 10
 * warps, Q2_0 in 12). */
START_TEST(test_fill_rows) {
  const int fi = _i;
  static const int64_t shape[5][2] = {{14331, 2048}, {14331, 2048}, {11003, 4096}, {11003, 4096}, {18939, 3584}};
  for (int ci = 0; ci < 5; ci++) {
    const int64_t n = shape[ci][0], k = shape[ci][1];
    const qgemv_dtype xt = ci % 2 ? QGEMV_F32 : QGEMV_BF16;
    const int64_t m = ci % 2 ? 9 : 8;
    problem p;
    problem_make(&p, 5151 + (uint64_t)ci, DIST_NORMAL, fi, n, k, m, xt, false, QGEMV_F32);
    tu_guarded all = run_guarded(p.w, p.x, NULL, QGEMV_F32, m, n);
    check_contract(&p, QGEMV_F32, all.mem, tu_format(fi).name);
    for (int64_t r = 0; r < m; r += quick ? 4 : 1) {
      qgemv_tensor *xr = wrap_at(p.x, (size_t)(r * k) * tu_dtype_size(xt), xt, 1, k);
      tu_guarded one = run_guarded(p.w, xr, NULL, QGEMV_F32, 1, n);
      ck_assert_msg(memcmp(one.mem, all.mem + (size_t)(r * n) * 4, (size_t)n * 4) == 0,
                    "%s %lldx%lld x %s: row %lld of the m=%lld call differs from m=1", tu_format(fi).name,
                    (long long)n, (long long)k, dt(xt), (long long)r, (long long)m);
      tu_guarded_free(&one);
      qgemv_tensor_free(xr);
    }
    tu_guarded_free(&all);
    problem_free(&p);
  }
}
END_TEST

/* y rows [0, rows) against the oracle's rows [row0, row0 + rows) of p,
 * element by element: NaN where it has NaN, the same infinity, else
 * within the contract. */
static void expect_ieee(const problem *p, const double *ref, const double *bound, int64_t row0, int64_t rows,
                        qgemv_dtype yt, const void *y, const char *what) {
  const int64_t n = p->hw.desc.n;
  for (int64_t i = 0; i < rows * n; i++) {
    const double v = tu_elem(yt, y, (size_t)i), r = ref[row0 * n + i];
    const int64_t row = row0 + i / n, col = i % n;
    if (isnan(r)) {
      ck_assert_msg(isnan(v), "%s: y[%lld][%lld] = %g where the oracle has NaN", what, (long long)row,
                    (long long)col, v);
    } else if (isinf(r)) {
      ck_assert_msg(v == r, "%s: y[%lld][%lld] = %g where the oracle has %g", what, (long long)row, (long long)col, v,
                    r);
    } else {
      const double allowed = tu_contract_allowed(r, bound[row0 * n + i], yt == QGEMV_BF16);
      ck_assert_msg(fabs(v - r) <= allowed, "%s: y[%lld][%lld] = %.9g, oracle %.9g, allowed +-%.3g", what,
                    (long long)row, (long long)col, v, r, allowed);
    }
  }
}

/* NaN and infinite activations through every staging path of every mode
 * (B per CTA, also in phases, and B per warp; x f32 and bf16, with and
 * without the norm): rows with NaN, +inf, -inf, both infinities, then a
 * clean row. y is what IEEE gives (the oracle's NaN and infinities) in the
 * batch and in each row alone, and the clean row alone has the batch's
 * bits. The three-term staging makes a warp's terms without a test per
 * element when the warp's values are all finite: the poisoned elements
 * sit in one warp of many, so both ways run in one launch. */
/* The IEEE cases of every mode on the current context (plan or form). */
static void nonfinite_modes(int fi, int64_t n, int64_t k, const char *label) {
  const int64_t m = 5;
  for (int mode = 0; mode < 6; mode++) {
    const qgemv_dtype xt = mode & 1 ? QGEMV_BF16 : QGEMV_F32, gt = mode >= 4 ? QGEMV_BF16 : QGEMV_F32;
    const bool norm = mode >= 2;
    problem p;
    problem_make(&p, 7100 + (uint64_t)mode, DIST_NORMAL, fi, n, k, m, xt, norm, gt);
    p.xf[0 * k + 17] = NAN;
    p.xf[1 * k + k / 2] = INFINITY;
    p.xf[2 * k + 3] = -INFINITY;
    p.xf[3 * k + 5] = INFINITY;
    p.xf[3 * k + k - 6] = -INFINITY;
    free(p.xh);
    p.xh = tu_convert(p.xf, (size_t)(m * k), xt);
    CHECK_OK(qgemv_tensor_write(p.x, p.xh, (size_t)(m * k) * tu_dtype_size(xt)));
    double *ref = malloc((size_t)(m * n) * sizeof(double)), *bound = malloc((size_t)(m * n) * sizeof(double));
    ck_assert_ptr_nonnull(ref);
    ck_assert_ptr_nonnull(bound);
    CHECK_OK(qgemv_reference_matvec(&p.hw.desc, m, xt, p.xh, gt, norm ? p.gh : NULL, 1e-5f, ref, bound));
    char what[160];
    snprintf(what, sizeof what, "%s %s x=%s norm=%s", tu_format(fi).name, label, dt(xt), norm ? dt(gt) : "off");
    tu_guarded all = run_guarded(p.w, p.x, p.g, QGEMV_F32, m, n);
    expect_ieee(&p, ref, bound, 0, m, QGEMV_F32, all.mem, what);
    for (int64_t r = 0; r < m; r++) {
      qgemv_tensor *xr = wrap_at(p.x, (size_t)(r * k) * tu_dtype_size(xt), xt, 1, k);
      tu_guarded one = run_guarded(p.w, xr, p.g, QGEMV_F32, 1, n);
      expect_ieee(&p, ref, bound, r, 1, QGEMV_F32, one.mem, what);
      if (r == m - 1)
        ck_assert_msg(memcmp(one.mem, all.mem + (size_t)(r * n) * 4, (size_t)n * 4) == 0,
                      "%s: the clean row alone differs from the batch's", what);
      tu_guarded_free(&one);
      qgemv_tensor_free(xr);
    }
    tu_guarded_free(&all);
    free(ref);
    free(bound);
    problem_free(&p);
  }
}

START_TEST(test_nonfinite_x) {
  const int fi = _i;
  /* the last three: Q2_0's norm with bf16 x and gamma as two bf16 terms
   * (kB2) for every weight, in each staging path */
  const char *plans[6] = {"b=cta", "b=cta,phases=2", "b=warp", "b=cta,norm=b2", "b=cta,phases=2,norm=b2",
                          "b=warp,norm=b2"};
  qgemv_ctx *const base = ctx;
  for (int pl = 0; pl < 6; pl++) {
    if (pl >= 3 && tu_format(fi).format != QGEMV_Q2_0) continue;
    setenv("QGEMV_CUDA_PLAN", plans[pl], 1);
    const qgemv_status st = qgemv_open("cuda:0", &ctx);
    unsetenv("QGEMV_CUDA_PLAN");
    CHECK_OK(st);
    char label[40];
    snprintf(label, sizeof label, "plan %s", plans[pl]);
    nonfinite_modes(fi, 300, tu_whole_blocks(fi, 4160), label);
    qgemv_close(ctx);
  }
  ctx = base;
}
END_TEST

/* ---- the lookup-table form ---- */

static const char *form_of(qgemv_ctx *c, qgemv_format f, int64_t n, int64_t k, int64_t max_m) {
  void *data;
  float *scales;
  qgemv_weight_desc d = zero_desc(f, n, k, &data, &scales);
  qgemv_weight *w = NULL;
  CHECK_OK(qgemv_weight_upload_for_m(c, &d, max_m, &w));
  const char *form = qgemv_weight_form(w);
  ck_assert_ptr_nonnull(form);
  qgemv_weight_free(w);
  free(data);
  free(scales);
  return form;
}

/* When each form is chosen (lut_layout.h): automatically only for an NF4
 * weight uploaded for m = 1 whose k-split fills 3/4 of the SMs in one wave
 * at R 2048 or 1024 (28672 x 8192 NF4: 112 CTAs of R 2048, S 8; 4096 x
 * 4096 NF4: 64 of R 1024 x S 16, or on 128 SMs or more 128 of R 512, which
 * is not taken automatically: no faster than the tiles, v41); under QGEMV_CUDA_LAYOUT=lut
 * wherever n is a multiple of 1024 and k of the chunk (NF4 256, Q2_0 512);
 * never on a device without its 192 KB of shared memory a block. */
START_TEST(test_lut_forms) {
  qgemv_device_info info;
  CHECK_OK(qgemv_ctx_info(ctx, &info));
  const char *lut = lut_device ? "lut" : "tiles";
  ck_assert_str_eq(form_of(ctx, QGEMV_NF4, 28672, 8192, 1), 112 * 4 >= 3 * info.units ? lut : "tiles");
  ck_assert_str_eq(form_of(ctx, QGEMV_NF4, 4096, 4096, 1), 64 * 4 >= 3 * info.units ? lut : "tiles");
  ck_assert_str_eq(form_of(ctx, QGEMV_NF4, 28672, 8192, 0), "tiles");
  ck_assert_str_eq(form_of(ctx, QGEMV_NF4, 28672, 8192, 2), "tiles");
  /* Q2_0 keeps the tiles unless asked (slower there with bf16 x, v39) */
  ck_assert_str_eq(form_of(ctx, QGEMV_Q2_0, 28672, 8192, 1), "tiles");
  ck_assert_str_eq(form_of(lut_ctx, QGEMV_Q2_0, 1024, 1024, 1), lut);
  ck_assert_str_eq(form_of(lut_ctx, QGEMV_NF4, 1024, 1024, 8), lut);
  ck_assert_str_eq(form_of(lut_ctx, QGEMV_NF4, 1000, 1024, 1), "tiles");
  ck_assert_str_eq(form_of(lut_ctx, QGEMV_NF4, 1024, 1088, 1), "tiles");
  qgemv_weight *w = (qgemv_weight *)&info; /* anything: it must be cleared */
  void *data;
  float *scales;
  qgemv_weight_desc d = zero_desc(QGEMV_NF4, 1024, 1024, &data, &scales);
  const qgemv_status s = qgemv_weight_upload_for_m(ctx, &d, -1, &w);
  ck_assert_msg(s == QGEMV_ERR_INVALID_ARG && w == NULL, "max_m -1 gave %s", qgemv_status_str(s));
  ck_assert_msg(strstr(qgemv_last_error(), "max_m") != NULL, "message: %s", qgemv_last_error());
  free(data);
  free(scales);
  setenv("QGEMV_CUDA_LAYOUT", "tile", 1);
  qgemv_ctx *bad = NULL;
  const qgemv_status so = qgemv_open("cuda:0", &bad);
  unsetenv("QGEMV_CUDA_LAYOUT");
  ck_assert_msg(so == QGEMV_ERR_INVALID_ARG && strstr(qgemv_last_error(), "QGEMV_CUDA_LAYOUT=tile"),
                "QGEMV_CUDA_LAYOUT=tile gave %s: %s", qgemv_status_str(so), qgemv_last_error());
  if (so == QGEMV_OK) qgemv_close(bad);
}
END_TEST

/* A call on p (its weight, x, gamma) in an m = 1 form (LUT, share): y
 * against the oracle, a second run equal to the first, and each row of the
 * batch equal to m = 1 on that row (the forms run one pass a row). */
static void check_form_call(const problem *p, qgemv_dtype yt, const char *what, const char *format) {
  const int64_t n = p->hw.desc.n, k = p->hw.desc.k, m = p->m;
  tu_guarded all = run_guarded(p->w, p->x, p->g, yt, m, n);
  check_contract(p, yt, all.mem, what);
  tu_guarded again = run_guarded(p->w, p->x, p->g, yt, m, n);
  const size_t rb = (size_t)n * tu_dtype_size(yt);
  ck_assert_msg(memcmp(all.mem, again.mem, (size_t)m * rb) == 0, "%s %s %lldx%lld x=%s y=%s norm=%s: two runs differ",
                what, format, (long long)n, (long long)k, dt(p->xt), dt(yt),
                p->g ? dt(p->gt) : "off");
  for (int64_t r = 0; r < m; r++) {
    qgemv_tensor *xr = wrap_at(p->x, (size_t)(r * k) * tu_dtype_size(p->xt), p->xt, 1, k);
    tu_guarded one = run_guarded(p->w, xr, p->g, yt, 1, n);
    ck_assert_msg(memcmp(one.mem, all.mem + (size_t)r * rb, rb) == 0,
                  "%s %s %lldx%lld x=%s y=%s norm=%s: row %lld of m=%lld differs from m=1", what,
                  format, (long long)n, (long long)k, dt(p->xt), dt(yt), p->g ? dt(p->gt) : "off",
                  (long long)r, (long long)m);
    tu_guarded_free(&one);
    qgemv_tensor_free(xr);
  }
  tu_guarded_free(&all);
  tu_guarded_free(&again);
}

/* Mode `mode` (x dtype bit 0, y dtype bit 1, norm off / gamma f32 / gamma
 * bf16 above) on a fresh problem in the current context, which must put
 * the weight in `form`, checked by check_form_call. */
static void form_mode_case(int fi, int64_t n, int64_t k, int64_t m, int mode, uint64_t seed, dist_kind d,
                           const char *form) {
  const qgemv_dtype xt = (qgemv_dtype)(mode & 1), yt = (qgemv_dtype)((mode >> 1) & 1);
  const int norm = mode >> 2;
  problem p;
  problem_make(&p, seed, d, fi, n, k, m, xt, norm != 0,
               norm == 2 ? QGEMV_BF16 : QGEMV_F32);
  ck_assert_str_eq(qgemv_weight_form(p.w), form);
  check_form_call(&p, yt, form, tu_format(fi).name);
  problem_free(&p);
}

/* Every dtype and norm combination through the LUT form on shapes of every
 * unit size and several k-splits (on 132 SMs: R 512 for the first three;
 * 3072 x 8192 NF4 R 1024 S 32; 14336 x 4096 NF4 R 2048 S 16, Q2_0 R 1024
 * S 8; at those five every NF4 CTA sums one chunk, so NF4 takes the
 * kernels with the L2 prefetch (qgc_lut_l2pf); the last two give NF4 CTAs
 * two chunks, the kernels without it that 28672 x 8192 and 8192 x 28672
 * take: 3072 x 16384 R 1024 S 32, 18432 x 4096 R 2048 S 8); row r of a
 * batched call bit-identical to m = 1 on row r (one pass a row) and a
 * second run to the first. */
START_TEST(test_lut_combinations) {
  const int fi = _i;
  if (!lut_device) return;
  static const int64_t shapes[][3] = {{1024, 1024, 1}, {2048, 4096, 3}, {3072, 2560, 2},  {3072, 8192, 1},
                                      {14336, 4096, 1}, {3072, 16384, 1}, {18432, 4096, 1}};
  qgemv_ctx *const base = ctx;
  ctx = lut_ctx;
  int iter = 0;
  const int nshapes = (int)(sizeof shapes / sizeof shapes[0]), first_two_chunk = nshapes - 2;
  for (int si = 0; si < (quick ? 2 : nshapes); si++)
    for (int mode = 0; mode < 12; mode++, iter++) {
      /* the last two shapes are there for NF4's kernels without the
       * prefetch; x's dtype and the norm pick the kernel, y's only the
       * store: six modes (y's dtype x's) reach all six, and keep the
       * suite inside lut-lib-run.sh's limit (v42: all 12 modes of all
       * three formats at both shapes cut it at 540 s) */
      if (si >= first_two_chunk && (tu_format(fi).format != QGEMV_NF4 || ((mode ^ (mode >> 1)) & 1))) continue;
      form_mode_case(fi, shapes[si][0], shapes[si][1], shapes[si][2], mode, 900 + (uint64_t)iter,
                     (dist_kind)(iter % DIST_COUNT), "lut");
    }
  ctx = base;
}
END_TEST

/* The pattern cases (a large activation on the zero code; one repeated
 * code against all-positive x up to k = 65536) and the IEEE cases. */
START_TEST(test_lut_patterns) {
  const int fi = _i;
  if (!lut_device) return;
  qgemv_ctx *const base = ctx;
  ctx = lut_ctx;
  run_pattern(fi, 1024, 4096, 3, ADVERSARIAL);
  run_pattern(fi, 1024, quick ? 8192 : 65536, 1, CORRELATED);
  nonfinite_modes(fi, 1024, 4096, "lut");
  ctx = base;
}
END_TEST

/* ---- the share form ---- */

/* Whether the share form takes (f, n, k) automatically on this device
 * (share_layout.h's rule; x, scales and sums at k 4096 fit every device's
 * shared memory, so the limit passed is GB10's). */
static bool share_auto_here(qgemv_format f, int64_t n, int64_t k) {
  qgemv_device_info info;
  CHECK_OK(qgemv_ctx_info(ctx, &info));
  qgc_share_geom g;
  return qgc_share_choose(f, 64, n, k, info.units, 101376, 0, &g) && qgc_share_auto(&g);
}

/* When the share form is chosen: automatically for a weight uploaded for
 * m = 1 with at most 24 (NF4) or 16 (Q2_0) rows a CTA (on 132 SMs 1024 x
 * 4096, 8 rows a CTA, not 4096 x 4096, 32), never for another
 * max_m; under QGEMV_CUDA_LAYOUT=share wherever the shared memory holds x
 * (not NF4 at k = 65536: 288 KB), for any m. */
START_TEST(test_share_forms) {
  qgemv_device_info info;
  CHECK_OK(qgemv_ctx_info(ctx, &info));
  static const qgemv_format fs[2] = {QGEMV_NF4, QGEMV_Q2_0}; /* form_of's Q2_0 is g64 */
  for (int i = 0; i < 2; i++) {
    const qgemv_format f = fs[i];
    ck_assert_str_eq(form_of(ctx, f, 1024, 4096, 1), share_auto_here(f, 1024, 4096) ? "share" : "tiles");
    ck_assert_str_eq(form_of(ctx, f, 256, 4096, 1), share_auto_here(f, 256, 4096) ? "share" : "tiles");
    ck_assert_str_eq(form_of(ctx, f, 1024, 4096, 0), "tiles");
    ck_assert_str_eq(form_of(ctx, f, 1024, 4096, 8), "tiles");
    ck_assert_str_eq(form_of(share_ctx, f, 28672, 1024, 8), "share");
  }
  if (info.units == 132) {
    ck_assert(share_auto_here(QGEMV_NF4, 1024, 4096));
    ck_assert(!share_auto_here(QGEMV_NF4, 4096, 4096));
  }
  ck_assert_str_eq(form_of(share_ctx, QGEMV_NF4, 64, 65536, 1), "tiles");
  ck_assert_str_eq(form_of(lut_ctx, QGEMV_NF4, 1024, 4096, 1), lut_device ? "lut" : "tiles");
}
END_TEST

/* Every dtype and norm combination through the share form, on shapes of
 * every geometry (on 132 SMs: fewer rows than SMs; rows not a multiple of
 * the CTAs; one word a thread; several rounds and passes; k = 16384),
 * batched rows bit-identical to m = 1, a second run equal to the first;
 * at the automatic thread count, then at 512 threads everywhere. */
START_TEST(test_share_combinations) {
  const int fi = _i % qgemv_format_count();
  static const int64_t shapes[][3] = {{257, 1152, 2}, {33, 4224, 1}, {1024, 4096, 3}, {4096, 2048, 1}, {300, 16384, 2}};
  qgemv_ctx *const base = ctx;
  ctx = _i < qgemv_format_count() ? share_ctx : share512_ctx;
  int iter = 0;
  for (int si = 0; si < (quick ? 2 : (int)(sizeof shapes / sizeof shapes[0])); si++)
    for (int mode = 0; mode < 12; mode++, iter++)
      form_mode_case(fi, shapes[si][0], tu_whole_blocks(fi, shapes[si][1]), shapes[si][2], mode, 1900 + (uint64_t)iter,
                     (dist_kind)(iter % DIST_COUNT), "share");
  ctx = base;
}
END_TEST

/* The pattern, IEEE, misaligned and chain cases through the share form. */
START_TEST(test_share_patterns) {
  const int fi = _i;
  qgemv_ctx *const base = ctx;
  ctx = share_ctx;
  run_pattern(fi, 1024, 4096, 3, ADVERSARIAL);
  run_pattern(fi, 1024, 8192, 1, CORRELATED);
  nonfinite_modes(fi, 1024, 4096, "share");
  misaligned_case(fi);
  pdl_chain_case(fi);
  ctx = base;
}
END_TEST

/* ---- Q2_0's norm in two bf16 terms (kB2) ---- */

/* A Q2_0 weight uploaded for m = 1 with 3.5 tiles of 16 rows an SM or more
 * runs the norm with bf16 x and gamma as two bf16 terms (kB2, matvec_plan.h's
 * qgc_norm_b2); the same weight uploaded for any m, with gamma in A (kDG).
 * Each within the contract, its batched rows bit-identical to m = 1 on it,
 * a second run equal to the first; and the two uploads' bits differ
 * somewhere (the two modes sum in another order), which says that max_m
 * reached the plan. n % 16 = 5: the tail kernel runs beside. */
START_TEST(test_norm_b2_upload) {
  const int fi = _i;
  if (tu_format(fi).format != QGEMV_Q2_0) return;
  qgemv_device_info info;
  CHECK_OK(qgemv_ctx_info(ctx, &info));
  const int64_t n = 16 * ((7 * (int64_t)info.units + 1) / 2) + 5, k = tu_whole_blocks(fi, 1024), m = 3;
  problem p;
  problem_make(&p, 4200 + (uint64_t)fi, DIST_NORMAL, fi, n, k, m, QGEMV_BF16, true, QGEMV_BF16);
  qgemv_weight *any_m = p.w, *for_m1 = NULL;
  CHECK_OK(qgemv_weight_upload_for_m(ctx, &p.hw.desc, 1, &for_m1));
  ck_assert_str_eq(qgemv_weight_form(for_m1), "tiles");
  check_form_call(&p, QGEMV_F32, "tiles, gamma in A", tu_format(fi).name);
  p.w = for_m1;
  check_form_call(&p, QGEMV_F32, "tiles for m = 1, two terms", tu_format(fi).name);
  tu_guarded y1 = run_guarded(for_m1, p.x, p.g, QGEMV_F32, m, n), y0 = run_guarded(any_m, p.x, p.g, QGEMV_F32, m, n);
  ck_assert_msg(memcmp(y1.mem, y0.mem, (size_t)(m * n) * 4) != 0,
                "%s %lldx%lld: the weight uploaded for m = 1 gives the bits of the one for any m (kB2 not taken?)",
                tu_format(fi).name, (long long)n, (long long)k);
  tu_guarded_free(&y1);
  tu_guarded_free(&y0);
  p.w = any_m;
  qgemv_weight_free(for_m1);
  problem_free(&p);
}
END_TEST

START_TEST(test_device_facts) {
  qgemv_device_info info;
  CHECK_OK(qgemv_ctx_info(ctx, &info));
  ck_assert_str_eq(info.backend, "cuda");
  ck_assert_msg(info.name[0] != '\0', "no device name");
  ck_assert_int_ge(info.compute_major, 8);
  ck_assert_int_gt(info.units, 0);
  ck_assert_msg(info.memory_bytes > 0 && info.llc_bytes > 0, "memory or L2 size missing");
  ck_assert_msg(strncmp(info.locality, "PCI ", 4) == 0, "locality '%s'", info.locality);
  printf("cuda device: %s, cc %d.%d, %d SMs, %.1f GiB, L2 %.0f MB, peak %.0f GB/s, %s\n", info.name,
         info.compute_major, info.compute_minor, info.units, (double)info.memory_bytes / (1 << 30),
         (double)info.llc_bytes / 1e6, info.peak_bandwidth_gbs, info.locality);
  double gbs = 0.0;
  CHECK_OK(qgemv_measure_read_bandwidth(ctx, quick ? ((size_t)64 << 20) : 0, &gbs));
  ck_assert_msg(gbs > 1.0, "read bandwidth %.3g GB/s", gbs);
  printf("cuda read bandwidth: %.0f GB/s\n", gbs);
  double sec = 0.0;
  qgemv_status s = qgemv_measure_dense_bf16(ctx, 1024, 1024, 1, 2, 0.0, &sec);
  ck_assert_msg(s == QGEMV_OK || s == QGEMV_ERR_UNSUPPORTED, "dense baseline: %s: %s", qgemv_status_str(s),
                qgemv_last_error());
  if (s == QGEMV_OK) ck_assert_msg(sec > 0.0, "dense baseline took no time");
  const char *library = qgemv_ctx_dense_library(ctx);
  ck_assert_msg(library && strcmp(library, "cuBLAS") == 0, "dense library %s", library ? library : qgemv_last_error());
}
END_TEST

int main(void) {
  int devices = 0;
  if (qgemv_backend_probe("cuda", &devices) != QGEMV_OK) {
    printf("SKIP: no usable CUDA device: %s\n", qgemv_last_error());
    return TU_SKIP;
  }
  quick = tu_quick();
  unsetenv("QGEMV_CUDA_LAYOUT"); /* ctx: the automatic choice */
  if (qgemv_open("cuda:0", &ctx) != QGEMV_OK) {
    fprintf(stderr, "cannot open cuda:0: %s\n", qgemv_last_error());
    return EXIT_FAILURE;
  }
  setenv("QGEMV_CUDA_LAYOUT", "lut", 1);
  const qgemv_status lut_open = qgemv_open("cuda:0", &lut_ctx);
  unsetenv("QGEMV_CUDA_LAYOUT");
  if (lut_open != QGEMV_OK) {
    fprintf(stderr, "cannot open cuda:0 with QGEMV_CUDA_LAYOUT=lut: %s\n", qgemv_last_error());
    return EXIT_FAILURE;
  }
  setenv("QGEMV_CUDA_LAYOUT", "share", 1);
  const qgemv_status share_open = qgemv_open("cuda:0", &share_ctx);
  unsetenv("QGEMV_CUDA_LAYOUT");
  if (share_open != QGEMV_OK) {
    fprintf(stderr, "cannot open cuda:0 with QGEMV_CUDA_LAYOUT=share: %s\n", qgemv_last_error());
    return EXIT_FAILURE;
  }
  /* the same at 512 threads */
  setenv("QGEMV_CUDA_LAYOUT", "share", 1);
  setenv("QGEMV_CUDA_PLAN", "st=512", 1);
  const qgemv_status share512_open = qgemv_open("cuda:0", &share512_ctx);
  unsetenv("QGEMV_CUDA_LAYOUT");
  unsetenv("QGEMV_CUDA_PLAN");
  if (share512_open != QGEMV_OK) {
    fprintf(stderr, "cannot open cuda:0 with QGEMV_CUDA_LAYOUT=share QGEMV_CUDA_PLAN=st=512: %s\n",
            qgemv_last_error());
    return EXIT_FAILURE;
  }
  qgemv_device_info info;
  if (qgemv_ctx_info(ctx, &info) != QGEMV_OK) return EXIT_FAILURE;
  /* Hopper (9.x) and datacenter Blackwell (10.x) allow 227 KB a block;
   * GB10 (12.1) 99 KB: the LUT's cases run only where it can be chosen */
  lut_device = info.compute_major == 9 || info.compute_major == 10;
  if (!lut_device) printf("cuda device cc %d.%d: no lookup-table form here; its cases check the tiles are kept\n",
                          info.compute_major, info.compute_minor);
  Suite *s = suite_create("cuda_backend");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 1200);
  tcase_add_test(tc, test_device_facts);
  tcase_add_loop_test(tc, test_combinations, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_batched_bit_identical, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_large_shapes, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_misaligned_inputs, 0, qgemv_format_count());
  tcase_add_test(tc, test_user_stream);
  tcase_add_loop_test(tc, test_adversarial_rows, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_correlated_rows, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_pdl_chain, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_wide_kernel, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_batched_wide_plan, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_fill_rows, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_nonfinite_x, 0, qgemv_format_count());
  tcase_add_loop_test(tc, test_norm_b2_upload, 0, qgemv_format_count());
  tcase_add_test(tc, test_no_memory);
  suite_add_tcase(s, tc);
  /* its own case, so that CK_RUN_CASE=lut runs it alone (the sanitizers) */
  TCase *tl = tcase_create("lut");
  tcase_set_timeout(tl, 1200);
  tcase_add_test(tl, test_lut_forms);
  tcase_add_loop_test(tl, test_lut_combinations, 0, qgemv_format_count());
  tcase_add_loop_test(tl, test_lut_patterns, 0, qgemv_format_count());
  suite_add_tcase(s, tl);
  /* likewise CK_RUN_CASE=share */
  TCase *ts = tcase_create("share");
  tcase_set_timeout(ts, 1200);
  tcase_add_test(ts, test_share_forms);
  tcase_add_loop_test(ts, test_share_combinations, 0, 2 * qgemv_format_count());
  tcase_add_loop_test(ts, test_share_patterns, 0, qgemv_format_count());
  suite_add_tcase(s, ts);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK); /* CUDA does not survive fork */
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  qgemv_close(share512_ctx);
  qgemv_close(share_ctx);
  qgemv_close(lut_ctx);
  qgemv_close(ctx);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
