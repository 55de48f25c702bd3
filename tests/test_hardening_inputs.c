/*
 * Adversarial inputs (issue 6, item 1), beyond the per-call checks of
 * test_api_errors.c: sizes at and just past the int64 / size_t limits of
 * every size computation, garbage enum values through every entry point
 * that takes one, buffer lengths that differ from the right one only in
 * high bits, and handles of one kind passed as another. Every case must
 * give the documented status with a message and leave every output as it
 * was (outputs are poisoned first and compared after).
 *
 * The number of bad inputs tried is counted in a page shared with the
 * forked test processes and printed at the end, for the closing note.
 */
#define _GNU_SOURCE
#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "expect.h"
#include "testutil.h"

/* Shapes that are valid but cannot be allocated are part of the matrix: the
 * library must see malloc fail and say NO_MEMORY. ASan aborts on such a
 * request unless told to return NULL as the C library does. */
const char *__asan_default_options(void);
__attribute__((used)) const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static unsigned long *cases; /* shared with the forked tests */
static void count_case(void) { __atomic_fetch_add(cases, 1, __ATOMIC_RELAXED); }

/* Leaves a message the call under test must replace with its own. */
static void sentinel(void) {
  int d = 0;
  qgemv_backend_probe("zz-sentinel-zz", &d);
}

/* One bad input: `got` must be `want`, with a message of the call's own that
 * contains `needle` (when not NULL). */
static void expect_fail(qgemv_status got, qgemv_status want, const char *needle, const char *what) {
  count_case();
  const char *m = qgemv_last_error();
  EXPECT(got == want, "%s: returned %s, expected %s (%s)", what, qgemv_status_str(got), qgemv_status_str(want), m);
  EXPECT(m[0] != '\0' && strstr(m, "zz-sentinel-zz") == NULL, "%s: no message of its own (\"%s\")", what, m);
  EXPECT(needle == NULL || strstr(m, needle) != NULL, "%s: message \"%s\" does not mention \"%s\"", what, m, needle);
}

/* valgrind reports a malloc of more than PTRDIFF_MAX bytes as an error
 * ("fishy argument"), so the cases whose allocation is that large on
 * purpose -- the largest shapes the size rules accept -- are left to the
 * native and sanitizer runs; others at 2^62 bytes still fail to allocate
 * under valgrind. */
static bool under_valgrind(void) {
  const char *p = getenv("LD_PRELOAD");
  return p != NULL && strstr(p, "vgpreload") != NULL;
}

static bool all_bytes(const void *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i++)
    if (((const unsigned char *)p)[i] != v) return false;
  return true;
}

static qgemv_ctx *open_cpu(void) {
  qgemv_ctx *ctx = NULL;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  return ctx;
}

#define POISON 0x5a
#define P2(e) ((int64_t)1 << (e))

/* ---- weight shapes at the size limits ----------------------------------- */

typedef struct shape_case {
  const char *what;
  qgemv_format f;
  int64_t n, k;
  int32_t g;
  size_t bytes, scales; /* expected; 0: must be rejected */
} shape_case;

/* Each valid case is the largest of its kind whose byte count still fits
 * int64; the case after it is the smallest that does not. */
