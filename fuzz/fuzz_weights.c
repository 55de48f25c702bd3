/*
 * fuzz_weights: bytes -> a weight descriptor -> validation and upload on a
 * "cpu" context (every CPU level built and usable here) -> matvec with
 * fuzzed activations -> free.
 *
 * Checked on every input:
 * - a shape the size rules reject is INVALID_ARG at upload, before any byte
 *   of the (one-byte) buffers is read;
 * - a non-finite scale is BAD_DATA naming the first bad row and block;
 * - the matvec writes every element of y (two runs into differently
 *   poisoned buffers agree bit for bit) and nothing outside it (buffers
 *   are exact-size mallocs, so ASan sees any overrun);
 * - row r of a batched call is bit-identical to an m = 1 call on row r
 *   (a NaN may differ in payload and sign: see below);
 * - with tame values (no overflow or underflow possible in f32) y meets
 *   the accuracy contract against qgemv_reference_matvec.
 *
 * Input: a header (flags, sizes, level, eps), optionally a raw shape, then
 * the data, scales, x and gamma bytes.
 */
#include <math.h>

#include "fuzz_common.h"

enum { MAX_CTX = 8, MAX_N = 64, MAX_K = 1024, MAX_BYTES = 1 << 14 };

static qgemv_ctx *ctxs[MAX_CTX];
static int nctx;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  for (int i = 0; i < qgemv_cpu_level_count() && nctx < MAX_CTX - 1; i++) {
    qgemv_cpu_level_info level;
    if (qgemv_cpu_level_get(i, &level) != QGEMV_OK || !level.supported) continue;
    setenv("QGEMV_CPU_ISA", level.name, 1);
    if (qgemv_open("cpu", &ctxs[nctx]) == QGEMV_OK) nctx++;
  }
  unsetenv("QGEMV_CPU_ISA");
  if (qgemv_open("cpu", &ctxs[nctx]) == QGEMV_OK) nctx++;
  if (nctx == 0) abort();
  return 0;
}

/* A scale that cannot overflow or underflow f32 products here: 0, or
 * +-(1 + m/1024) * 2^e with e in [-20, 20]. */
static float tame_scale(uint16_t u) {
  if ((u & 0x3f) == 0) return 0.0f;
  float v = ldexpf(1.0f + (float)(u >> 6 & 0x3ff) / 1024.0f, (int)(u & 0x3f) % 41 - 20);
  return (u & 0x8000) ? -v : v;
}

/* An activation or gamma value: tame ones are multiples of 1/16 in
 * [-8, 8), exact in bf16; raw ones are any bits, NaN and inf included. */
static void fill_values(fz *f, qgemv_dtype t, bool tame, void *dst, size_t count) {
  for (size_t i = 0; i < count; i++) {
    float v = tame ? (float)(int8_t)fz_u8(f) / 16.0f : 0.0f;
    if (t == QGEMV_F32)
      ((float *)dst)[i] = tame ? v : fz_bits_f32(fz_u32(f));
    else
      ((uint16_t *)dst)[i] = tame ? qgemv_f32_to_bf16(v) : fz_u16(f);
  }
}

static size_t esize(qgemv_dtype t) { return t == QGEMV_F32 ? 4 : 2; }

static double elem(qgemv_dtype t, const void *p, size_t i) {
  return t == QGEMV_F32 ? (double)((const float *)p)[i] : (double)qgemv_bf16_to_f32(((const uint16_t *)p)[i]);
}

static unsigned long long bits_of(const void *p, size_t size) {
  unsigned long long u = 0;
  memcpy(&u, p, size); /* little-endian */
  return u;
}

static const char *level_of(const qgemv_ctx *ctx) {
  static qgemv_device_info info;
  return qgemv_ctx_info(ctx, &info) == QGEMV_OK ? info.isa : "?";
}

