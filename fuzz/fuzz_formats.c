/*
 * fuzz_formats: the host-side format functions, no context.
 *
 * The first byte picks one of:
 * 0 qgemv_quantize of fuzzed weights (NaN and inf included): a non-finite
 *   weight, or for Q2_0 one of |w| >= 65520 (the block's fp16 scale would
 *   be infinite), is BAD_DATA naming its row and column, nothing written;
 *   otherwise every block follows DESIGN.md s.4 (scale = max|w|, nearest
 *   code with ties to the lower one; Q2_0 d = fp16(max|w|), code =
 *   clamp(roundf(w/max) + 1, 0, 3)), and dequantize gives the exact values.
 * 1 qgemv_dequantize of any bytes: the first non-finite scale is BAD_DATA
 *   naming it, else every value is LUT[code] * scale or (code - 1) * d.
 * 2 qgemv_reference_matvec of any bytes: bit-identical to the same double
 *   arithmetic done here, the same refusals, outputs untouched on error.
 * 3 the four scalar conversions against definitions by value (nearest,
 *   ties to even, computed in double), and their round trips.
 * 4 qgemv_data_bytes / qgemv_scale_count of any shape against the size
 *   rules computed in 128-bit arithmetic.
 */
#include <math.h>

#include "fuzz_common.h"

static const float LUT[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f, -0.28444138169288635f,
    -0.18477343022823334f, -0.09105003625154495f, 0.0f, 0.07958029955625534f, 0.16093020141124725f,
    0.24611230194568634f, 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
    0.7229568362236023f, 1.0f,
};

/* ---- scalar conversions by value ----------------------------------------- */

static double f16_value(uint16_t h) {
  int e = h >> 10 & 0x1f, m = h & 0x3ff;
  double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? NAN : s * INFINITY;
  return s * (e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25));
}

/* For rounding, the pattern after the largest finite value stands for the
 * next power of two, not infinity. */
static double f16_round_value(uint16_t h) { return (h & 0x7fff) == 0x7c00 ? 65536.0 : fabs(f16_value(h)); }

static double bf16_round_value(uint16_t h) {
  return (h & 0x7fff) == 0x7f80 ? ldexp(1.0, 128) : fabs((double)qgemv_bf16_to_f32(h));
}

/* Nearest of the magnitude patterns lo and lo + 1 to |v|, ties to even. */
static uint16_t pick(double a, uint16_t lo, double (*value)(uint16_t)) {
  double dlo = a - value(lo), dhi = value((uint16_t)(lo + 1)) - a;
  if (dlo < dhi || (dlo == dhi && (lo & 1) == 0)) return lo;
  return (uint16_t)(lo + 1);
}

static void check_conversions(fz *f) {
  uint32_t u = fz_u32(f);
  float v = fz_bits_f32(u);
  uint16_t h = (uint16_t)u, sign16 = (u >> 31) ? 0x8000 : 0;

  /* f32 -> bf16 */
  uint16_t b = qgemv_f32_to_bf16(v);
  if (isnan(v)) {
    FZ_CHECK(isnan(qgemv_bf16_to_f32(b)) && (b & 0x8000) == sign16, "bf16(NaN 0x%08x) = 0x%04x", u, b);
  } else {
    uint16_t lo = (uint16_t)(u >> 16 & 0x7fff); /* truncation: at or below |v| */
    uint16_t want = (uint16_t)(sign16 | (lo == 0x7f80 ? lo : pick(fabs((double)v), lo, bf16_round_value)));
    FZ_CHECK(b == want, "bf16(0x%08x) = 0x%04x, expected 0x%04x", u, b, want);
  }
  /* f32 -> f16: the largest magnitude pattern at or below |v|, by search */
  uint16_t r = qgemv_f32_to_f16(v);
  if (isnan(v)) {
    FZ_CHECK((r & 0x7c00) == 0x7c00 && (r & 0x3ff) && (r & 0x8000) == sign16, "f16(NaN 0x%08x) = 0x%04x", u, r);
  } else {
    double a = fabs((double)v);
    uint16_t want;
    if (a >= 65536.0) {
      want = 0x7c00;
    } else {
      uint16_t lo = 0, hi = 0x7c00; /* value(lo) <= a < value(hi) */
      while (hi - lo > 1) {
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (f16_value(mid) <= a) lo = mid; else hi = mid;
      }
      want = pick(a, lo, f16_round_value);
    }
    want = (uint16_t)(want | sign16);
    FZ_CHECK(r == want, "f16(0x%08x = %.9g) = 0x%04x, expected 0x%04x", u, (double)v, r, want);
  }
  /* f16 -> f32 is exact; f16 round trip */
  float fh = qgemv_f16_to_f32(h);
  double exact = f16_value(h);
  FZ_CHECK(isnan(exact) ? isnan(fh) : (double)fh == exact && signbit(fh) == !!(h & 0x8000),
           "f32(f16 0x%04x) = %.9g, expected %.9g", h, (double)fh, exact);
  if (!isnan(exact)) FZ_CHECK(qgemv_f32_to_f16(fh) == h, "f16 0x%04x does not round-trip", h);
  /* bf16 -> f32 is the upper half; round trip */
  float fb = qgemv_bf16_to_f32(h);
  FZ_CHECK(fz_f32_bits(fb) == (uint32_t)h << 16, "f32(bf16 0x%04x) = 0x%08x", h, fz_f32_bits(fb));
  if (!isnan(fb)) FZ_CHECK(qgemv_f32_to_bf16(fb) == h, "bf16 0x%04x does not round-trip", h);
}