static const shape_case shapes[] = {
    /* NF4: data n*k/2 bytes in 32-byte blocks of 64 */
    {"NF4 k=64*(2^57-1) n=2: 2^63-64 bytes", QGEMV_NF4, 2, (INT64_MAX / 64) * 64, 64, (size_t)INT64_MAX - 63,
     ((size_t)1 << 58) - 2},
    {"NF4 k=64*(2^57-1) n=3: past 2^63", QGEMV_NF4, 3, (INT64_MAX / 64) * 64, 64, 0, 0},
    {"NF4 n=2^32 k=2^31: 2^62 bytes", QGEMV_NF4, P2(32), P2(31), 0, (size_t)1 << 62, (size_t)1 << 57},
    {"NF4 n=2^33 k=2^31: 2^63 bytes", QGEMV_NF4, P2(33), P2(31), 0, 0, 0},
    {"NF4 n=2^40 k=2^40: n*k/64 past 2^63", QGEMV_NF4, P2(40), P2(40), 64, 0, 0},
    {"NF4 n=INT64_MAX k=64", QGEMV_NF4, INT64_MAX, 64, 64, 0, 0},
    {"NF4 n=1 k=INT64_MAX", QGEMV_NF4, 1, INT64_MAX, 64, 0, 0},
    {"NF4 n=INT64_MIN", QGEMV_NF4, INT64_MIN, 64, 64, 0, 0},
    {"NF4 k=INT64_MIN", QGEMV_NF4, 1, INT64_MIN, 64, 0, 0},
    {"NF4 k=-64", QGEMV_NF4, 1, -64, 64, 0, 0},
    {"NF4 group INT32_MIN", QGEMV_NF4, 1, 64, INT32_MIN, 0, 0},
    {"NF4 group INT32_MAX", QGEMV_NF4, 1, 64, INT32_MAX, 0, 0},
    {"NF4 group -64", QGEMV_NF4, 1, 64, -64, 0, 0},
    /* Q2_0 g=64: 18-byte blocks */
    {"Q2_0/64 n=INT64_MAX/18: 2^63-8 bytes", QGEMV_Q2_0, INT64_MAX / 18, 64, 64, (size_t)(INT64_MAX / 18) * 18, 0},
    {"Q2_0/64 n=INT64_MAX/18+1: past 2^63", QGEMV_Q2_0, INT64_MAX / 18 + 1, 64, 64, 0, 0},
    {"Q2_0/64 k=64*(2^57-1) n=1", QGEMV_Q2_0, 1, (INT64_MAX / 64) * 64, 64, ((size_t)1 << 57) * 18 - 18, 0},
    {"Q2_0/64 k=64*(2^57-1) n=4: past 2^63", QGEMV_Q2_0, 4, (INT64_MAX / 64) * 64, 64, 0, 0},
    /* Q2_0 g=128: 34-byte blocks */
    {"Q2_0/128 n=INT64_MAX/34: just under 2^63", QGEMV_Q2_0, INT64_MAX / 34, 128, 128,
     (size_t)(INT64_MAX / 34) * 34, 0},
    {"Q2_0/128 n=INT64_MAX/34+1: past 2^63", QGEMV_Q2_0, INT64_MAX / 34 + 1, 128, 128, 0, 0},
    {"Q2_0/128 n=2^31 k=2^32", QGEMV_Q2_0, P2(31), P2(32), 128, ((size_t)1 << 56) * 34, 0},
    {"Q2_0/128 n=2^32 k=2^32: 2^57 blocks", QGEMV_Q2_0, P2(32), P2(32), 128, ((size_t)1 << 57) * 34, 0},
    {"Q2_0/128 n=2^33 k=2^32: 2^58 blocks past 2^63 bytes", QGEMV_Q2_0, P2(33), P2(32), 128, 0, 0},
    {"Q2_0 n=INT64_MAX k=INT64_MAX", QGEMV_Q2_0, INT64_MAX, INT64_MAX, 64, 0, 0},
    {"Q2_0 n=-1 k=-64 (product positive)", QGEMV_Q2_0, -1, -64, 64, 0, 0},
    {"Q2_0 group INT32_MIN", QGEMV_Q2_0, 1, 128, INT32_MIN, 0, 0},
    {"Q2_0 group 192", QGEMV_Q2_0, 3, 192, 192, 0, 0},
    {"Q2_0 group 32", QGEMV_Q2_0, 1, 64, 32, 0, 0},
};

START_TEST(shape_limits_host) {
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const shape_case *c = &shapes[i];
    sentinel();
    size_t b = qgemv_data_bytes(c->f, c->n, c->k, c->g);
    if (c->bytes == 0) {
      EXPECT(b == 0, "qgemv_data_bytes(%s) = %zu, expected 0", c->what, b);
      expect_fail(QGEMV_ERR_INVALID_ARG, QGEMV_ERR_INVALID_ARG, NULL, c->what);
      sentinel();
      size_t s = qgemv_scale_count(c->f, c->n, c->k, c->g);
      EXPECT(s == 0, "qgemv_scale_count(%s) = %zu", c->what, s);
      expect_fail(QGEMV_ERR_INVALID_ARG, QGEMV_ERR_INVALID_ARG, NULL, c->what);
    } else {
      /* positive control at the boundary: the exact size, no message */
      EXPECT(b == c->bytes, "qgemv_data_bytes(%s) = %zu, expected %zu (%s)", c->what, b, c->bytes,
             qgemv_last_error());
      size_t s = qgemv_scale_count(c->f, c->n, c->k, c->g);
      EXPECT(s == c->scales, "qgemv_scale_count(%s) = %zu, expected %zu", c->what, s, c->scales);
    }
  }
}
END_TEST