/* The shape must be refused without touching the buffers. */
static void expect_shape_refused(qgemv_ctx *ctx, qgemv_format fmt, int64_t n, int64_t k, int32_t g) {
  unsigned char *data = fz_alloc(1);
  float *scales = fz_alloc(sizeof(float));
  qgemv_weight_desc d = {.format = fmt, .n = n, .k = k, .group = g, .data = data, .scales = scales};
  qgemv_weight *w = (qgemv_weight *)&w;
  qgemv_status s = qgemv_weight_upload(ctx, &d, &w);
  FZ_CHECK(s == QGEMV_ERR_INVALID_ARG && w == NULL, "shape fmt=%d n=%lld k=%lld g=%d: size 0 but upload gave %s",
           (int)fmt, (long long)n, (long long)k, (int)g, qgemv_status_str(s));
  d.scales = NULL;
  s = qgemv_weight_upload(ctx, &d, &w);
  FZ_CHECK(s == QGEMV_ERR_INVALID_ARG, "shape refused with scales, not without: %s", qgemv_status_str(s));
  free(data);
  free(scales);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  fz f = {bytes, size};
  uint8_t flags = fz_u8(&f), nsel = fz_u8(&f), ksel = fz_u8(&f), msel = fz_u8(&f), csel = fz_u8(&f),
          esel = fz_u8(&f);
  bool tame = flags & 0x80;
  qgemv_ctx *ctx = ctxs[csel % nctx];
  qgemv_format fmt = (flags & 1) ? QGEMV_Q2_0 : QGEMV_NF4;
  int32_t g = fmt == QGEMV_Q2_0 && (flags & 2) ? 128 : 64;
  int64_t n = 1 + nsel % 8, k = (int64_t)(1 + ksel % (g == 64 ? 4 : 2)) * g, m = 1 + msel % 3; /* k <= 256 */
  if (flags & 4) { /* a raw shape, from any bits */
    fmt = (qgemv_format)(int8_t)fz_u8(&f);
    n = (int64_t)fz_u64(&f);
    k = (int64_t)fz_u64(&f);
    g = (int32_t)fz_u32(&f);
    size_t b = qgemv_data_bytes(fmt, n, k, g);
    if (b == 0) {
      expect_shape_refused(ctx, fmt, n, k, g);
      return 0;
    }
    if (b > MAX_BYTES || n > MAX_N || k > MAX_K) return 0; /* valid, too big to afford */
    g = fmt == QGEMV_NF4 ? 64 : g;
  }
  const size_t data_bytes = qgemv_data_bytes(fmt, n, k, g), nscales = qgemv_scale_count(fmt, n, k, g);
  const int64_t per_row = k / g;
  FZ_CHECK(data_bytes > 0, "a valid shape has no size");

  /* the weight, and the first non-finite scale in row-major order */
  uint8_t *data = fz_alloc(data_bytes);
  float *scales = nscales ? fz_alloc(nscales * sizeof(float)) : NULL;
  fz_bytes(&f, data, data_bytes);
  int64_t bad = -1;
  if (fmt == QGEMV_NF4) {
    for (size_t i = 0; i < nscales; i++) {
      scales[i] = tame ? tame_scale(fz_u16(&f)) : fz_bits_f32(fz_u32(&f));
      if (bad < 0 && !isfinite(scales[i])) bad = (int64_t)i;
    }
  } else {
    const size_t bb = 2 + (size_t)g / 4;
    for (int64_t i = 0; i < n * per_row; i++) {
      uint8_t *hi = data + (size_t)i * bb + 1;
      if (tame && (*hi & 0x7c) == 0x7c) *hi &= 0xfb; /* exponent 31 -> 30 */
      if (bad < 0 && (*hi & 0x7c) == 0x7c) bad = i;
    }
  }
  qgemv_weight_desc desc = {.format = fmt, .n = n, .k = k, .group = g, .data = data, .scales = scales};
  qgemv_weight *w = NULL;
  qgemv_status s = qgemv_weight_upload(ctx, &desc, &w);
  if (bad >= 0) {
    char where[64];
    snprintf(where, sizeof where, "row %lld block %lld", (long long)(bad / per_row), (long long)(bad % per_row));
    FZ_CHECK(s == QGEMV_ERR_BAD_DATA && w == NULL, "a non-finite scale at %s: upload gave %s", where,
             qgemv_status_str(s));
    FZ_CHECK(strstr(qgemv_last_error(), where) != NULL, "the refusal does not name %s", where);
    free(data);
    free(scales);
    return 0;
  }
  FZ_CHECK(s == QGEMV_OK, "a valid weight fmt=%d n=%lld k=%lld g=%d was refused: %s", (int)fmt, (long long)n,
           (long long)k, (int)g, qgemv_status_str(s));

  /* activations, gamma, eps */
  const qgemv_dtype xt = (flags & 8) ? QGEMV_BF16 : QGEMV_F32, yt = (flags & 16) ? QGEMV_BF16 : QGEMV_F32,
                    gt = (flags & 64) ? QGEMV_BF16 : QGEMV_F32;
  const bool use_norm = flags & 32;
  static const float eps_table[] = {1e-5f, 1e-6f, 0.5f, 1.0f};
  const float eps = esel < 224 ? eps_table[esel % 4] : fz_bits_f32(fz_u32(&f));
  const bool eps_ok = eps > 0.0f && isfinite(eps);
  void *x = fz_alloc((size_t)(m * k) * esize(xt)), *gamma = use_norm ? fz_alloc((size_t)k * esize(gt)) : NULL;
  fill_values(&f, xt, tame, x, (size_t)(m * k));
  if (use_norm) fill_values(&f, gt, tame, gamma, (size_t)k);
  const size_t ybytes = (size_t)(m * n) * esize(yt);
  uint8_t *ya = fz_alloc(ybytes), *yb = fz_alloc(ybytes);
  memset(ya, 0xa5, ybytes);
  memset(yb, 0x5a, ybytes);
  qgemv_tensor *xtn = NULL, *ytn_a = NULL, *ytn_b = NULL, *gtn = NULL;
  FZ_CHECK(qgemv_tensor_wrap(ctx, xt, m, k, x, &xtn) == QGEMV_OK, "wrap x");
  FZ_CHECK(qgemv_tensor_wrap(ctx, yt, m, n, ya, &ytn_a) == QGEMV_OK, "wrap y");
  FZ_CHECK(qgemv_tensor_wrap(ctx, yt, m, n, yb, &ytn_b) == QGEMV_OK, "wrap y");
  if (use_norm) FZ_CHECK(qgemv_tensor_wrap(ctx, gt, 1, k, gamma, &gtn) == QGEMV_OK, "wrap gamma");
  qgemv_rmsnorm norm = {.gamma = gtn, .eps = eps};
  const qgemv_rmsnorm *np = use_norm ? &norm : NULL;

  s = qgemv_matvec(ctx, w, xtn, ytn_a, np);
  if (use_norm && !eps_ok) {
    FZ_CHECK(s == QGEMV_ERR_INVALID_ARG, "eps=%g accepted: %s", (double)eps, qgemv_status_str(s));
    for (size_t i = 0; i < ybytes; i++) FZ_CHECK(ya[i] == 0xa5, "a refused matvec wrote y byte %zu", i);
  } else {
    FZ_CHECK(s == QGEMV_OK, "matvec: %s", qgemv_status_str(s));
    FZ_CHECK(qgemv_matvec(ctx, w, xtn, ytn_b, np) == QGEMV_OK, "second matvec");
    FZ_CHECK(memcmp(ya, yb, ybytes) == 0, "two runs differ: y not fully written, or not deterministic");

    /* batched rows = single rows */
    for (int64_t r = 0; m > 1 && r < m; r++) {
      qgemv_tensor *x1 = NULL, *y1 = NULL;
      uint8_t *y1b = fz_alloc((size_t)n * esize(yt));
      FZ_CHECK(qgemv_tensor_wrap(ctx, xt, 1, k, (uint8_t *)x + (size_t)(r * k) * esize(xt), &x1) == QGEMV_OK, "x1");
      FZ_CHECK(qgemv_tensor_wrap(ctx, yt, 1, n, y1b, &y1) == QGEMV_OK, "y1");
      FZ_CHECK(qgemv_matvec(ctx, w, x1, y1, np) == QGEMV_OK, "row matvec");
      for (int64_t i = 0; i < n; i++) {
        const uint8_t *pb = ya + (size_t)(r * n + i) * esize(yt), *p1 = y1b + (size_t)i * esize(yt);
        /* NaN is NaN: which input NaN's payload (and sign) survives depends
         * on operand order, e.g. a + b against b + a, which gives the same
         * bits for every other value */
        FZ_CHECK(memcmp(pb, p1, esize(yt)) == 0 || (isnan(elem(yt, pb, 0)) && isnan(elem(yt, p1, 0))),
                 "y[%lld][%lld] of a batch of %lld is %.9g (0x%0*llx), computed alone %.9g (0x%0*llx); level %s, "
                 "fmt %d g %d n %lld k %lld, x %s, y %s, norm %d",
                 (long long)r, (long long)i, (long long)m, elem(yt, pb, 0), (int)esize(yt) * 2, bits_of(pb, esize(yt)),
                 elem(yt, p1, 0), (int)esize(yt) * 2, bits_of(p1, esize(yt)), level_of(ctx), (int)fmt, (int)g,
                 (long long)n, (long long)k, xt == QGEMV_F32 ? "f32" : "bf16", yt == QGEMV_F32 ? "f32" : "bf16",
                 (int)use_norm);
      }
      qgemv_tensor_free(x1);
      qgemv_tensor_free(y1);
      free(y1b);
    }

    /* the accuracy contract, where f32 cannot overflow or underflow */
    if (tame) {
      double *ref = fz_alloc((size_t)(m * n) * sizeof(double)), *bound = fz_alloc((size_t)(m * n) * sizeof(double));
      s = qgemv_reference_matvec(&desc, m, xt, x, gt, gamma, eps, ref, bound);
      FZ_CHECK(s == QGEMV_OK, "reference_matvec: %s", qgemv_status_str(s));
      for (int64_t i = 0; i < m * n; i++) {
        double v = elem(yt, ya, (size_t)i), allowed = 1e-3 * bound[i] + (yt == QGEMV_BF16 ? ldexp(fabs(ref[i]), -8) : 0);
        FZ_CHECK(isnan(ref[i]) ? isnan(v) : fabs(v - ref[i]) <= allowed,
                 "y[%lld] = %.9g, oracle %.9g, allowed +-%.3g (fmt %d n %lld k %lld m %lld x %d y %d norm %d)",
                 (long long)i, v, ref[i], allowed, (int)fmt, (long long)n, (long long)k, (long long)m, (int)xt,
                 (int)yt, (int)use_norm);
      }
      free(ref);
      free(bound);
    }
  }
  qgemv_tensor_free(xtn);
  qgemv_tensor_free(ytn_a);
  qgemv_tensor_free(ytn_b);
  qgemv_tensor_free(gtn);
  qgemv_weight_free(w);
  free(data);
  free(scales);
  free(x);
  free(gamma);
  free(ya);
  free(yb);
  return 0;
}