/* ---- sizes ---------------------------------------------------------------- */

static void check_sizes(fz *f) {
  qgemv_format fmt = (qgemv_format)(int8_t)fz_u8(f);
  uint8_t how = fz_u8(f);
  int64_t n = (int64_t)fz_u64(f), k = (int64_t)fz_u64(f);
  int32_t g = (int32_t)fz_u32(f);
  if (how & 1) n >>= how >> 1 & 63; /* also small and mid-sized values */
  if (how & 2) k = (k >> (how >> 2 & 63)) & ~(int64_t)63;
  if (how & 4) g = (how & 8) ? 128 : 64;
  __int128 bytes = 0, scales = 0;
  bool valid = (fmt == QGEMV_NF4 || fmt == QGEMV_Q2_0) && n > 0 && k > 0;
  int32_t eg = fmt == QGEMV_NF4 ? 64 : g;
  if (valid) valid = fmt == QGEMV_NF4 ? (g == 0 || g == 64) : (g == 64 || g == 128);
  if (valid) valid = k % eg == 0;
  if (valid) {
    __int128 blocks = (__int128)n * (k / eg);
    bytes = blocks * (fmt == QGEMV_NF4 ? eg / 2 : 2 + eg / 4);
    scales = fmt == QGEMV_NF4 ? blocks : 0;
    valid = blocks <= INT64_MAX && bytes <= INT64_MAX;
  }
  size_t got = qgemv_data_bytes(fmt, n, k, g), gots = qgemv_scale_count(fmt, n, k, g);
  FZ_CHECK(got == (valid ? (size_t)bytes : 0) && gots == (valid ? (size_t)scales : 0),
           "sizes of fmt=%d n=%lld k=%lld g=%d: %zu bytes %zu scales, expected %s %llu %llu", (int)fmt, (long long)n,
           (long long)k, (int)g, got, gots, valid ? "valid" : "invalid", (unsigned long long)bytes,
           (unsigned long long)scales);
  if (!valid) FZ_CHECK(qgemv_last_error()[0] != '\0', "an invalid shape without a message");
}

/* ---- a small fuzzed descriptor ------------------------------------------- */

typedef struct small_desc {
  qgemv_weight_desc d;
  uint8_t *data;
  float *scales;
  int64_t bad; /* first non-finite block in row-major order, or -1 */
} small_desc;

static void make_desc(fz *f, small_desc *s) {
  uint8_t b = fz_u8(f);
  qgemv_format fmt = (b & 1) ? QGEMV_Q2_0 : QGEMV_NF4;
  int32_t g = fmt == QGEMV_Q2_0 && (b & 2) ? 128 : 64;
  int64_t n = 1 + (b >> 2 & 3), k = (int64_t)(1 + (b >> 4 & 3)) * g;
  size_t bytes = qgemv_data_bytes(fmt, n, k, g), ns = qgemv_scale_count(fmt, n, k, g);
  s->data = fz_alloc(bytes);
  s->scales = ns ? fz_alloc(ns * sizeof(float)) : NULL;
  fz_bytes(f, s->data, bytes);
  s->bad = -1;
  for (size_t i = 0; i < ns; i++) {
    s->scales[i] = (b & 0x40) ? (float)(int16_t)fz_u16(f) / 64.0f : fz_bits_f32(fz_u32(f));
    if (s->bad < 0 && !isfinite(s->scales[i])) s->bad = (int64_t)i;
  }
  for (int64_t i = 0; fmt == QGEMV_Q2_0 && i < n * (k / g); i++) {
    uint8_t *hi = s->data + (size_t)i * (2 + (size_t)g / 4) + 1;
    if ((b & 0x40) && (*hi & 0x7c) == 0x7c) *hi &= 0xfb;
    if (s->bad < 0 && (*hi & 0x7c) == 0x7c) s->bad = i;
  }
  s->d = (qgemv_weight_desc){.format = fmt, .n = n, .k = k, .group = g, .data = s->data, .scales = s->scales};
}