/* The rejected shapes through every call that takes a shape: nothing may be
 * read from the (tiny) buffers or written to the outputs. */
START_TEST(shape_limits_every_call) {
  qgemv_ctx *ctx = open_cpu();
  static unsigned char data[4096];
  static float scales[64], w[1024], x[1024];
  static double y[64], bound[64];
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const shape_case *c = &shapes[i];
    if (c->bytes != 0) continue; /* valid but huge: would read past the buffers */
    qgemv_weight_desc d = {.format = c->f, .n = c->n, .k = c->k, .group = c->g, .data = data,
                           .scales = c->f == QGEMV_NF4 ? scales : NULL};
    memset(data, POISON, sizeof data);
    memset(scales, POISON, sizeof scales);
    memset(w, POISON, sizeof w);
    memset(y, POISON, sizeof y);
    memset(bound, POISON, sizeof bound);
    for (size_t j = 0; j < 1024; j++) x[j] = 1.0f;

    sentinel();
    expect_fail(qgemv_quantize(c->f, c->n, c->k, c->g, x, data, scales), QGEMV_ERR_INVALID_ARG, NULL, c->what);
    EXPECT(all_bytes(data, sizeof data, POISON) && all_bytes(scales, sizeof scales, POISON),
           "quantize(%s) wrote its outputs", c->what);
    qgemv_weight *wt = (qgemv_weight *)&wt;
    sentinel();
    expect_fail(qgemv_weight_upload(ctx, &d, &wt), QGEMV_ERR_INVALID_ARG, NULL, c->what);
    EXPECT(wt == NULL, "upload(%s) left *out set", c->what);
    sentinel();
    expect_fail(qgemv_dequantize(&d, w), QGEMV_ERR_INVALID_ARG, NULL, c->what);
    EXPECT(all_bytes(w, sizeof w, POISON), "dequantize(%s) wrote w", c->what);
    sentinel();
    expect_fail(qgemv_reference_matvec(&d, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, y, bound), QGEMV_ERR_INVALID_ARG,
                NULL, c->what);
    EXPECT(all_bytes(y, sizeof y, POISON) && all_bytes(bound, sizeof bound, POISON),
           "reference_matvec(%s) wrote y", c->what);
  }
  qgemv_close(ctx);
}
END_TEST

/* qgemv_reference_matvec sizes its activation workspace m*k doubles: the
 * largest m that fits size_t reaches malloc (NO_MEMORY), one more is
 * rejected; y and bound are left alone either way. */
START_TEST(reference_m_limits) {
  rng r = {.s = 61};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_Q2_0, 64, 1, 64, &hw);
  float x[64] = {0};
  double y[4], bound[4];
  static const struct {
    int64_t m;
    qgemv_status want;
  } ms[] = {
      {P2(55) - 1, QGEMV_ERR_NO_MEMORY}, /* (2^55-1)*64*8 bytes: fits size_t, not memory */
      {P2(53), QGEMV_ERR_NO_MEMORY},     /* 2^62 bytes */
      {P2(55), QGEMV_ERR_INVALID_ARG},   /* 2^61 doubles: 2^64 bytes */
      {P2(58), QGEMV_ERR_INVALID_ARG},   {INT64_MAX / 64 + 1, QGEMV_ERR_INVALID_ARG},
      {INT64_MAX, QGEMV_ERR_INVALID_ARG}, {INT64_MIN, QGEMV_ERR_INVALID_ARG},
  };
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
    if (ms[i].m == P2(55) - 1 && under_valgrind()) continue; /* malloc(2^64 - 512) */
    memset(y, POISON, sizeof y);
    memset(bound, POISON, sizeof bound);
    char what[64];
    snprintf(what, sizeof what, "reference_matvec m=%lld", (long long)ms[i].m);
    sentinel();
    expect_fail(qgemv_reference_matvec(&hw.desc, ms[i].m, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, y, bound), ms[i].want,
                NULL, what);
    EXPECT(all_bytes(y, sizeof y, POISON) && all_bytes(bound, sizeof bound, POISON), "%s wrote y", what);
  }
  tu_weight_free(&hw);
}
END_TEST

/* ---- tensor shapes at the size limits ----------------------------------- */

