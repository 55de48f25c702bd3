/*
 * Byte-exact NF4 and Q2_0 (DESIGN.md s.4) and the scalar conversions.
 *
 * Expected bytes come from this file's own reading of the format text:
 * literal hand-worked blocks, and an independent quantizer / decoder /
 * fp16 / bf16 written here, never from the library's own quantizer.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "testutil.h"

/* ---- the format text, transcribed -------------------------------------- */

/* The NormalFloat table exactly as DESIGN.md s.4 prints it. */
static const float LUT[16] = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* IEEE binary16 from f32, round to nearest even, computed arithmetically
 * (frexp / nearbyint in double) rather than by bit tricks, so that it is an
 * independent check of the library's bit-level conversion. */
static uint16_t ref_f16(float f) {
  uint16_t sign = signbit(f) ? 0x8000u : 0u;
  if (isnan(f)) return (uint16_t)(sign | 0x7e00u);
  double a = fabs((double)f);
  if (a >= 65520.0) return (uint16_t)(sign | 0x7c00u); /* at or past the overflow midpoint */
  if (a < ldexp(1.0, -14)) /* subnormal: multiples of 2^-24; 1024 is the smallest normal */
    return (uint16_t)(sign | (uint16_t)nearbyint(ldexp(a, 24)));
  int e;
  frexp(a, &e); /* a = m * 2^e, m in [0.5, 1): fp16 exponent e-1, 10 fraction bits */
  double q = nearbyint(ldexp(a, 11 - e)); /* 1024 .. 2048; 2048 carries into the exponent */
  return (uint16_t)(sign | (uint16_t)((e - 1 + 15) * 1024 + (int)q - 1024));
}

/* The value of a binary16 bit pattern, from the IEEE definition. */
static double ref_f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double s = (h & 0x8000u) ? -1.0 : 1.0;
  if (e == 31) return m ? NAN : s * INFINITY;
  if (e == 0) return s * ldexp(m, -24);
  return s * ldexp(1024 + m, e - 25);
}

/* bf16 from f32, round to nearest even: choose between the two bf16
 * neighbours by distance in double, ties to the even pattern. Past the
 * largest finite bf16 the upper neighbour is 2^128, i.e. infinity. */
static uint16_t ref_bf16(float f) {
  uint32_t u = f32_bits(f);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40u);
  if (isinf(f)) return (uint16_t)(u >> 16);
  uint32_t lo = u & 0xffff0000u;
  int e = (int)((u >> 23) & 0xff);
  double a = fabs((double)f), alo = fabs((double)bits_f32(lo));
  double ulp = ldexp(1.0, (e == 0 ? 1 : e) - 127 - 7);
  double dlo = a - alo, dhi = alo + ulp - a;
  uint16_t r = (uint16_t)(lo >> 16);
  if (dhi < dlo || (dhi == dlo && (r & 1u))) r++;
  return r;
}

/* Nearest LUT code to v, a tie going to the lower code (exact in double). */
static uint8_t ref_nf4_code(float v) {
  uint8_t best = 0;
  for (uint8_t c = 1; c < 16; c++)
    if (fabs((double)v - LUT[c]) < fabs((double)v - LUT[best])) best = c;
  return best;
}

/* One NF4 block: scale = max|w| (f32), code of w * (1/scale). */
static void ref_nf4_block(const float *w, uint8_t *bytes, float *scale) {
  float amax = 0.0f;
  for (int j = 0; j < 64; j++)
    if (fabsf(w[j]) > amax) amax = fabsf(w[j]);
  *scale = amax;
  float inv = amax > 0.0f ? 1.0f / amax : 0.0f;
  for (int j = 0; j < 32; j++) {
    uint8_t lo = amax > 0.0f ? ref_nf4_code(w[2 * j] * inv) : 7;
    uint8_t hi = amax > 0.0f ? ref_nf4_code(w[2 * j + 1] * inv) : 7;
    bytes[j] = (uint8_t)(lo | hi << 4); /* element 2j low, 2j+1 high */
  }
}

/* One Q2_0 block: fp16 amax little-endian, then codes LSB first. */
static void ref_q2_block(const float *w, int g, uint8_t *blk) {
  float amax = 0.0f;
  for (int j = 0; j < g; j++)
    if (fabsf(w[j]) > amax) amax = fabsf(w[j]);
  float id = amax != 0.0f ? 1.0f / amax : 0.0f;
  uint16_t d = ref_f16(amax);
  blk[0] = (uint8_t)(d & 0xff);
  blk[1] = (uint8_t)(d >> 8);
  memset(blk + 2, 0, (size_t)g / 4);
  for (int j = 0; j < g; j++) {
    float q = roundf(w[j] * id) + 1.0f;
    int code = q < 0.0f ? 0 : q > 3.0f ? 3 : (int)q;
    blk[2 + j / 4] = (uint8_t)(blk[2 + j / 4] | code << (2 * (j % 4)));
  }
}

static size_t ref_block_bytes(qgemv_format f, int g) { return f == QGEMV_NF4 ? 32u : 2u + (size_t)g / 4u; }

/* Whole matrix, rows of blocks, as s.4 lays them out. */
static void ref_quantize(qgemv_format f, int64_t n, int64_t k, int g, const float *w, uint8_t *data, float *scales) {
  int64_t per_row = k / g;
  for (int64_t r = 0; r < n; r++)
    for (int64_t b = 0; b < per_row; b++) {
      size_t blk = (size_t)(r * per_row + b);
      const float *src = w + r * k + b * g;
      if (f == QGEMV_NF4)
        ref_nf4_block(src, data + blk * 32u, &scales[blk]);
      else
        ref_q2_block(src, g, data + blk * ref_block_bytes(f, g));
    }
}

/* ---- helpers ------------------------------------------------------------ */

/* A quantized matrix in malloc'ed buffers sized from the format text. */
typedef struct qbuf {
  uint8_t *data;
  float *scales;
  size_t bytes, nscales;
} qbuf;