static void free_desc(small_desc *s) {
  free(s->data);
  free(s->scales);
}

static void expect_bad(qgemv_status st, const small_desc *s, const char *call) {
  char where[64];
  int64_t per_row = s->d.k / s->d.group;
  snprintf(where, sizeof where, "row %lld block %lld", (long long)(s->bad / per_row), (long long)(s->bad % per_row));
  FZ_CHECK(st == QGEMV_ERR_BAD_DATA && strstr(qgemv_last_error(), where), "%s: a non-finite scale at %s gave %s",
           call, where, qgemv_status_str(st));
}

/* Element j of row r, from the format text. */
static double weight_at(const qgemv_weight_desc *d, int64_t r, int64_t j) {
  if (d->format == QGEMV_NF4) {
    uint8_t byte = ((const uint8_t *)d->data)[(size_t)(r * d->k + j) / 2];
    int code = (j & 1) ? byte >> 4 : byte & 15;
    return (double)LUT[code] * (double)d->scales[(size_t)(r * (d->k / 64) + j / 64)];
  }
  const uint8_t *blk = (const uint8_t *)d->data + (size_t)(r * (d->k / d->group) + j / d->group) * (2 + d->group / 4);
  int jj = (int)(j % d->group), code = blk[2 + jj / 4] >> (2 * (jj % 4)) & 3;
  return (double)(code - 1) * f16_value((uint16_t)(blk[0] | blk[1] << 8));
}

static void check_dequantize(fz *f) {
  small_desc s;
  make_desc(f, &s);
  size_t count = (size_t)(s.d.n * s.d.k);
  float *w = fz_alloc(count * sizeof(float));
  memset(w, 0x5a, count * sizeof(float));
  qgemv_status st = qgemv_dequantize(&s.d, w);
  if (s.bad >= 0) {
    expect_bad(st, &s, "dequantize");
    for (size_t i = 0; i < count * sizeof(float); i++) FZ_CHECK(((uint8_t *)w)[i] == 0x5a, "refused, yet wrote w");
  } else {
    FZ_CHECK(st == QGEMV_OK, "dequantize: %s", qgemv_status_str(st));
    for (int64_t r = 0; r < s.d.n; r++)
      for (int64_t j = 0; j < s.d.k; j++) {
        float want = (float)weight_at(&s.d, r, j), got = w[r * s.d.k + j];
        FZ_CHECK(got == want || (isnan(got) && isnan(want)), "dequantize [%lld, %lld] = %.9g, expected %.9g",
                 (long long)r, (long long)j, (double)got, (double)want);
      }
  }
  free(w);
  free_desc(&s);
}

/* ---- quantize -------------------------------------------------------------- */