START_TEST(tensor_limits) {
  qgemv_ctx *ctx = open_cpu();
  static const struct {
    qgemv_dtype t;
    int64_t rows, cols;
    qgemv_status want;
  } ts[] = {
      /* bytes = rows*cols*size must fit int64: the largest that does is a
       * valid shape that no machine can allocate */
      {QGEMV_F32, P2(61) - 1, 1, QGEMV_ERR_NO_MEMORY},
      {QGEMV_F32, P2(60), 1, QGEMV_ERR_NO_MEMORY}, /* 2^62 bytes */
      {QGEMV_F32, P2(61), 1, QGEMV_ERR_INVALID_ARG},
      {QGEMV_F32, 1, P2(61), QGEMV_ERR_INVALID_ARG},
      {QGEMV_BF16, P2(62) - 1, 1, QGEMV_ERR_NO_MEMORY},
      {QGEMV_BF16, P2(62), 1, QGEMV_ERR_INVALID_ARG},
      {QGEMV_BF16, P2(31), P2(31), QGEMV_ERR_INVALID_ARG}, /* 2^63 bytes */
      {QGEMV_F32, P2(31), P2(31), QGEMV_ERR_INVALID_ARG},  /* 2^64 bytes: size_t wraps to 0 */
      {QGEMV_F32, P2(31), P2(30), QGEMV_ERR_INVALID_ARG},  /* 2^63 bytes */
      {QGEMV_F32, P2(62), 4, QGEMV_ERR_INVALID_ARG},       /* elements past int64 */
      {QGEMV_BF16, INT64_MAX, 1, QGEMV_ERR_INVALID_ARG},   /* count fits, bytes do not */
      {QGEMV_BF16, INT64_MAX, INT64_MAX, QGEMV_ERR_INVALID_ARG},
      {QGEMV_F32, INT64_MIN, -1, QGEMV_ERR_INVALID_ARG},   /* product would be positive */
      {QGEMV_F32, -1, INT64_MIN, QGEMV_ERR_INVALID_ARG},
      {QGEMV_BF16, -P2(32), -P2(32), QGEMV_ERR_INVALID_ARG},
  };
  _Alignas(64) static unsigned char buf[64];
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
    char what[96];
    if (ts[i].want == QGEMV_ERR_NO_MEMORY && ts[i].rows > P2(60) && under_valgrind()) continue; /* > 2^62 bytes */
    snprintf(what, sizeof what, "tensor_new %s [%lld, %lld]", ts[i].t == QGEMV_F32 ? "f32" : "bf16",
             (long long)ts[i].rows, (long long)ts[i].cols);
    qgemv_tensor *t = (qgemv_tensor *)&t;
    sentinel();
    expect_fail(qgemv_tensor_new(ctx, ts[i].t, ts[i].rows, ts[i].cols, &t), ts[i].want, NULL, what);
    EXPECT(t == NULL, "%s left *out set", what);
    if (ts[i].want == QGEMV_ERR_INVALID_ARG) {
      /* wrap checks the same arithmetic before trusting the pointer */
      t = (qgemv_tensor *)&t;
      snprintf(what, sizeof what, "tensor_wrap %s [%lld, %lld]", ts[i].t == QGEMV_F32 ? "f32" : "bf16",
               (long long)ts[i].rows, (long long)ts[i].cols);
      sentinel();
      expect_fail(qgemv_tensor_wrap(ctx, ts[i].t, ts[i].rows, ts[i].cols, buf, &t), QGEMV_ERR_INVALID_ARG, NULL,
                  what);
      EXPECT(t == NULL, "%s left *out set", what);
    }
  }
  /* the context survives every refusal */
  qgemv_tensor *t;
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 4, 4, &t));
  qgemv_close(ctx);
}
END_TEST

/* ---- enum garbage --------------------------------------------------------- */

static const int garbage[] = {2, 3, 7, 255, 0x10000, INT_MAX, -1, -2, INT_MIN};
enum { NGARBAGE = sizeof garbage / sizeof garbage[0] };