static qbuf qbuf_new(qgemv_format f, int64_t n, int64_t k, int g) {
  qbuf q;
  q.nscales = f == QGEMV_NF4 ? (size_t)(n * k / 64) : 0;
  q.bytes = (size_t)(n * (k / g)) * ref_block_bytes(f, g);
  q.data = malloc(q.bytes);
  q.scales = malloc(q.nscales ? q.nscales * sizeof(float) : 1);
  ck_assert(q.data && q.scales);
  memset(q.data, 0xab, q.bytes);
  memset(q.scales, 0xab, q.nscales * sizeof(float));
  return q;
}

static void qbuf_free(qbuf *q) {
  free(q->data);
  free(q->scales);
}

/* Quantizes w with the library into a fresh buffer; the test fails on error. */
static qbuf lib_quantize(qgemv_format f, int64_t n, int64_t k, int g, const float *w) {
  qbuf q = qbuf_new(f, n, k, g ? g : 64);
  qgemv_status s = qgemv_quantize(f, n, k, g, w, q.data, f == QGEMV_NF4 ? q.scales : NULL);
  EXPECT(s == QGEMV_OK, "qgemv_quantize: %s", qgemv_last_error());
  return q;
}

/* Library result equals the format text's, byte for byte and scale bit for bit. */
static void check_against_text(qgemv_format f, int64_t n, int64_t k, int g, const float *w, const char *what) {
  qbuf got = lib_quantize(f, n, k, g, w);
  if (g == 0) g = 64; /* NF4 accepts 0 for its one block size */
  qbuf want = qbuf_new(f, n, k, g);
  ref_quantize(f, n, k, g, w, want.data, want.scales);
  for (size_t i = 0; i < want.bytes; i++)
    EXPECT(got.data[i] == want.data[i], "%s: data byte %zu is 0x%02x, the format gives 0x%02x", what, i,
                  got.data[i], want.data[i]);
  for (size_t i = 0; i < want.nscales; i++)
    EXPECT(f32_bits(got.scales[i]) == f32_bits(want.scales[i]), "%s: scale %zu is %a, the format gives %a",
                  what, i, (double)got.scales[i], (double)want.scales[i]);
  qbuf_free(&got);
  qbuf_free(&want);
}

static void expect_bytes(const uint8_t *got, const uint8_t *want, size_t count, const char *what) {
  for (size_t i = 0; i < count; i++)
    EXPECT(got[i] == want[i], "%s: byte %zu is 0x%02x, expected 0x%02x", what, i, got[i], want[i]);
}

static bool contains(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

/* ---- NF4 ---------------------------------------------------------------- */

START_TEST(nf4_table_is_the_documented_one) {
  const float *t = qgemv_nf4_table();
  ck_assert_ptr_nonnull(t);
  for (int c = 0; c < 16; c++)
    EXPECT(f32_bits(t[c]) == f32_bits(LUT[c]), "LUT[%d] = %a, DESIGN.md gives %a", c, (double)t[c],
                  (double)LUT[c]);
}
END_TEST

/* Element 0 = -1 (code 0), element 1 = +1 (code 15), the rest 0 (code 7):
 * byte 0 must be 0xF0 (element 0 in the low nibble), then 0x77. */
START_TEST(nf4_nibble_order) {
  float w[64] = {0};
  w[0] = -1.0f;
  w[1] = 1.0f;
  w[62] = 0.0f;
  w[63] = -1.0f; /* element 63: high nibble of byte 31, code 0 */
  uint8_t want[32];
  memset(want, 0x77, sizeof want);
  want[0] = 0xf0;
  want[31] = 0x07;
  qbuf q = lib_quantize(QGEMV_NF4, 1, 64, 64, w);
  expect_bytes(q.data, want, 32, "nibble order");
  ck_assert_float_eq(q.scales[0], 1.0f);
  qbuf_free(&q);
}
END_TEST

/* w[j] = LUT[j % 16] * s: every code once per 16 elements, so the bytes are
 * 0x10 0x32 ... 0xFE and the scale is exactly s (= |LUT[0] * s|). */
START_TEST(nf4_every_code_hand_worked) {
  static const float scales[] = {1.0f, 3.0f, 0.125f, 1000.0f, 7.3e-3f};
  static const uint8_t pattern[8] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};
  for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
    float w[64];
    for (int j = 0; j < 64; j++) w[j] = LUT[j % 16] * scales[si];
    qbuf q = lib_quantize(QGEMV_NF4, 1, 64, 64, w);
    for (int j = 0; j < 32; j++)
      EXPECT(q.data[j] == pattern[j % 8], "scale %g: byte %d is 0x%02x, expected 0x%02x",
                    (double)scales[si], j, q.data[j], pattern[j % 8]);
    EXPECT(q.scales[0] == scales[si], "scale %a, expected %a", (double)q.scales[0], (double)scales[si]);
    qbuf_free(&q);
  }
}
END_TEST

/* A value exactly at the midpoint of two neighbouring LUT entries goes to
 * the lower code; one float above goes up, one below stays down. With the
 * block's amax 1, w * (1/1) is w itself, so the midpoint reaches the
 * nearest search unrounded. Midpoints representable in f32 are found by
 * search (at least 0 +- LUT[8]/2 and LUT[6]/2 are). */
START_TEST(nf4_tie_goes_to_lower_code) {
  int ties = 0;
  for (int c = 0; c < 15; c++) {
    double mid = ((double)LUT[c] + (double)LUT[c + 1]) / 2.0;
    if ((double)(float)mid != mid) continue;
    float w[64] = {0};
    w[0] = 1.0f;
    w[1] = (float)mid;
    w[2] = nextafterf((float)mid, 2.0f);
    w[3] = nextafterf((float)mid, -2.0f);
    qbuf q = lib_quantize(QGEMV_NF4, 1, 64, 64, w);
    EXPECT((q.data[0] >> 4) == c, "midpoint %a of codes %d/%d got code %d, the lower is %d", mid, c, c + 1,
                  q.data[0] >> 4, c);
    EXPECT((q.data[1] & 0xf) == c + 1, "just above midpoint %d/%d got code %d", c, c + 1, q.data[1] & 0xf);
    EXPECT((q.data[1] >> 4) == c, "just below midpoint %d/%d got code %d", c, c + 1, q.data[1] >> 4);
    qbuf_free(&q);
    ties++;
  }
  ck_assert_int_ge(ties, 2);
}
END_TEST