static void check_quantize(fz *f) {
  uint8_t b = fz_u8(f);
  qgemv_format fmt = (b & 1) ? QGEMV_Q2_0 : QGEMV_NF4;
  int32_t g = fmt == QGEMV_Q2_0 && (b & 2) ? 128 : 64;
  int64_t n = 1 + (b >> 2 & 3), k = (int64_t)(1 + (b >> 4 & 3)) * g;
  size_t count = (size_t)(n * k), bytes = qgemv_data_bytes(fmt, n, k, g), ns = qgemv_scale_count(fmt, n, k, g);
  float *w = fz_alloc(count * sizeof(float));
  int64_t bad = -1;
  for (size_t i = 0; i < count; i++) {
    uint32_t u = fz_u32(f);
    /* mostly ordinary magnitudes, so that blocks are not all extremes */
    w[i] = (b & 0x40) ? fz_bits_f32(u) : (float)(int32_t)u * ldexpf(1.0f, (int)(b >> 7) * 8 - 30);
    if (bad < 0 && (!isfinite(w[i]) || (fmt == QGEMV_Q2_0 && fabsf(w[i]) >= 65520.0f))) bad = (int64_t)i;
  }
  uint8_t *data = fz_alloc(bytes);
  float *scales = ns ? fz_alloc(ns * sizeof(float)) : NULL;
  memset(data, 0x5a, bytes);
  if (scales) memset(scales, 0x5a, ns * sizeof(float));
  qgemv_status st = qgemv_quantize(fmt, n, k, g, w, data, scales);
  if (bad >= 0) {
    char where[64];
    snprintf(where, sizeof where, "row %lld column %lld", (long long)(bad / k), (long long)(bad % k));
    FZ_CHECK(st == QGEMV_ERR_BAD_DATA && strstr(qgemv_last_error(), where), "a non-finite weight at %s gave %s",
             where, qgemv_status_str(st));
    for (size_t i = 0; i < bytes; i++) FZ_CHECK(data[i] == 0x5a, "refused, yet wrote data");
    for (size_t i = 0; i < ns * sizeof(float); i++) FZ_CHECK(((uint8_t *)scales)[i] == 0x5a, "refused, yet wrote scales");
    goto out;
  }
  FZ_CHECK(st == QGEMV_OK, "quantize of finite weights: %s", qgemv_status_str(st));
  qgemv_weight_desc d = {.format = fmt, .n = n, .k = k, .group = g, .data = data, .scales = scales};
  for (int64_t r = 0; r < n; r++)
    for (int64_t blk = 0; blk < k / g; blk++) {
      const float *src = w + r * k + blk * g;
      float amax = 0.0f;
      for (int j = 0; j < g; j++) amax = fmaxf(amax, fabsf(src[j]));
      for (int j = 0; j < g; j++) {
        int64_t col = blk * g + j;
        int code;
        if (fmt == QGEMV_NF4) {
          const float scale = scales[r * (k / 64) + blk];
          FZ_CHECK(fz_f32_bits(scale) == fz_f32_bits(amax), "NF4 scale of row %lld block %lld is %.9g, not max|w| %.9g",
                   (long long)r, (long long)blk, (double)scale, (double)amax);
          uint8_t byte = data[(size_t)(r * k + col) / 2];
          code = (col & 1) ? byte >> 4 : byte & 15;
          float v = src[j] == 0.0f ? 0.0f : src[j] * (amax > 0.0f ? 1.0f / amax : 0.0f);
          v = fminf(1.0f, fmaxf(-1.0f, v));
          for (int c = 0; c < 16; c++) {
            double dc = fabs((double)v - LUT[c]), dcode = fabs((double)v - LUT[code]);
            FZ_CHECK(dc > dcode || (dc == dcode && c >= code),
                     "NF4 [%lld, %lld] = %.9g (v %.9g) got code %d, code %d is nearer or ties lower", (long long)r,
                     (long long)col, (double)src[j], (double)v, code, c);
          }
        } else {
          const uint8_t *q = data + (size_t)(r * (k / g) + blk) * (2 + (size_t)g / 4);
          uint16_t dbits = (uint16_t)(q[0] | q[1] << 8);
          FZ_CHECK(dbits == qgemv_f32_to_f16(amax), "Q2_0 d of row %lld block %lld is 0x%04x, not fp16(%.9g)",
                   (long long)r, (long long)blk, dbits, (double)amax);
          code = q[2 + j / 4] >> (2 * (j % 4)) & 3;
          float v = src[j] * (amax > 0.0f ? 1.0f / amax : 0.0f);
          if (v != v) v = 0.0f;
          int want = (int)fminf(3.0f, fmaxf(0.0f, roundf(v) + 1.0f));
          FZ_CHECK(code == want, "Q2_0 [%lld, %lld] = %.9g: code %d, expected %d", (long long)r, (long long)col,
                   (double)src[j], code, want);
        }
      }
    }
  /* what quantize accepts, upload-side validation accepts, and dequantize
   * gives the values of the format text */
  float *back = fz_alloc(count * sizeof(float));
  st = qgemv_dequantize(&d, back);
  FZ_CHECK(st == QGEMV_OK, "dequantize of what quantize wrote: %s", qgemv_status_str(st));
  for (int64_t r = 0; r < n; r++)
    for (int64_t j = 0; j < k; j++)
      FZ_CHECK(back[r * k + j] == (float)weight_at(&d, r, j), "dequantize [%lld, %lld]", (long long)r, (long long)j);
  free(back);
out:
  free(w);
  free(data);
  free(scales);
}