START_TEST(dtype_garbage) {
  qgemv_ctx *ctx = open_cpu();
  rng r = {.s = 62};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, 2, 64, &hw);
  _Alignas(64) static unsigned char buf[256];
  float x[64], gamma[64];
  fill_random(&r, DIST_NORMAL, x, 64);
  fill_random(&r, DIST_NORMAL, gamma, 64);
  double y[2], bound[2];
  for (int i = 0; i < NGARBAGE; i++) {
    qgemv_dtype t = (qgemv_dtype)garbage[i];
    char what[64];
    qgemv_tensor *out = (qgemv_tensor *)&out;
    snprintf(what, sizeof what, "tensor_new dtype %d", garbage[i]);
    sentinel();
    expect_fail(qgemv_tensor_new(ctx, t, 2, 2, &out), QGEMV_ERR_INVALID_ARG, "dtype", what);
    EXPECT(out == NULL, "%s left *out set", what);
    out = (qgemv_tensor *)&out;
    snprintf(what, sizeof what, "tensor_wrap dtype %d", garbage[i]);
    sentinel();
    expect_fail(qgemv_tensor_wrap(ctx, t, 2, 2, buf, &out), QGEMV_ERR_INVALID_ARG, "dtype", what);
    EXPECT(out == NULL, "%s left *out set", what);

    memset(y, POISON, sizeof y);
    memset(bound, POISON, sizeof bound);
    snprintf(what, sizeof what, "reference_matvec x_dtype %d", garbage[i]);
    sentinel();
    expect_fail(qgemv_reference_matvec(&hw.desc, 1, t, x, QGEMV_F32, NULL, 0.0f, y, bound), QGEMV_ERR_INVALID_ARG,
                NULL, what);
    snprintf(what, sizeof what, "reference_matvec gamma_dtype %d", garbage[i]);
    sentinel();
    expect_fail(qgemv_reference_matvec(&hw.desc, 1, QGEMV_F32, x, t, gamma, 1e-5f, y, bound), QGEMV_ERR_INVALID_ARG,
                NULL, what);
    EXPECT(all_bytes(y, sizeof y, POISON) && all_bytes(bound, sizeof bound, POISON), "%s wrote y", what);
  }
  tu_weight_free(&hw);
  qgemv_close(ctx);
}
END_TEST

START_TEST(format_garbage) {
  qgemv_ctx *ctx = open_cpu();
  static unsigned char data[1024];
  static float scales[16], w[2 * 128];
  static double y[4];
  float x[128];
  for (int j = 0; j < 128; j++) x[j] = 0.5f;
  for (int i = 0; i < NGARBAGE; i++) {
    qgemv_format f = (qgemv_format)garbage[i];
    char what[64];
    snprintf(what, sizeof what, "format %d", garbage[i]);
    for (int g = 0; g <= 128; g += 64) {
      sentinel();
      EXPECT(qgemv_data_bytes(f, 2, 128, g) == 0, "data_bytes(%s)", what);
      expect_fail(QGEMV_ERR_INVALID_ARG, QGEMV_ERR_INVALID_ARG, "format", what);
      sentinel();
      EXPECT(qgemv_scale_count(f, 2, 128, g) == 0, "scale_count(%s)", what);
      expect_fail(QGEMV_ERR_INVALID_ARG, QGEMV_ERR_INVALID_ARG, "format", what);
    }
    memset(data, POISON, sizeof data);
    memset(scales, POISON, sizeof scales);
    memset(w, POISON, sizeof w);
    memset(y, POISON, sizeof y);
    sentinel();
    expect_fail(qgemv_quantize(f, 2, 128, 64, x, data, scales), QGEMV_ERR_INVALID_ARG, "format", what);
    EXPECT(all_bytes(data, sizeof data, POISON) && all_bytes(scales, sizeof scales, POISON),
           "quantize(%s) wrote its outputs", what);
    /* a descriptor whose buffers would be valid for either format */
    memset(data, 0, sizeof data);
    memset(scales, 0, sizeof scales);
    qgemv_weight_desc d = {.format = f, .n = 2, .k = 128, .group = 64, .data = data, .scales = scales};
    qgemv_weight *wt = (qgemv_weight *)&wt;
    sentinel();
    expect_fail(qgemv_weight_upload(ctx, &d, &wt), QGEMV_ERR_INVALID_ARG, "format", what);
    EXPECT(wt == NULL, "upload(%s) left *out set", what);
    sentinel();
    expect_fail(qgemv_dequantize(&d, w), QGEMV_ERR_INVALID_ARG, "format", what);
    sentinel();
    expect_fail(qgemv_reference_matvec(&d, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, y, NULL), QGEMV_ERR_INVALID_ARG,
                "format", what);
    EXPECT(all_bytes(w, sizeof w, POISON) && all_bytes(y, sizeof y, POISON), "%s: an output was written", what);
  }
  qgemv_close(ctx);
}
END_TEST