/* All-zero block (signed zeros too): scale 0, every code 7. The next block
 * of the same row is not zero and must not be affected. */
START_TEST(nf4_zero_block) {
  float w[128] = {0};
  for (int j = 0; j < 64; j += 3) w[j] = -0.0f;
  for (int j = 64; j < 128; j++) w[j] = (float)(j - 96) / 32.0f;
  qbuf q = lib_quantize(QGEMV_NF4, 1, 128, 64, w);
  for (int j = 0; j < 32; j++) EXPECT(q.data[j] == 0x77, "zero block byte %d is 0x%02x", j, q.data[j]);
  EXPECT(q.scales[0] == 0.0f, "zero block scale is %a", (double)q.scales[0]);
  ck_assert_float_eq(q.scales[1], 1.0f);
  qbuf_free(&q);
  check_against_text(QGEMV_NF4, 1, 128, 64, w, "zero then ramp");
}
END_TEST

/* Random matrices of every distribution, several rows and blocks. */
START_TEST(nf4_random_matches_text) {
  rng r = {.s = 0x4e4634};
  for (int d = 0; d < DIST_COUNT; d++) {
    float *w = malloc(5 * 320 * sizeof(float));
    ck_assert_ptr_nonnull(w);
    fill_random(&r, (dist_kind)d, w, 5 * 320);
    check_against_text(QGEMV_NF4, 5, 320, 64, w, dist_name((dist_kind)d));
    check_against_text(QGEMV_NF4, 5, 320, 0, w, "group 0 means 64");
    free(w);
  }
}
END_TEST

/* ---- Q2_0 --------------------------------------------------------------- */

/* codes -1 -> 0, 0 -> 1, +1 -> 2 at elements 0..3 of a block with amax 1:
 * d = fp16(1) = 0x3C00 stored 00 3C, byte 0 = 0 | 1<<2 | 2<<4 | 1<<6. */
START_TEST(q2_layout_hand_worked) {
  for (int g = 64; g <= 128; g += 64) {
    float w[128] = {0};
    w[0] = -1.0f;
    w[2] = 1.0f;
    w[g - 1] = 1.0f; /* last element: bits 6..7 of the last byte */
    uint8_t want[34];
    memset(want, 0x55, sizeof want);
    want[0] = 0x00;
    want[1] = 0x3c;
    want[2] = 0x64;
    want[2 + g / 4 - 1] = 0x95;
    qbuf q = lib_quantize(QGEMV_Q2_0, 1, g, g, w);
    ck_assert_uint_eq(q.bytes, 2u + (size_t)g / 4u);
    expect_bytes(q.data, want, q.bytes, g == 64 ? "Q2_0 g64 layout" : "Q2_0 g128 layout");
    qbuf_free(&q);
  }
}
END_TEST

/* roundf rounds halves away from zero: with amax 1 (id exactly 1),
 * 0.5 -> code 2, -0.5 -> code 0; a float either side of 0.5 -> 1/2. */
START_TEST(q2_roundf_halves_away_from_zero) {
  static const float amaxes[] = {1.0f, 4.0f, 0.25f};
  for (size_t a = 0; a < 3; a++) {
    float s = amaxes[a], w[64] = {0};
    float vals[8] = {1, 0.5f, -0.5f, nextafterf(0.5f, 0), -1, nextafterf(-0.5f, 0), 0.25f, 0.75f};
    for (int j = 0; j < 8; j++) w[j] = vals[j] * s; /* powers of two: exact */
    /* codes 2,2,0,1 | 0,1,1,2 */
    uint8_t want[18];
    memset(want, 0x55, sizeof want);
    uint16_t d = s == 1.0f ? 0x3c00 : s == 4.0f ? 0x4400 : 0x3400;
    want[0] = (uint8_t)(d & 0xff);
    want[1] = (uint8_t)(d >> 8);
    want[2] = 2 | 2 << 2 | 0 << 4 | 1 << 6;
    want[3] = 0 | 1 << 2 | 1 << 4 | 2 << 6;
    qbuf q = lib_quantize(QGEMV_Q2_0, 1, 64, 64, w);
    expect_bytes(q.data, want, 18, "roundf halves");
    qbuf_free(&q);
  }
}
END_TEST