/* ---- the oracle ----------------------------------------------------------- */

static double load(qgemv_dtype t, const void *p, size_t i) {
  return t == QGEMV_F32 ? (double)((const float *)p)[i] : (double)qgemv_bf16_to_f32(((const uint16_t *)p)[i]);
}

static bool same(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0; }

static void check_reference(fz *f) {
  small_desc s;
  make_desc(f, &s);
  uint8_t b = fz_u8(f);
  const int64_t m = 1 + (b & 3) % 3, k = s.d.k, n = s.d.n;
  const qgemv_dtype xt = (b & 4) ? QGEMV_BF16 : QGEMV_F32, gt = (b & 8) ? QGEMV_BF16 : QGEMV_F32;
  const bool norm = b & 16;
  const float eps = (b & 32) ? fz_bits_f32(fz_u32(f)) : 1e-5f;
  const size_t xe = xt == QGEMV_F32 ? 4 : 2, ge = gt == QGEMV_F32 ? 4 : 2;
  void *x = fz_alloc((size_t)(m * k) * xe), *gamma = norm ? fz_alloc((size_t)k * ge) : NULL;
  fz_bytes(f, x, (size_t)(m * k) * xe);
  if (norm) fz_bytes(f, gamma, (size_t)k * ge);
  double *y = fz_alloc((size_t)(m * n) * sizeof(double)), *bound = fz_alloc((size_t)(m * n) * sizeof(double));
  memset(y, 0x5a, (size_t)(m * n) * sizeof(double));
  memset(bound, 0x5a, (size_t)(m * n) * sizeof(double));
  qgemv_status st = qgemv_reference_matvec(&s.d, m, xt, x, gt, gamma, eps, y, (b & 64) ? NULL : bound);
  if (s.bad >= 0 || (norm && !(eps > 0.0f && isfinite(eps)))) {
    if (s.bad >= 0)
      expect_bad(st, &s, "reference_matvec");
    else
      FZ_CHECK(st == QGEMV_ERR_INVALID_ARG, "eps %g accepted: %s", (double)eps, qgemv_status_str(st));
    for (size_t i = 0; i < (size_t)(m * n) * sizeof(double); i++)
      FZ_CHECK(((uint8_t *)y)[i] == 0x5a && ((uint8_t *)bound)[i] == 0x5a, "refused, yet wrote y or bound");
  } else {
    FZ_CHECK(st == QGEMV_OK, "reference_matvec: %s", qgemv_status_str(st));
    double *xn = fz_alloc((size_t)k * sizeof(double));
    for (int64_t r = 0; r < m; r++) {
      double scale = 1.0;
      if (norm) {
        double ss = 0.0;
        for (int64_t j = 0; j < k; j++) ss += load(xt, x, (size_t)(r * k + j)) * load(xt, x, (size_t)(r * k + j));
        scale = 1.0 / sqrt(ss / (double)k + (double)eps);
      }
      for (int64_t j = 0; j < k; j++) {
        double v = load(xt, x, (size_t)(r * k + j));
        xn[j] = norm ? v * scale * load(gt, gamma, (size_t)j) : v;
      }
      for (int64_t i = 0; i < n; i++) {
        double acc = 0.0, sq = 0.0;
        for (int64_t j = 0; j < k; j++) {
          double p = weight_at(&s.d, i, j) * xn[j];
          acc += p;
          sq += p * p;
        }
        size_t at = (size_t)(r * n + i);
        FZ_CHECK(same(y[at], acc), "oracle y[%lld][%lld] = %.17g, the format text gives %.17g", (long long)r,
                 (long long)i, y[at], acc);
        if (!(b & 64)) FZ_CHECK(same(bound[at], sqrt(sq)), "oracle bound [%lld][%lld]", (long long)r, (long long)i);
      }
    }
    free(xn);
  }
  free(x);
  free(gamma);
  free(y);
  free(bound);
  free_desc(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  fz f = {bytes, size};
  switch (fz_u8(&f) % 5) {
  case 0: check_quantize(&f); break;
  case 1: check_dequantize(&f); break;
  case 2: check_reference(&f); break;
  case 3: check_conversions(&f); break;
  default: check_sizes(&f); break;
  }
  return 0;
}