/* ---- buffer lengths ------------------------------------------------------- */

/* Lengths that a truncating or wrapping comparison would take for the
 * right one: the right length plus or with high bits, shifted, the other
 * dtype's length, the element count. */
START_TEST(wrong_lengths) {
  qgemv_ctx *ctx = open_cpu();
  for (int dt = 0; dt < 2; dt++) {
    qgemv_dtype t = (qgemv_dtype)dt;
    const size_t right = 3 * 5 * tu_dtype_size(t), other = 3 * 5 * tu_dtype_size((qgemv_dtype)!dt);
    const size_t lengths[] = {
        other, 15, right + ((size_t)1 << 32), right | ((size_t)1 << 63), right << 32, right << 48,
        SIZE_MAX - right + 1, /* right + this wraps to 0 */
        (size_t)0 - right,    /* -right */
        SIZE_MAX / 2 + 1 + right,
    };
    tu_guarded mem = tu_guarded_new(right); /* tensor memory, 0xff */
    qgemv_tensor *x = NULL;
    EXPECT_OK(qgemv_tensor_wrap(ctx, t, 3, 5, mem.mem, &x));
    unsigned char host[128];
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
      char what[96];
      snprintf(what, sizeof what, "%s [3, 5] with bytes=%zu", dt ? "bf16" : "f32", lengths[i]);
      memset(host, 0x11, sizeof host);
      sentinel();
      expect_fail(qgemv_tensor_write(x, host, lengths[i]), QGEMV_ERR_INVALID_ARG, "bytes", what);
      EXPECT(all_bytes(mem.mem, right, 0xff) && tu_guard_intact(&mem), "write %s changed the tensor", what);
      sentinel();
      expect_fail(qgemv_tensor_read(x, host, lengths[i]), QGEMV_ERR_INVALID_ARG, "bytes", what);
      EXPECT(all_bytes(host, sizeof host, 0x11), "read %s changed the host buffer", what);
    }
    tu_guarded_free(&mem);
  }
  qgemv_close(ctx);
}
END_TEST

/* ---- handles of the wrong kind ------------------------------------------ */

/* Every handle starts with its magic number, so a handle of one kind passed
 * as another is recognised without reading past its end; frees of the wrong
 * kind must do nothing. */