/* The stored d is fp16(amax) rounded to nearest even. */
START_TEST(q2_scale_fp16_rounding) {
  static const struct {
    float amax;
    uint16_t d;
    const char *why;
  } cases[] = {
      {1.0, 0x3c00, "exact"},
      {1.0 + 0x1p-11, 0x3c00, "tie, even is down"},
      {1.0 + 3 * 0x1p-11, 0x3c02, "tie, even is up"},
      {1.0 + 0x1p-11 + 0x1p-20, 0x3c01, "just above a tie rounds up"},
      {1.0 + 0x1p-11 - 0x1p-20, 0x3c00, "just below a tie rounds down"},
      {0.1f, 0x2e66, "0.1"},
      {65504.0, 0x7bff, "largest finite"},
      {65505.0, 0x7bff, "just above 65504 stays finite"},
      {65519.99609375, 0x7bff, "largest float below 65520 stays finite"},
      {0x1p-14, 0x0400, "smallest normal"},
      {0x1p-14 - 0x1p-25, 0x0400, "subnormal tie 1023.5 -> 1024"},
      {0x1p-20, 0x0010, "subnormal"},
      {3 * 0x1p-26, 0x0001, "0.75 of the smallest subnormal rounds up"},
      {5 * 0x1p-26, 0x0001, "1.25 subnormal steps round down"},
      {3 * 0x1p-25, 0x0002, "subnormal tie 1.5 -> 2"},
      {0x1p-24, 0x0001, "smallest subnormal"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    float amax = cases[i].amax; /* every case is exact in f32 */
    EXPECT(ref_f16(amax) == cases[i].d, "test's own fp16 of %a is 0x%04x", (double)amax, ref_f16(amax));
    for (int g = 64; g <= 128; g += 64) {
      float w[128];
      for (int j = 0; j < g; j++) w[j] = amax * (j % 2 ? 0.25f : -0.5f);
      w[g / 2] = -amax;
      qbuf q = lib_quantize(QGEMV_Q2_0, 1, g, g, w);
      uint16_t d = (uint16_t)(q.data[0] | q.data[1] << 8);
      EXPECT(d == cases[i].d, "amax %a (%s): d = 0x%04x, expected 0x%04x", (double)amax, cases[i].why, d,
                    cases[i].d);
      qbuf_free(&q);
      check_against_text(QGEMV_Q2_0, 1, g, g, w, cases[i].why);
    }
  }
}
END_TEST

/* All-zero block: d = 0, every code 1 (0x55). */
START_TEST(q2_zero_block) {
  for (int g = 64; g <= 128; g += 64) {
    float w[256] = {0};
    w[1] = -0.0f;
    for (int j = g; j < 2 * g; j++) w[j] = 1.0f; /* second block nonzero */
    qbuf q = lib_quantize(QGEMV_Q2_0, 1, 2 * g, g, w);
    uint8_t want[34];
    memset(want, 0x55, sizeof want);
    want[0] = want[1] = 0;
    expect_bytes(q.data, want, 2u + (size_t)g / 4u, "zero block");
    const uint8_t *b1 = q.data + 2 + g / 4;
    ck_assert_uint_eq(b1[0] | b1[1] << 8, 0x3c00);
    for (int j = 0; j < g / 4; j++) ck_assert_uint_eq(b1[2 + j], 0xaa); /* all code 2 */
    qbuf_free(&q);
  }
}
END_TEST

/* Block (r, b) lies at ((r * k/g) + b) * (2 + g/4): give each block a
 * distinct amax and find it at that offset. */
START_TEST(q2_block_offsets) {
  for (int g = 64; g <= 128; g += 64) {
    enum { N = 3, K = 512 };
    static float w[N * K];
    int per_row = K / g;
    for (int r = 0; r < N; r++)
      for (int c = 0; c < K; c++) w[r * K + c] = (float)(r * per_row + c / g + 1) * (c % 3 == 0 ? -1.0f : 0.5f);
    qbuf q = lib_quantize(QGEMV_Q2_0, N, K, g, w);
    ck_assert_uint_eq(qgemv_data_bytes(QGEMV_Q2_0, N, K, g), q.bytes);
    for (int r = 0; r < N; r++)
      for (int b = 0; b < per_row; b++) {
        const uint8_t *blk = q.data + (size_t)(r * per_row + b) * (2u + (size_t)g / 4u);
        uint16_t d = (uint16_t)(blk[0] | blk[1] << 8);
        EXPECT(d == ref_f16((float)(r * per_row + b + 1)), "g=%d row %d block %d: d 0x%04x", g, r, b, d);
      }
    qbuf_free(&q);
    check_against_text(QGEMV_Q2_0, N, K, g, w, "offsets");
  }
}
END_TEST

START_TEST(q2_random_matches_text) {
  rng r = {.s = 0x5132};
  for (int d = 0; d < DIST_COUNT; d++)
    for (int g = 64; g <= 128; g += 64) {
      float *w = malloc(4 * 384 * sizeof(float));
      ck_assert_ptr_nonnull(w);
      fill_random(&r, (dist_kind)d, w, 4 * 384);
      check_against_text(QGEMV_Q2_0, 4, 384, g, w, dist_name((dist_kind)d));
      free(w);
    }
}
END_TEST

/* ---- dequantize --------------------------------------------------------- */

/* Hand-built bytes: codes 0..3 with d = 2.0 decode to -2, 0, 2, 4 (code 3
 * is +2, legal though the quantizer never makes it). */
START_TEST(q2_code3_decodes_as_2d) {
  uint8_t blk[2 * 34];
  memset(blk, 0, sizeof blk);
  for (int g = 64; g <= 128; g += 64) {
    blk[0] = 0x00;
    blk[1] = 0x40; /* fp16 2.0 */
    for (int j = 0; j < g / 4; j++) blk[2 + j] = 0xe4; /* codes 0,1,2,3 */
    qgemv_weight_desc d = {.format = QGEMV_Q2_0, .n = 1, .k = g, .group = g, .data = blk, .scales = NULL};
    float out[128];
    ck_assert_int_eq(qgemv_dequantize(&d, out), QGEMV_OK);
    static const float want[4] = {-2.0f, 0.0f, 2.0f, 4.0f};
    for (int j = 0; j < g; j++)
      EXPECT(out[j] == want[j % 4], "g=%d element %d: %g, expected %g", g, j, (double)out[j],
                    (double)want[j % 4]);
  }
}
END_TEST

/* NF4 bytes 0xF0 with scale 2: element 0 (low nibble, code 0) is -2,
 * element 1 (high nibble, code 15) is +2. */
START_TEST(nf4_dequantize_hand_worked) {
  uint8_t data[32];
  memset(data, 0x77, sizeof data);
  data[0] = 0xf0;
  data[1] = 0x8e; /* element 2: code 14, element 3: code 8 */
  float scale = 2.0f, out[64];
  qgemv_weight_desc d = {.format = QGEMV_NF4, .n = 1, .k = 64, .group = 64, .data = data, .scales = &scale};
  ck_assert_int_eq(qgemv_dequantize(&d, out), QGEMV_OK);
  ck_assert_float_eq(out[0], -2.0f);
  ck_assert_float_eq(out[1], 2.0f);
  ck_assert_float_eq(out[2], LUT[14] * 2.0f);
  ck_assert_float_eq(out[3], LUT[8] * 2.0f);
  for (int j = 4; j < 64; j++) ck_assert_float_eq(out[j], 0.0f);
}
END_TEST

/* Random bytes and scales (every code, both formats) decode to the values
 * the format text gives: LUT[code] * scale as an f32 product (the product
 * of two floats rounded once), and (code - 1) * d exactly. */
START_TEST(dequantize_random_bytes_match_text) {
  rng r = {.s = 0xdec0de};
  enum { N = 3, K = 256 };
  for (int f = 0; f < 3; f++) {
    qgemv_format fmt = f == 0 ? QGEMV_NF4 : QGEMV_Q2_0;
    int g = f == 2 ? 128 : 64;
    qbuf q = qbuf_new(fmt, N, K, g);
    for (size_t i = 0; i < q.bytes; i++) q.data[i] = (uint8_t)rng_next(&r);
    for (size_t i = 0; i < q.nscales; i++) q.scales[i] = (float)(rng_normal(&r) * 10.0);
    if (fmt == QGEMV_Q2_0) /* keep every d finite: exponent field below 31 */
      for (int b = 0; b < N * K / g; b++) q.data[(size_t)b * (2u + (size_t)g / 4u) + 1] &= 0xbf;
    qgemv_weight_desc d = {.format = fmt, .n = N, .k = K, .group = g, .data = q.data,
                           .scales = fmt == QGEMV_NF4 ? q.scales : NULL};
    static float out[N * K];
    ck_assert_int_eq(qgemv_dequantize(&d, out), QGEMV_OK);
    for (int row = 0; row < N; row++)
      for (int c = 0; c < K; c++) {
        int b = c / g;
        double want;
        if (fmt == QGEMV_NF4) {
          uint8_t byte = q.data[row * K / 2 + c / 2];
          int code = c % 2 ? byte >> 4 : byte & 0xf;
          want = (float)((double)LUT[code] * (double)q.scales[row * (K / 64) + b]);
        } else {
          const uint8_t *blk = q.data + (size_t)(row * (K / g) + b) * (2u + (size_t)g / 4u);
          int j = c % g, code = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
          want = (code - 1) * ref_f16_value((uint16_t)(blk[0] | blk[1] << 8));
        }
        EXPECT(out[row * K + c] == want, "format %d row %d col %d: %a, expected %a", f, row, c,
                      (double)out[row * K + c], want);
      }
    qbuf_free(&q);
  }
}
END_TEST

/* quantize -> dequantize -> quantize reproduces the bytes and scales. */
START_TEST(round_trip_is_stable) {
  rng r = {.s = 0x7219};
  enum { N = 4, K = 384 };
  static float w[N * K], back[N * K];
  for (int d = 0; d < DIST_COUNT; d++)
    for (int f = 0; f < 3; f++) {
      qgemv_format fmt = f == 0 ? QGEMV_NF4 : QGEMV_Q2_0;
      int g = f == 2 ? 128 : 64;
      fill_random(&r, (dist_kind)d, w, N * K);
      qbuf a = lib_quantize(fmt, N, K, g, w);
      qgemv_weight_desc desc = {.format = fmt, .n = N, .k = K, .group = g, .data = a.data,
                                .scales = fmt == QGEMV_NF4 ? a.scales : NULL};
      ck_assert_int_eq(qgemv_dequantize(&desc, back), QGEMV_OK);
      qbuf b = lib_quantize(fmt, N, K, g, back);
      EXPECT(memcmp(a.data, b.data, a.bytes) == 0, "%s format %d: data differs after a round trip",
                    dist_name((dist_kind)d), f);
      EXPECT(memcmp(a.scales, b.scales, a.nscales * sizeof(float)) == 0,
                    "%s NF4: scales differ after a round trip", dist_name((dist_kind)d));
      qbuf_free(&a);
      qbuf_free(&b);
    }
}
END_TEST

/* ---- sizes -------------------------------------------------------------- */

START_TEST(sizes) {
  ck_assert_uint_eq(qgemv_data_bytes(QGEMV_NF4, 3, 128, 64), 3u * 128u / 2u);
  ck_assert_uint_eq(qgemv_data_bytes(QGEMV_NF4, 3, 128, 0), 192u);
  ck_assert_uint_eq(qgemv_scale_count(QGEMV_NF4, 3, 128, 64), 6u);
  ck_assert_uint_eq(qgemv_scale_count(QGEMV_NF4, 3, 128, 0), 6u);
  ck_assert_uint_eq(qgemv_data_bytes(QGEMV_Q2_0, 3, 128, 64), 3u * 2u * 18u);
  ck_assert_uint_eq(qgemv_data_bytes(QGEMV_Q2_0, 3, 128, 128), 3u * 34u);
  ck_assert_uint_eq(qgemv_scale_count(QGEMV_Q2_0, 3, 128, 64), 0u);
  ck_assert_uint_eq(qgemv_scale_count(QGEMV_Q2_0, 3, 128, 128), 0u);
  ck_assert_uint_eq(qgemv_data_bytes(QGEMV_NF4, 4096, 4096, 64), 8388608u);
  ck_assert_uint_eq(qgemv_data_bytes(QGEMV_Q2_0, 4096, 4096, 128), 4096u * 32u * 34u);
  /* invalid: 0 with a message */
  ck_assert_uint_eq(qgemv_data_bytes(QGEMV_NF4, 3, 100, 64), 0u);
  ck_assert(contains(qgemv_last_error(), "100"));
  ck_assert_uint_eq(qgemv_data_bytes(QGEMV_Q2_0, 3, 128, 32), 0u);
  ck_assert_uint_eq(qgemv_scale_count(QGEMV_NF4, 0, 64, 64), 0u);
  ck_assert_uint_eq(qgemv_data_bytes(QGEMV_NF4, INT64_MAX, 128, 64), 0u);
  ck_assert(qgemv_last_error()[0] != '\0');
}
END_TEST

/* ---- the format list ---------------------------------------------------- */

/* The list is the documented one (names and sizes from DESIGN.md s.4 and
 * qgemv.h, written out here), in its documented order, and each entry's
 * sizes agree with qgemv_data_bytes / qgemv_scale_count. */
START_TEST(format_list_is_documented) {
  static const qgemv_format_info want[] = {
      {"nf4", "NF4", QGEMV_NF4, 64, 32, 4},
      {"q2_0g64", "Q2_0/g64", QGEMV_Q2_0, 64, 18, 0},
      {"q2_0", "Q2_0/g128", QGEMV_Q2_0, 128, 34, 0},
  };
  ck_assert_int_eq(qgemv_format_count(), 3);
  for (int i = 0; i < 3; i++) {
    qgemv_format_info got, named;
    EXPECT_OK(qgemv_format_get(i, &got));
    EXPECT(strcmp(got.name, want[i].name) == 0 && strcmp(got.label, want[i].label) == 0,
           "format %d is %s (%s), expected %s (%s)", i, got.name, got.label, want[i].name, want[i].label);
    EXPECT(got.format == want[i].format && got.group == want[i].group && got.block_bytes == want[i].block_bytes &&
               got.scale_bytes == want[i].scale_bytes,
           "%s: format %d group %d block %d bytes scale %d bytes", got.name, (int)got.format, (int)got.group,
           (int)got.block_bytes, (int)got.scale_bytes);
    EXPECT_OK(qgemv_format_lookup(want[i].name, &named));
    EXPECT(memcmp(&named, &got, sizeof got) == 0, "lookup of %s differs from entry %d", want[i].name, i);
    const int64_t n = 3, k = 2 * (int64_t)got.group; /* six blocks */
    EXPECT(qgemv_data_bytes(got.format, n, k, got.group) == 6u * (size_t)got.block_bytes &&
               qgemv_scale_count(got.format, n, k, got.group) * sizeof(float) == 6u * (size_t)got.scale_bytes,
           "%s: the listed sizes disagree with qgemv_data_bytes / qgemv_scale_count", got.name);
  }
}
END_TEST

START_TEST(format_list_errors) {
  qgemv_format_info info;
  ck_assert_int_eq(qgemv_format_get(-1, &info), QGEMV_ERR_INVALID_ARG);
  ck_assert_int_eq(qgemv_format_get(qgemv_format_count(), &info), QGEMV_ERR_INVALID_ARG);
  ck_assert(contains(qgemv_last_error(), "index"));
  ck_assert_int_eq(qgemv_format_get(0, NULL), QGEMV_ERR_INVALID_ARG);
  ck_assert_int_eq(qgemv_format_lookup(NULL, &info), QGEMV_ERR_INVALID_ARG);
  ck_assert_int_eq(qgemv_format_lookup("nf4", NULL), QGEMV_ERR_INVALID_ARG);
  static const char *const bad[] = {"", "NF4", "nf4 ", "q2_0g128", "q2"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    EXPECT(qgemv_format_lookup(bad[i], &info) == QGEMV_ERR_INVALID_ARG, "\"%s\" was found", bad[i]);
    const char *m = qgemv_last_error();
    EXPECT(contains(m, "nf4") && contains(m, "q2_0g64") && contains(m, "q2_0"),
           "the message does not list the formats: %s", m);
  }
}
END_TEST

/* ---- conversions -------------------------------------------------------- */

/* Every fp16 pattern: f16 -> f32 is the IEEE value, and back is the same
 * pattern; NaNs stay NaN. */
START_TEST(f16_exhaustive_round_trip) {
  for (uint32_t h = 0; h < 65536; h++) {
    float f = qgemv_f16_to_f32((uint16_t)h);
    double want = ref_f16_value((uint16_t)h);
    if (isnan(want)) {
      EXPECT(isnan(f), "f16 0x%04x (NaN) decoded to %a", h, (double)f);
      uint16_t back = qgemv_f32_to_f16(f);
      EXPECT((back & 0x7c00u) == 0x7c00u && (back & 0x3ffu), "NaN 0x%04x came back as 0x%04x", h, back);
      continue;
    }
    EXPECT((double)f == want && !signbit(f) == !signbit(want), "f16 0x%04x decoded to %a, IEEE gives %a", h,
                  (double)f, want);
    EXPECT(qgemv_f32_to_f16(f) == h, "f16 0x%04x -> %a -> 0x%04x", h, (double)f, qgemv_f32_to_f16(f));
  }
}
END_TEST

/* f32 -> f16 at and either side of every midpoint between neighbouring
 * fp16 values (where rounding decides), plus random f32 patterns. */
START_TEST(f16_rounding_matches_ieee) {
  uint32_t step = tu_quick() ? 7 : 1;
  for (uint32_t h = 0; h < 0x7c00; h += step)
    for (int sign = 0; sign < 2; sign++) {
      double lo = ref_f16_value((uint16_t)h), hi = h + 1 < 0x7c00 ? ref_f16_value((uint16_t)(h + 1)) : 65536.0;
      float mid = (float)((lo + hi) / 2.0); /* 12 significant bits: exact */
      float probes[3] = {mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY)};
      for (int p = 0; p < 3; p++) {
        float f = sign ? -probes[p] : probes[p];
        EXPECT(qgemv_f32_to_f16(f) == ref_f16(f), "f32 %a -> f16 0x%04x, IEEE gives 0x%04x", (double)f,
                      qgemv_f32_to_f16(f), ref_f16(f));
      }
    }
  rng r = {.s = 0xf16};
  for (int i = 0; i < (tu_quick() ? 1 << 14 : 1 << 20); i++) {
    float f = bits_f32((uint32_t)rng_next(&r));
    uint16_t got = qgemv_f32_to_f16(f);
    if (isnan(f))
      EXPECT((got & 0x7c00u) == 0x7c00u && (got & 0x3ffu), "NaN %a -> 0x%04x", (double)f, got);
    else
      EXPECT(got == ref_f16(f), "f32 %a -> f16 0x%04x, IEEE gives 0x%04x", (double)f, got, ref_f16(f));
  }
}
END_TEST

START_TEST(f16_special_values) {
  ck_assert_uint_eq(qgemv_f32_to_f16(INFINITY), 0x7c00);
  ck_assert_uint_eq(qgemv_f32_to_f16(-INFINITY), 0xfc00);
  ck_assert_uint_eq(qgemv_f32_to_f16(65520.0f), 0x7c00); /* the overflow midpoint: to even = inf */
  ck_assert_uint_eq(qgemv_f32_to_f16(1e10f), 0x7c00);
  ck_assert_uint_eq(qgemv_f32_to_f16(-0.0f), 0x8000);
  ck_assert_uint_eq(qgemv_f32_to_f16(0x1p-25f), 0x0000); /* tie to even: 0 */
  ck_assert_uint_eq(qgemv_f32_to_f16(nextafterf(0x1p-25f, 1.0f)), 0x0001);
  ck_assert_uint_eq(qgemv_f32_to_f16(1e-30f), 0x0000);
  ck_assert_uint_eq(qgemv_f32_to_f16(0x1p-149f), 0x0000); /* f32 subnormal */
  /* signalling and odd-payload NaNs stay NaN (not truncated to inf) */
  static const uint32_t nans[] = {0x7f800001u, 0xff800001u, 0x7fc00000u, 0x7fffffffu, 0x7f801fffu};
  for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
    uint16_t h = qgemv_f32_to_f16(bits_f32(nans[i]));
    EXPECT((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu), "NaN 0x%08x -> f16 0x%04x", nans[i], h);
    uint16_t b = qgemv_f32_to_bf16(bits_f32(nans[i]));
    EXPECT((b & 0x7f80u) == 0x7f80u && (b & 0x7fu), "NaN 0x%08x -> bf16 0x%04x", nans[i], b);
  }
  ck_assert(isinf(qgemv_f16_to_f32(0x7c00)) && qgemv_f16_to_f32(0x7c00) > 0);
  ck_assert(isinf(qgemv_f16_to_f32(0xfc00)) && qgemv_f16_to_f32(0xfc00) < 0);
  ck_assert(isnan(qgemv_f16_to_f32(0x7e00)) && isnan(qgemv_f16_to_f32(0x7c01)));
  ck_assert(qgemv_f16_to_f32(0x0001) == 0x1p-24f);
  ck_assert(qgemv_f16_to_f32(0x03ff) == 1023 * 0x1p-24f);
  ck_assert(qgemv_f16_to_f32(0x7bff) == 65504.0f);
}
END_TEST