START_TEST(handle_confusion) {
  qgemv_ctx *ctx = open_cpu();
  rng r = {.s = 63};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, 64, 64, &hw);
  qgemv_weight *w;
  EXPECT_OK(qgemv_weight_upload(ctx, &hw.desc, &w));
  tu_guarded xmem = tu_guarded_new(64 * sizeof(float)), ymem = tu_guarded_new(64 * sizeof(float));
  for (int j = 0; j < 64; j++) ((float *)xmem.mem)[j] = 0.25f * (float)(j % 7) - 0.5f;
  qgemv_tensor *x, *y;
  EXPECT_OK(qgemv_tensor_wrap(ctx, QGEMV_F32, 1, 64, xmem.mem, &x));
  EXPECT_OK(qgemv_tensor_wrap(ctx, QGEMV_F32, 1, 64, ymem.mem, &y));
  qgemv_ctx *wctx = (qgemv_ctx *)(void *)w, *tctx = (qgemv_ctx *)(void *)x;
  qgemv_weight *tw = (qgemv_weight *)(void *)x;
  qgemv_tensor *wt = (qgemv_tensor *)(void *)w, *ct = (qgemv_tensor *)(void *)ctx;
  qgemv_rmsnorm wnorm = {.gamma = wt, .eps = 1e-5f};

  sentinel();
  expect_fail(qgemv_matvec(wctx, w, x, y, NULL), QGEMV_ERR_INVALID_ARG, NULL, "matvec ctx = a weight");
  sentinel();
  expect_fail(qgemv_matvec(tctx, w, x, y, NULL), QGEMV_ERR_INVALID_ARG, NULL, "matvec ctx = a tensor");
  sentinel();
  expect_fail(qgemv_matvec(ctx, tw, x, y, NULL), QGEMV_ERR_INVALID_ARG, NULL, "matvec w = a tensor");
  sentinel();
  expect_fail(qgemv_matvec(ctx, w, wt, y, NULL), QGEMV_ERR_INVALID_ARG, NULL, "matvec x = a weight");
  sentinel();
  expect_fail(qgemv_matvec(ctx, w, x, ct, NULL), QGEMV_ERR_INVALID_ARG, NULL, "matvec y = a context");
  sentinel();
  expect_fail(qgemv_matvec(ctx, w, x, y, &wnorm), QGEMV_ERR_INVALID_ARG, NULL, "matvec gamma = a weight");
  sentinel();
  expect_fail(qgemv_sync(wctx), QGEMV_ERR_INVALID_ARG, NULL, "sync on a weight");
  sentinel();
  expect_fail(qgemv_set_stream(tctx, NULL), QGEMV_ERR_INVALID_ARG, NULL, "set_stream on a tensor");
  qgemv_device_info info;
  memset(&info, POISON, sizeof info);
  sentinel();
  expect_fail(qgemv_ctx_info(wctx, &info), QGEMV_ERR_INVALID_ARG, NULL, "ctx_info on a weight");
  EXPECT(all_bytes(&info, sizeof info, POISON), "ctx_info on a weight wrote info");
  unsigned char host[64 * 4];
  memset(host, 0x11, sizeof host);
  sentinel();
  expect_fail(qgemv_tensor_read(wt, host, sizeof host), QGEMV_ERR_INVALID_ARG, NULL, "tensor_read of a weight");
  EXPECT(all_bytes(host, sizeof host, 0x11), "tensor_read of a weight wrote the host buffer");
  sentinel();
  expect_fail(qgemv_tensor_write(ct, host, sizeof host), QGEMV_ERR_INVALID_ARG, NULL, "tensor_write to a context");
  void *p = &p;
  sentinel();
  expect_fail(qgemv_tensor_ptr(wt, &p), QGEMV_ERR_INVALID_ARG, NULL, "tensor_ptr of a weight");
  EXPECT(p == &p, "tensor_ptr of a weight wrote *backend_ptr");
  qgemv_weight *w2 = (qgemv_weight *)&w2;
  qgemv_weight_desc d = hw.desc;
  sentinel();
  expect_fail(qgemv_weight_upload(tctx, &d, &w2), QGEMV_ERR_INVALID_ARG, NULL, "upload to a tensor");
  EXPECT(w2 == NULL, "upload to a tensor left *out set");
  count_case();
  EXPECT(qgemv_weight_resident_bytes(tw) == 0, "resident_bytes of a tensor");
  count_case();
  EXPECT(qgemv_ctx_backend(wctx) == NULL && qgemv_ctx_device(tctx) == -1, "ctx queries on other handles");
  EXPECT(all_bytes(ymem.mem, ymem.bytes, 0xff) && tu_guard_intact(&ymem), "y was written on error");

  /* frees of the wrong kind are no-ops: everything still works after */
  qgemv_tensor_free(wt);
  qgemv_weight_free(tw);
  qgemv_close(wctx);
  qgemv_close(tctx);
  qgemv_tensor_free(ct);
  for (int i = 0; i < 5; i++) count_case();
  EXPECT_OK(qgemv_matvec(ctx, w, x, y, NULL));
  EXPECT_OK(qgemv_sync(ctx));
  EXPECT(!all_bytes(ymem.mem, 4, 0xff) && tu_guard_intact(&ymem), "the control matvec did not write y");
  qgemv_close(ctx);
  tu_guarded_free(&xmem);
  tu_guarded_free(&ymem);
  tu_weight_free(&hw);
}
END_TEST

int main(void) {
  cases = mmap(NULL, sizeof *cases, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (cases == MAP_FAILED) return 99;
  Suite *s = suite_create("hardening_inputs");
  TCase *sizes = tcase_create("sizes");
  tcase_add_test(sizes, shape_limits_host);
  tcase_add_test(sizes, shape_limits_every_call);
  tcase_add_test(sizes, reference_m_limits);
  tcase_add_test(sizes, tensor_limits);
  suite_add_tcase(s, sizes);
  TCase *garb = tcase_create("garbage");
  tcase_add_test(garb, dtype_garbage);
  tcase_add_test(garb, format_garbage);
  tcase_add_test(garb, wrong_lengths);
  tcase_add_test(garb, handle_confusion);
  suite_add_tcase(s, garb);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  printf("hardening inputs: %lu bad inputs tried\n", *cases);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