/* Every bf16 pattern round-trips; f32 -> bf16 is RNE at every midpoint. */
START_TEST(bf16_exhaustive) {
  for (uint32_t h = 0; h < 65536; h++) {
    float f = qgemv_bf16_to_f32((uint16_t)h);
    EXPECT(f32_bits(f) == h << 16, "bf16 0x%04x -> f32 0x%08x", h, f32_bits(f));
    uint16_t back = qgemv_f32_to_bf16(f);
    if (isnan(f))
      EXPECT(((back & 0x7f80u) == 0x7f80u) && (back & 0x7fu), "NaN bf16 0x%04x -> 0x%04x", h, back);
    else
      EXPECT(back == h, "bf16 0x%04x round trip gave 0x%04x", h, back);
    if ((h & 0x7f80u) == 0x7f80u) continue; /* no midpoint above inf / NaN */
    uint32_t mid = h << 16 | 0x8000u;
    static const int32_t off[3] = {0, -1, 1};
    for (int p = 0; p < 3; p++) {
      float x = bits_f32(mid + (uint32_t)off[p]);
      EXPECT(qgemv_f32_to_bf16(x) == ref_bf16(x), "f32 0x%08x -> bf16 0x%04x, RNE gives 0x%04x",
                    f32_bits(x), qgemv_f32_to_bf16(x), ref_bf16(x));
    }
  }
  ck_assert_uint_eq(qgemv_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
  ck_assert_uint_eq(qgemv_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  ck_assert_uint_eq(qgemv_f32_to_bf16(INFINITY), 0x7f80);
  ck_assert_uint_eq(qgemv_f32_to_bf16(-INFINITY), 0xff80);
  ck_assert_uint_eq(qgemv_f32_to_bf16(bits_f32(0x7f7fffffu)), 0x7f80); /* FLT_MAX rounds to inf */
  ck_assert_uint_eq(qgemv_f32_to_bf16(bits_f32(0x00000001u)), 0x0000); /* f32 subnormal */
  ck_assert_uint_eq(qgemv_f32_to_bf16(bits_f32(0x00018000u)), 0x0002); /* subnormal tie to even */
  rng r = {.s = 0xbf16};
  for (int i = 0; i < (tu_quick() ? 1 << 14 : 1 << 20); i++) {
    float f = bits_f32((uint32_t)rng_next(&r));
    if (isnan(f)) continue;
    EXPECT(qgemv_f32_to_bf16(f) == ref_bf16(f), "f32 %a -> bf16", (double)f);
  }
}
END_TEST

/* ---- non-finite data ---------------------------------------------------- */

/* A NaN or infinite weight: BAD_DATA naming row 1 column 37; data and
 * scales keep their previous bytes. */
START_TEST(nonfinite_weight_rejected) {
  static const float bad[3] = {NAN, INFINITY, -INFINITY};
  for (int f = 0; f < 3; f++)
    for (int b = 0; b < 3; b++) {
      qgemv_format fmt = f == 0 ? QGEMV_NF4 : QGEMV_Q2_0;
      int g = f == 2 ? 128 : 64;
      float w[2 * 128];
      for (int j = 0; j < 2 * 128; j++) w[j] = (float)(j % 7) - 3.0f;
      w[1 * 128 + 37] = bad[b];
      qbuf q = qbuf_new(fmt, 2, 128, g); /* filled with 0xab */
      qgemv_status s = qgemv_quantize(fmt, 2, 128, g, w, q.data, fmt == QGEMV_NF4 ? q.scales : NULL);
      EXPECT(s == QGEMV_ERR_BAD_DATA, "format %d bad %d: status %s", f, b, qgemv_status_str(s));
      const char *m = qgemv_last_error();
      EXPECT(contains(m, "row 1") && contains(m, "column 37"), "message does not name row 1 column 37: %s", m);
      for (size_t i = 0; i < q.bytes; i++) EXPECT(q.data[i] == 0xab, "data byte %zu written on error", i);
      for (size_t i = 0; i < q.nscales; i++)
        EXPECT(f32_bits(q.scales[i]) == 0xababababu, "scale %zu written on error", i);
      qbuf_free(&q);
    }
}
END_TEST

/* A non-finite NF4 scale or Q2_0 d: dequantize says BAD_DATA naming the
 * row and block, and leaves its output alone. */
START_TEST(nonfinite_scale_rejected) {
  enum { N = 3, K = 256 };
  static float out[N * K];
  static const float bad_f32[2] = {NAN, -INFINITY};
  static const uint16_t bad_f16[3] = {0x7c00, 0xfc00, 0x7e01};
  for (int f = 0; f < 3; f++) {
    qgemv_format fmt = f == 0 ? QGEMV_NF4 : QGEMV_Q2_0;
    int g = f == 2 ? 128 : 64, variants = fmt == QGEMV_NF4 ? 2 : 3;
    for (int v = 0; v < variants; v++) {
      qbuf q = qbuf_new(fmt, N, K, g);
      memset(q.data, 0x12, q.bytes);
      for (size_t i = 0; i < q.nscales; i++) q.scales[i] = 1.5f;
      if (fmt == QGEMV_NF4) {
        q.scales[1 * (K / 64) + 1] = bad_f32[v]; /* row 1 block 1 */
      } else {
        for (int b = 0; b < N * K / g; b++) q.data[(size_t)b * (2u + (size_t)g / 4u) + 1] = 0x3c;
        uint8_t *blk = q.data + (size_t)(1 * (K / g) + 1) * (2u + (size_t)g / 4u); /* row 1 block 1 */
        blk[0] = (uint8_t)(bad_f16[v] & 0xff);
        blk[1] = (uint8_t)(bad_f16[v] >> 8);
      }
      qgemv_weight_desc d = {.format = fmt, .n = N, .k = K, .group = g, .data = q.data,
                             .scales = fmt == QGEMV_NF4 ? q.scales : NULL};
      memset(out, 0xcd, sizeof out);
      qgemv_status s = qgemv_dequantize(&d, out);
      EXPECT(s == QGEMV_ERR_BAD_DATA, "format %d variant %d: %s", f, v, qgemv_status_str(s));
      const char *m = qgemv_last_error();
      EXPECT(contains(m, "row 1") && contains(m, "block 1"), "message does not name row 1 block 1: %s", m);
      for (size_t i = 0; i < sizeof out; i++)
        EXPECT(((unsigned char *)out)[i] == 0xcd, "dequantize wrote byte %zu on error", i);
      qbuf_free(&q);
    }
  }
}
END_TEST

/* ---- runner ------------------------------------------------------------- */

static Suite *formats_suite(void) {
  Suite *s = suite_create("formats");
  TCase *nf4 = tcase_create("nf4");
  tcase_set_timeout(nf4, 60); /* the 4 s default is tight on a loaded machine */
  tcase_add_test(nf4, nf4_table_is_the_documented_one);
  tcase_add_test(nf4, nf4_nibble_order);
  tcase_add_test(nf4, nf4_every_code_hand_worked);
  tcase_add_test(nf4, nf4_tie_goes_to_lower_code);
  tcase_add_test(nf4, nf4_zero_block);
  tcase_add_test(nf4, nf4_random_matches_text);
  suite_add_tcase(s, nf4);
  TCase *q2 = tcase_create("q2_0");
  tcase_set_timeout(q2, 60);
  tcase_add_test(q2, q2_layout_hand_worked);
  tcase_add_test(q2, q2_roundf_halves_away_from_zero);
  tcase_add_test(q2, q2_scale_fp16_rounding);
  tcase_add_test(q2, q2_zero_block);
  tcase_add_test(q2, q2_block_offsets);
  tcase_add_test(q2, q2_random_matches_text);
  suite_add_tcase(s, q2);
  TCase *deq = tcase_create("dequantize");
  tcase_set_timeout(deq, 60);
  tcase_add_test(deq, q2_code3_decodes_as_2d);
  tcase_add_test(deq, nf4_dequantize_hand_worked);
  tcase_add_test(deq, dequantize_random_bytes_match_text);
  tcase_add_test(deq, round_trip_is_stable);
  tcase_add_test(deq, sizes);
  tcase_add_test(deq, format_list_is_documented);
  tcase_add_test(deq, format_list_errors);
  tcase_add_test(deq, nonfinite_weight_rejected);
  tcase_add_test(deq, nonfinite_scale_rejected);
  suite_add_tcase(s, deq);
  TCase *conv = tcase_create("conversions");
  tcase_set_timeout(conv, 60);
  tcase_add_test(conv, f16_exhaustive_round_trip);
  tcase_add_test(conv, f16_rounding_matches_ieee);
  tcase_add_test(conv, f16_special_values);
  tcase_add_test(conv, bf16_exhaustive);
  suite_add_tcase(s, conv);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(formats_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
