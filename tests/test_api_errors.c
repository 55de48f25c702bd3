/*
 * Every invalid argument of every public call: the right status, a message
 * of the call's own in qgemv_last_error(), no crash (Check forks each test,
 * so a crash fails only its test), and outputs left unwritten.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Leaves a recognisable message behind, so that a call under test must
 * replace it with one of its own. */
static void sentinel(void) {
  int d = 0;
  qgemv_backend_probe("zz-sentinel-zz", &d);
}

/* The current message is non-empty and not the sentinel's. */
static void expect_own_message(const char *call) {
  const char *m = qgemv_last_error();
  if (m == NULL || m[0] == '\0' || strstr(m, "zz-sentinel-zz"))
    ck_abort_msg("%s: qgemv_last_error() is not this call's (\"%s\")", call, m ? m : "(null)");
}

/* call must return `want` with a message of its own. */
#define EXPECT_ERR(want, call)                                                                              \
  do {                                                                                                      \
    sentinel();                                                                                             \
    qgemv_status s_ = (call);                                                                               \
    if (s_ != (want))                                                                                       \
      ck_abort_msg("line %d: %s returned %s, expected %s (%s)", __LINE__, #call, qgemv_status_str(s_),     \
                   qgemv_status_str(want), qgemv_last_error());                                             \
    expect_own_message(#call);                                                                              \
  } while (0)

#define EXPECT_OK(call)                                                                                     \
  do {                                                                                                      \
    qgemv_status s_ = (call);                                                                               \
    if (s_ != QGEMV_OK) ck_abort_msg("line %d: %s: %s (%s)", __LINE__, #call, qgemv_status_str(s_),        \
                                     qgemv_last_error());                                                   \
  } while (0)

static bool all_bytes(const void *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i++)
    if (((const unsigned char *)p)[i] != v) return false;
  return true;
}

static qgemv_ctx *open_cpu(void) {
  qgemv_ctx *ctx = NULL;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  ck_assert_ptr_nonnull(ctx);
  return ctx;
}

/* ---- contexts, streams, diagnostics ------------------------------------ */

START_TEST(open_and_close) {
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_open("cpu", NULL));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_open(NULL, NULL));
  qgemv_ctx *ctx = (qgemv_ctx *)&ctx; /* a failed open must clear *out */
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, qgemv_open("nonesuch", &ctx));
  ck_assert_ptr_null(ctx);
  /* NULL-safe frees */
  qgemv_close(NULL);
  qgemv_weight_free(NULL);
  qgemv_tensor_free(NULL);
  /* closing a context frees what is still alive on it */
  ctx = open_cpu();
  qgemv_tensor *t = NULL;
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 2, 3, &t));
  rng r = {.s = 1};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, 2, 64, &hw);
  qgemv_weight *w = NULL;
  EXPECT_OK(qgemv_weight_upload(ctx, &hw.desc, &w));
  qgemv_close(ctx);
  tu_weight_free(&hw);
}
END_TEST

START_TEST(context_queries) {
  qgemv_ctx *ctx = open_cpu();
  sentinel();
  ck_assert_ptr_null(qgemv_ctx_backend(NULL));
  expect_own_message("qgemv_ctx_backend(NULL)");
  sentinel();
  ck_assert_int_eq(qgemv_ctx_device(NULL), -1);
  expect_own_message("qgemv_ctx_device(NULL)");
  ck_assert_str_eq(qgemv_ctx_backend(ctx), "cpu");
  ck_assert_int_eq(qgemv_ctx_device(ctx), 0);

  qgemv_device_info info;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_ctx_info(NULL, &info));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_ctx_info(ctx, NULL));
  EXPECT_OK(qgemv_ctx_info(ctx, &info));

  int token;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_set_stream(NULL, NULL));
  EXPECT_ERR(QGEMV_ERR_UNSUPPORTED, qgemv_set_stream(ctx, &token));
  EXPECT_OK(qgemv_set_stream(ctx, NULL));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_sync(NULL));
  EXPECT_OK(qgemv_sync(ctx));

  int devices = -7;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_backend_probe(NULL, &devices));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_backend_probe("cpu", NULL));
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, qgemv_backend_probe("nonesuch", &devices));
  ck_assert_ptr_null(qgemv_backend_name(-1));
  ck_assert_ptr_null(qgemv_backend_name(qgemv_backend_count()));

  double gbs = -1.0, secs = -1.0;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_read_bandwidth(NULL, 1 << 20, &gbs));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_read_bandwidth(ctx, 1 << 20, NULL));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_read_bandwidth(ctx, 100, &gbs));
  ck_assert(gbs == -1.0);
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_dense_bf16(NULL, 64, 64, 1, 1, 0.0, &secs));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_dense_bf16(ctx, 64, 64, 1, 1, 0.0, NULL));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_dense_bf16(ctx, 0, 64, 1, 1, 0.0, &secs));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_dense_bf16(ctx, 64, -64, 1, 1, 0.0, &secs));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_dense_bf16(ctx, 64, 64, 0, 1, 0.0, &secs));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_dense_bf16(ctx, 64, 64, 1, 0, 0.0, &secs));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_dense_bf16(ctx, 64, 64, 1, 1, -1.0, &secs));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_measure_dense_bf16(ctx, 64, 64, 1, 1, NAN, &secs));
  /* valid, but the CPU backend has no vendor dense GEMV */
  EXPECT_ERR(QGEMV_ERR_UNSUPPORTED, qgemv_measure_dense_bf16(ctx, 64, 64, 1, 1, 0.0, &secs));
  ck_assert(secs == -1.0);
  ck_assert_ptr_null(qgemv_ctx_dense_library(ctx));
  ck_assert_msg(strstr(qgemv_last_error(), "cpu") != NULL, "no reason: %s", qgemv_last_error());
  ck_assert_ptr_null(qgemv_ctx_dense_library(NULL));
  ck_assert_msg(strstr(qgemv_last_error(), "NULL") != NULL, "no reason: %s", qgemv_last_error());
  qgemv_close(ctx);
}
END_TEST

START_TEST(status_strings) {
  static const qgemv_status all[] = {QGEMV_OK,           QGEMV_ERR_INVALID_ARG, QGEMV_ERR_UNSUPPORTED,
                                     QGEMV_ERR_NO_BACKEND, QGEMV_ERR_NO_DEVICE, QGEMV_ERR_NO_MEMORY,
                                     QGEMV_ERR_DEVICE,   QGEMV_ERR_BAD_DATA,    QGEMV_ERR_ABI};
  size_t count = sizeof all / sizeof all[0];
  for (size_t i = 0; i < count; i++) {
    const char *s = qgemv_status_str(all[i]);
    ck_assert_ptr_nonnull(s);
    ck_assert(s[0] != '\0');
    for (size_t j = 0; j < i; j++) ck_assert_str_ne(s, qgemv_status_str(all[j]));
  }
  const char *unknown = qgemv_status_str((qgemv_status)42);
  ck_assert_ptr_nonnull(unknown);
  ck_assert(unknown[0] != '\0');
}
END_TEST

/* ---- weights ------------------------------------------------------------ */

/* desc with one field changed must fail with `want`, *out cleared. */
static void expect_upload_fails(qgemv_ctx *ctx, qgemv_weight_desc d, qgemv_status want, const char *what) {
  qgemv_weight *w = (qgemv_weight *)&w;
  sentinel();
  qgemv_status s = qgemv_weight_upload(ctx, &d, &w);
  if (s != want)
    ck_abort_msg("upload with %s: %s, expected %s (%s)", what, qgemv_status_str(s), qgemv_status_str(want),
                 qgemv_last_error());
  expect_own_message(what);
  ck_assert_msg(w == NULL, "upload with %s left *out set", what);
}

START_TEST(weight_upload_errors) {
  qgemv_ctx *ctx = open_cpu();
  rng r = {.s = 2};
  tu_weight nf4, q2;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, 4, 256, &nf4);
  tu_weight_make(&r, DIST_NORMAL, QGEMV_Q2_0, 128, 4, 256, &q2);
  qgemv_weight *w = (qgemv_weight *)&w;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_weight_upload(ctx, &nf4.desc, NULL));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_weight_upload(NULL, &nf4.desc, &w));
  ck_assert_ptr_null(w);
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_weight_upload(ctx, NULL, &w));

  struct {
    const char *what;
    int field; /* 0 format, 1 n, 2 k, 3 group */
    int64_t value;
    bool nf4;
  } bad[] = {
      {"format 2", 0, 2, true},          {"format -1", 0, -1, false},       {"n 0", 1, 0, true},
      {"n -1", 1, -1, false},            {"k 0", 2, 0, true},               {"k -64", 2, -64, false},
      {"NF4 k 96", 2, 96, true},         {"Q2_0 g128 k 192", 2, 192, false}, {"NF4 group 32", 3, 32, true},
      {"NF4 group 128", 3, 128, true},   {"Q2_0 group 0", 3, 0, false},     {"Q2_0 group 32", 3, 32, false},
      {"Q2_0 group 96", 3, 96, false},   {"Q2_0 group 256", 3, 256, false}, {"Q2_0 group -64", 3, -64, false},
      {"n INT64_MAX", 1, INT64_MAX, true}, {"n 2^40 k 2^40", 4, 0, false},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    qgemv_weight_desc d = bad[i].nf4 ? nf4.desc : q2.desc;
    if (bad[i].field == 0) d.format = (qgemv_format)bad[i].value;
    if (bad[i].field == 1) d.n = bad[i].value;
    if (bad[i].field == 2) d.k = bad[i].value;
    if (bad[i].field == 3) d.group = (int32_t)bad[i].value;
    if (bad[i].field == 4) d.n = d.k = (int64_t)1 << 40; /* n*k/g*34 overflows 64 bits */
    expect_upload_fails(ctx, d, QGEMV_ERR_INVALID_ARG, bad[i].what);
  }
  qgemv_weight_desc d = nf4.desc;
  d.data = NULL;
  expect_upload_fails(ctx, d, QGEMV_ERR_INVALID_ARG, "NF4 data NULL");
  d = nf4.desc;
  d.scales = NULL;
  expect_upload_fails(ctx, d, QGEMV_ERR_INVALID_ARG, "NF4 scales NULL");
  d = q2.desc;
  d.data = NULL;
  expect_upload_fails(ctx, d, QGEMV_ERR_INVALID_ARG, "Q2_0 data NULL");
  d = q2.desc;
  d.scales = nf4.scales;
  expect_upload_fails(ctx, d, QGEMV_ERR_INVALID_ARG, "Q2_0 with scales");

  /* non-finite scales are bad data */
  float saved = nf4.scales[5];
  nf4.scales[5] = NAN;
  expect_upload_fails(ctx, nf4.desc, QGEMV_ERR_BAD_DATA, "NF4 NaN scale");
  nf4.scales[5] = -INFINITY;
  expect_upload_fails(ctx, nf4.desc, QGEMV_ERR_BAD_DATA, "NF4 -inf scale");
  nf4.scales[5] = saved;
  uint8_t *blk = (uint8_t *)q2.data + 3 * 34; /* row 1 block 1 */
  uint8_t lo = blk[0], hi = blk[1];
  blk[0] = 0x00;
  blk[1] = 0x7c;
  expect_upload_fails(ctx, q2.desc, QGEMV_ERR_BAD_DATA, "Q2_0 inf d");
  blk[0] = lo;
  blk[1] = hi;

  sentinel();
  ck_assert_uint_eq(qgemv_weight_resident_bytes(NULL), 0);
  expect_own_message("qgemv_weight_resident_bytes(NULL)");
  /* positive controls: the unmodified descriptors are fine, and resident
   * bytes stay within 1.1x of the packed size (DESIGN.md s.6) */
  EXPECT_OK(qgemv_weight_upload(ctx, &nf4.desc, &w));
  size_t packed = 4 * 256 / 2 + 4 * 4 * sizeof(float);
  ck_assert_uint_ge(qgemv_weight_resident_bytes(w), packed);
  ck_assert_uint_le(qgemv_weight_resident_bytes(w), packed + packed / 10);
  qgemv_weight_free(w);
  EXPECT_OK(qgemv_weight_upload(ctx, &q2.desc, &w));
  qgemv_weight_free(w);
  d = nf4.desc;
  d.group = 0; /* NF4 accepts 0 for its one block size */
  EXPECT_OK(qgemv_weight_upload(ctx, &d, &w));
  qgemv_weight_free(w);

  /* upload_for_m: a negative max_m is refused in words, *out cleared;
   * 0, 1 and large ones upload (the CPU has one form for every m) */
  w = (qgemv_weight *)&w;
  sentinel();
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_weight_upload_for_m(ctx, &nf4.desc, -1, &w));
  expect_own_message("upload_for_m max_m -1");
  ck_assert_msg(strstr(qgemv_last_error(), "max_m") != NULL, "message: %s", qgemv_last_error());
  ck_assert_ptr_null(w);
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_weight_upload_for_m(ctx, &nf4.desc, 1, NULL));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_weight_upload_for_m(NULL, &nf4.desc, 1, &w));
  d = nf4.desc;
  d.k = 96; /* the descriptor's checks as qgemv_weight_upload's */
  sentinel();
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_weight_upload_for_m(ctx, &d, 1, &w));
  expect_own_message("upload_for_m NF4 k 96");
  ck_assert_ptr_null(w);
  const int64_t max_ms[] = {0, 1, 8, INT64_MAX};
  for (size_t i = 0; i < sizeof max_ms / sizeof max_ms[0]; i++) {
    EXPECT_OK(qgemv_weight_upload_for_m(ctx, &q2.desc, max_ms[i], &w));
    const char *form = qgemv_weight_form(w);
    ck_assert_msg(form && (strcmp(form, "packed") == 0 || strcmp(form, "interleaved") == 0), "CPU form %s",
                  form ? form : "NULL");
    qgemv_weight_free(w);
  }
  sentinel();
  ck_assert_ptr_null(qgemv_weight_form(NULL));
  expect_own_message("qgemv_weight_form(NULL)");
  tu_weight_free(&nf4);
  tu_weight_free(&q2);
  qgemv_close(ctx);
}
END_TEST

/* ---- tensors ------------------------------------------------------------ */

static void expect_new_fails(qgemv_ctx *ctx, qgemv_dtype t, int64_t rows, int64_t cols, const char *what) {
  qgemv_tensor *out = (qgemv_tensor *)&out;
  sentinel();
  qgemv_status s = qgemv_tensor_new(ctx, t, rows, cols, &out);
  if (s != QGEMV_ERR_INVALID_ARG)
    ck_abort_msg("tensor_new %s: %s (%s)", what, qgemv_status_str(s), qgemv_last_error());
  expect_own_message(what);
  ck_assert_msg(out == NULL, "tensor_new %s left *out set", what);
}

START_TEST(tensor_new_and_wrap_errors) {
  qgemv_ctx *ctx = open_cpu();
  qgemv_tensor *t = NULL;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_new(ctx, QGEMV_F32, 2, 2, NULL));
  expect_new_fails(NULL, QGEMV_F32, 2, 2, "NULL ctx");
  expect_new_fails(ctx, (qgemv_dtype)2, 2, 2, "dtype 2");
  expect_new_fails(ctx, (qgemv_dtype)-1, 2, 2, "dtype -1");
  expect_new_fails(ctx, QGEMV_F32, 0, 2, "rows 0");
  expect_new_fails(ctx, QGEMV_F32, 2, 0, "cols 0");
  expect_new_fails(ctx, QGEMV_BF16, -1, 2, "rows -1");
  expect_new_fails(ctx, QGEMV_BF16, 2, INT64_MIN, "cols INT64_MIN");
  expect_new_fails(ctx, QGEMV_F32, INT64_MAX, 2, "rows*cols overflows");
  expect_new_fails(ctx, QGEMV_F32, (int64_t)1 << 32, (int64_t)1 << 32, "2^64 elements");
  expect_new_fails(ctx, QGEMV_F32, ((int64_t)1 << 61), 1, "2^61 f32: bytes overflow");
  expect_new_fails(ctx, QGEMV_BF16, ((int64_t)1 << 62) + 1, 1, "2^62+1 bf16: bytes overflow");
  /* element counts whose byte counts wrap size_t to something small */
  expect_new_fails(ctx, QGEMV_F32, ((int64_t)1 << 62) + 1, 1, "2^62+1 f32: bytes wrap to 4");
  expect_new_fails(ctx, QGEMV_F32, (int64_t)1 << 62, 2, "2^63 f32: bytes wrap to 0");

  _Alignas(8) unsigned char buf[64];
  qgemv_tensor *out = (qgemv_tensor *)&out;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_wrap(ctx, QGEMV_F32, 2, 2, NULL, &out));
  ck_assert_ptr_null(out);
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_wrap(ctx, QGEMV_F32, 2, 2, buf, NULL));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_wrap(NULL, QGEMV_F32, 2, 2, buf, &out));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_wrap(ctx, QGEMV_F32, 2, 2, buf + 1, &out));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_wrap(ctx, QGEMV_F32, 2, 2, buf + 2, &out));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_wrap(ctx, QGEMV_BF16, 2, 2, buf + 1, &out));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_wrap(ctx, (qgemv_dtype)7, 2, 2, buf, &out));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_wrap(ctx, QGEMV_F32, 0, 2, buf, &out));
  ck_assert_ptr_null(out);
  /* positive controls */
  EXPECT_OK(qgemv_tensor_wrap(ctx, QGEMV_BF16, 2, 2, buf + 2, &t));
  qgemv_tensor_free(t);
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_BF16, 1, 1, &t));
  qgemv_tensor_free(t);
  qgemv_close(ctx);
}
END_TEST

/* Failing writes leave the tensor alone; failing reads leave the host alone. */
START_TEST(tensor_copy_errors) {
  qgemv_ctx *ctx = open_cpu();
  for (int dt = 0; dt < 2; dt++) {
    qgemv_dtype t = (qgemv_dtype)dt;
    size_t bytes = 3 * 5 * tu_dtype_size(t);
    tu_guarded mem = tu_guarded_new(bytes); /* poisoned 0xff */
    qgemv_tensor *x = NULL;
    EXPECT_OK(qgemv_tensor_wrap(ctx, t, 3, 5, mem.mem, &x));
    unsigned char host[64];
    memset(host, 0x11, sizeof host);
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_write(NULL, host, bytes));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_write(x, NULL, bytes));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_write(x, host, bytes - 1));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_write(x, host, bytes + 1));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_write(x, host, 0));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_write(x, host, SIZE_MAX));
    ck_assert_msg(all_bytes(mem.mem, bytes, 0xff) && tu_guard_intact(&mem), "a failed write changed the tensor");
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_read(NULL, host, bytes));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_read(x, NULL, bytes));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_read(x, host, bytes - 1));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_read(x, host, bytes + 1));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_read(x, host, 0));
    ck_assert_msg(all_bytes(host, sizeof host, 0x11), "a failed read changed the host buffer");
    void *p = NULL;
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_ptr(NULL, &p));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_tensor_ptr(x, NULL));
    /* positive controls */
    EXPECT_OK(qgemv_tensor_write(x, host, bytes));
    EXPECT_OK(qgemv_tensor_read(x, host + 1, bytes));
    EXPECT_OK(qgemv_tensor_ptr(x, &p));
    ck_assert_ptr_eq(p, mem.mem);
    ck_assert(tu_guard_intact(&mem));
    qgemv_tensor_free(x);
    tu_guarded_free(&mem);
  }
  qgemv_close(ctx);
}
END_TEST

/* ---- matvec ------------------------------------------------------------- */

/* Two CPU contexts; a square NF4 weight (so x and y shapes can coincide)
 * and x, gamma on each; y wraps a guarded poisoned buffer. */
typedef struct mv_fixture {
  qgemv_ctx *ctx, *ctx2;
  tu_weight hw;
  qgemv_weight *w, *w2;
  qgemv_tensor *x, *x2, *y, *y2, *g, *g2;
  tu_guarded ymem;
} mv_fixture;

enum { MV_K = 128, MV_M = 2 };

static void mv_setup(mv_fixture *f) {
  memset(f, 0, sizeof *f);
  f->ctx = open_cpu();
  f->ctx2 = open_cpu();
  rng r = {.s = 3};
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, MV_K, MV_K, &f->hw);
  EXPECT_OK(qgemv_weight_upload(f->ctx, &f->hw.desc, &f->w));
  EXPECT_OK(qgemv_weight_upload(f->ctx2, &f->hw.desc, &f->w2));
  float xs[MV_M * MV_K], gs[MV_K];
  fill_random(&r, DIST_NORMAL, xs, MV_M * MV_K);
  fill_random(&r, DIST_NORMAL, gs, MV_K);
  qgemv_ctx *ctxs[2] = {f->ctx, f->ctx2};
  qgemv_tensor **xt[2] = {&f->x, &f->x2}, **gt[2] = {&f->g, &f->g2};
  for (int i = 0; i < 2; i++) {
    EXPECT_OK(qgemv_tensor_new(ctxs[i], QGEMV_F32, MV_M, MV_K, xt[i]));
    EXPECT_OK(qgemv_tensor_write(*xt[i], xs, sizeof xs));
    EXPECT_OK(qgemv_tensor_new(ctxs[i], QGEMV_F32, 1, MV_K, gt[i]));
    EXPECT_OK(qgemv_tensor_write(*gt[i], gs, sizeof gs));
  }
  f->ymem = tu_guarded_new(MV_M * MV_K * sizeof(float));
  EXPECT_OK(qgemv_tensor_wrap(f->ctx, QGEMV_F32, MV_M, MV_K, f->ymem.mem, &f->y));
  EXPECT_OK(qgemv_tensor_new(f->ctx2, QGEMV_F32, MV_M, MV_K, &f->y2));
}

static void mv_teardown(mv_fixture *f) {
  qgemv_close(f->ctx);
  qgemv_close(f->ctx2);
  tu_weight_free(&f->hw);
  tu_guarded_free(&f->ymem);
}

static void expect_y_untouched(const mv_fixture *f, const char *what) {
  ck_assert_msg(all_bytes(f->ymem.mem, f->ymem.bytes, 0xff), "%s: y was written on error", what);
  ck_assert_msg(tu_guard_intact(&f->ymem), "%s: the guard after y was written", what);
}

/* matvec(ctx, w, x, y, norm) fails INVALID_ARG, y keeps its poison. */
static void expect_mv_fails(const mv_fixture *f, qgemv_ctx *ctx, const qgemv_weight *w, const qgemv_tensor *x,
                            qgemv_tensor *y, const qgemv_rmsnorm *norm, const char *what) {
  sentinel();
  qgemv_status s = qgemv_matvec(ctx, w, x, y, norm);
  if (s != QGEMV_ERR_INVALID_ARG)
    ck_abort_msg("matvec with %s: %s, expected INVALID_ARG (%s)", what, qgemv_status_str(s), qgemv_last_error());
  expect_own_message(what);
  expect_y_untouched(f, what);
}

START_TEST(matvec_handle_errors) {
  mv_fixture f;
  mv_setup(&f);
  qgemv_rmsnorm norm = {.gamma = f.g, .eps = 1e-5f}, norm2 = {.gamma = f.g2, .eps = 1e-5f};
  expect_mv_fails(&f, NULL, f.w, f.x, f.y, NULL, "NULL ctx");
  expect_mv_fails(&f, f.ctx, NULL, f.x, f.y, NULL, "NULL weight");
  expect_mv_fails(&f, f.ctx, f.w, NULL, f.y, NULL, "NULL x");
  expect_mv_fails(&f, f.ctx, f.w, f.x, NULL, NULL, "NULL y");
  expect_mv_fails(&f, f.ctx, f.w2, f.x, f.y, NULL, "weight of another context");
  expect_mv_fails(&f, f.ctx, f.w, f.x2, f.y, NULL, "x of another context");
  expect_mv_fails(&f, f.ctx2, f.w2, f.x2, f.y, NULL, "y of another context");
  expect_mv_fails(&f, f.ctx, f.w, f.x, f.y, &norm2, "gamma of another context");
  qgemv_rmsnorm no_gamma = {.gamma = NULL, .eps = 1e-5f};
  expect_mv_fails(&f, f.ctx, f.w, f.x, f.y, &no_gamma, "rmsnorm without gamma");
  /* positive control: the same fixture works, plain and fused */
  EXPECT_OK(qgemv_matvec(f.ctx, f.w, f.x, f.y, &norm));
  EXPECT_OK(qgemv_sync(f.ctx));
  ck_assert(!all_bytes(f.ymem.mem, 4, 0xff) && tu_guard_intact(&f.ymem));
  EXPECT_OK(qgemv_matvec(f.ctx2, f.w2, f.x2, f.y2, &norm2));
  mv_teardown(&f);
}
END_TEST

START_TEST(matvec_shape_errors) {
  mv_fixture f;
  mv_setup(&f);
  qgemv_tensor *x_wide, *y_narrow, *x_rows, *g_long, *g_rows, *g_col;
  EXPECT_OK(qgemv_tensor_new(f.ctx, QGEMV_F32, MV_M, MV_K + 64, &x_wide));
  EXPECT_OK(qgemv_tensor_new(f.ctx, QGEMV_BF16, MV_M, MV_K - 1, &y_narrow));
  EXPECT_OK(qgemv_tensor_new(f.ctx, QGEMV_F32, MV_M + 1, MV_K, &x_rows));
  EXPECT_OK(qgemv_tensor_new(f.ctx, QGEMV_F32, 1, MV_K + 1, &g_long));
  EXPECT_OK(qgemv_tensor_new(f.ctx, QGEMV_BF16, 2, MV_K, &g_rows));
  EXPECT_OK(qgemv_tensor_new(f.ctx, QGEMV_F32, MV_K, 1, &g_col));
  expect_mv_fails(&f, f.ctx, f.w, x_wide, f.y, NULL, "x cols != k");
  expect_mv_fails(&f, f.ctx, f.w, f.x, y_narrow, NULL, "y cols != n");
  expect_mv_fails(&f, f.ctx, f.w, x_rows, f.y, NULL, "x rows != y rows");
  qgemv_tensor *gs[3] = {g_long, g_rows, g_col};
  for (int i = 0; i < 3; i++) {
    qgemv_rmsnorm norm = {.gamma = gs[i], .eps = 1e-5f};
    expect_mv_fails(&f, f.ctx, f.w, f.x, f.y, &norm, "gamma of the wrong shape");
  }
  static const float bad_eps[] = {0.0f, -0.0f, -1e-5f, NAN, INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++) {
    qgemv_rmsnorm norm = {.gamma = f.g, .eps = bad_eps[i]};
    char what[64];
    snprintf(what, sizeof what, "eps %g", (double)bad_eps[i]);
    expect_mv_fails(&f, f.ctx, f.w, f.x, f.y, &norm, what);
  }
  mv_teardown(&f);
}
END_TEST

/* y must not alias x (or gamma): the same tensor, or wrapped memory that
 * overlaps partly. */
START_TEST(matvec_alias_errors) {
  mv_fixture f;
  mv_setup(&f);
  /* x and y share one poisoned buffer: x at its start, y half a row in */
  size_t ybytes = MV_M * MV_K * sizeof(float);
  tu_guarded shared = tu_guarded_new(2 * ybytes);
  qgemv_tensor *xa, *ya, *ga;
  EXPECT_OK(qgemv_tensor_wrap(f.ctx, QGEMV_F32, MV_M, MV_K, shared.mem, &xa));
  EXPECT_OK(qgemv_tensor_wrap(f.ctx, QGEMV_F32, MV_M, MV_K, shared.mem + MV_K * 2, &ya));
  EXPECT_OK(qgemv_tensor_wrap(f.ctx, QGEMV_F32, 1, MV_K, f.ymem.mem + 16, &ga));
  sentinel();
  ck_assert_int_eq(qgemv_matvec(f.ctx, f.w, f.x, f.x, NULL), QGEMV_ERR_INVALID_ARG);
  expect_own_message("y == x");
  sentinel();
  ck_assert_int_eq(qgemv_matvec(f.ctx, f.w, xa, ya, NULL), QGEMV_ERR_INVALID_ARG);
  expect_own_message("y overlaps x");
  ck_assert_msg(all_bytes(shared.mem, shared.bytes, 0xff), "y overlapping x was written on error");
  sentinel();
  ck_assert_int_eq(qgemv_matvec(f.ctx, f.w, ya, xa, NULL), QGEMV_ERR_INVALID_ARG);
  expect_own_message("x overlaps y");
  qgemv_rmsnorm norm = {.gamma = ga, .eps = 1e-5f};
  expect_mv_fails(&f, f.ctx, f.w, f.x, f.y, &norm, "gamma overlapping y");
  /* y == gamma exactly (a [1, k] y needs an m = 1 x) */
  qgemv_tensor *x1, *y1;
  EXPECT_OK(qgemv_tensor_new(f.ctx, QGEMV_F32, 1, MV_K, &x1));
  EXPECT_OK(qgemv_tensor_wrap(f.ctx, QGEMV_F32, 1, MV_K, f.ymem.mem, &y1));
  qgemv_rmsnorm self = {.gamma = y1, .eps = 1e-5f};
  expect_mv_fails(&f, f.ctx, f.w, x1, y1, &self, "y is gamma");
  tu_guarded_free(&shared);
  mv_teardown(&f);
}
END_TEST

/* A failing matvec into a y made by tensor_new leaves its contents too. */
START_TEST(matvec_error_keeps_device_y) {
  mv_fixture f;
  mv_setup(&f);
  qgemv_tensor *y;
  EXPECT_OK(qgemv_tensor_new(f.ctx, QGEMV_BF16, MV_M, MV_K, &y));
  uint16_t poison[MV_M * MV_K], back[MV_M * MV_K];
  memset(poison, 0xff, sizeof poison);
  EXPECT_OK(qgemv_tensor_write(y, poison, sizeof poison));
  qgemv_rmsnorm norm = {.gamma = f.g, .eps = -1.0f};
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_matvec(f.ctx, f.w, f.x, y, &norm));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_matvec(f.ctx, f.w2, f.x, y, NULL));
  EXPECT_OK(qgemv_sync(f.ctx));
  EXPECT_OK(qgemv_tensor_read(y, back, sizeof back));
  ck_assert_msg(memcmp(back, poison, sizeof back) == 0, "a failed matvec wrote y");
  mv_teardown(&f);
}
END_TEST

/* ---- host-side formats -------------------------------------------------- */

/* qgemv_quantize with one bad argument: INVALID_ARG, outputs untouched. */
static void expect_quantize_fails(qgemv_format fmt, int64_t n, int64_t k, int32_t g, const float *w, void *data,
                                  float *scales, const char *what) {
  static unsigned char data_buf[4096], scale_buf[256];
  memset(data_buf, 0x5a, sizeof data_buf);
  memset(scale_buf, 0x5a, sizeof scale_buf);
  if (data == (void *)1) data = data_buf; /* 1: use the watched buffers */
  if (scales == (float *)1) scales = (float *)(void *)scale_buf;
  sentinel();
  qgemv_status s = qgemv_quantize(fmt, n, k, g, w, data, scales);
  if (s != QGEMV_ERR_INVALID_ARG)
    ck_abort_msg("quantize with %s: %s (%s)", what, qgemv_status_str(s), qgemv_last_error());
  expect_own_message(what);
  ck_assert_msg(all_bytes(data_buf, sizeof data_buf, 0x5a) && all_bytes(scale_buf, sizeof scale_buf, 0x5a),
                "quantize with %s wrote its outputs", what);
}

START_TEST(quantize_errors) {
  float w[4 * 256];
  rng r = {.s = 4};
  fill_random(&r, DIST_NORMAL, w, 4 * 256);
  void *D = (void *)1;
  float *S = (float *)1;
  expect_quantize_fails((qgemv_format)5, 4, 256, 64, w, D, S, "format 5");
  expect_quantize_fails(QGEMV_NF4, 0, 256, 64, w, D, S, "n 0");
  expect_quantize_fails(QGEMV_NF4, 4, -256, 64, w, D, S, "k -256");
  expect_quantize_fails(QGEMV_NF4, 4, 200, 64, w, D, S, "NF4 k 200");
  expect_quantize_fails(QGEMV_Q2_0, 4, 192, 128, w, D, S, "Q2_0 k 192 g 128");
  expect_quantize_fails(QGEMV_NF4, 4, 256, 32, w, D, S, "NF4 group 32");
  expect_quantize_fails(QGEMV_Q2_0, 4, 256, 0, w, D, S, "Q2_0 group 0");
  expect_quantize_fails(QGEMV_Q2_0, 4, 256, 100, w, D, S, "Q2_0 group 100");
  expect_quantize_fails(QGEMV_NF4, 4, 256, 64, NULL, D, S, "w NULL");
  expect_quantize_fails(QGEMV_NF4, 4, 256, 64, w, NULL, S, "data NULL");
  expect_quantize_fails(QGEMV_Q2_0, 4, 256, 64, w, NULL, NULL, "Q2_0 data NULL");
  expect_quantize_fails(QGEMV_NF4, 4, 256, 64, w, D, NULL, "NF4 scales NULL");
  expect_quantize_fails(QGEMV_NF4, INT64_MAX, 256, 64, w, D, S, "n INT64_MAX");
  expect_quantize_fails(QGEMV_Q2_0, (int64_t)1 << 40, (int64_t)1 << 40, 64, w, D, S, "2^80 elements");
  /* positive control: Q2_0 ignores scales, which may be NULL */
  unsigned char out[4 * 4 * 18];
  ck_assert_int_eq(qgemv_quantize(QGEMV_Q2_0, 4, 256, 64, w, out, NULL), QGEMV_OK);
}
END_TEST

START_TEST(dequantize_and_size_errors) {
  rng r = {.s = 5};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, 2, 128, &hw);
  float out[2 * 128];
  memset(out, 0x5a, sizeof out);
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_dequantize(NULL, out));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_dequantize(&hw.desc, NULL));
  qgemv_weight_desc d = hw.desc;
  d.k = 100;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_dequantize(&d, out));
  d = hw.desc;
  d.scales = NULL;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_dequantize(&d, out));
  d = hw.desc;
  d.format = (qgemv_format)9;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_dequantize(&d, out));
  ck_assert_msg(all_bytes(out, sizeof out, 0x5a), "a failed dequantize wrote its output");

  static const struct {
    qgemv_format f;
    int64_t n, k;
    int32_t g;
  } bad[] = {{(qgemv_format)3, 1, 64, 64}, {QGEMV_NF4, 0, 64, 64},        {QGEMV_NF4, 1, 65, 64},
             {QGEMV_NF4, 1, 64, 65},       {QGEMV_Q2_0, 1, 64, 0},        {QGEMV_Q2_0, -1, 64, 64},
             {QGEMV_Q2_0, 1, 128, 256},    {QGEMV_NF4, INT64_MAX, 64, 64}, {QGEMV_Q2_0, INT64_MAX / 2, 128, 64}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sentinel();
    ck_assert_msg(qgemv_data_bytes(bad[i].f, bad[i].n, bad[i].k, bad[i].g) == 0, "data_bytes case %zu", i);
    expect_own_message("qgemv_data_bytes");
    sentinel();
    ck_assert_msg(qgemv_scale_count(bad[i].f, bad[i].n, bad[i].k, bad[i].g) == 0, "scale_count case %zu", i);
    expect_own_message("qgemv_scale_count");
  }
  ck_assert_ptr_nonnull(qgemv_nf4_table());
  tu_weight_free(&hw);
}
END_TEST

START_TEST(reference_errors) {
  rng r = {.s = 6};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_Q2_0, 64, 3, 128, &hw);
  float x[128], gamma[128];
  fill_random(&r, DIST_NORMAL, x, 128);
  fill_random(&r, DIST_NORMAL, gamma, 128);
  double y[3], bound[3];
  memset(y, 0x5a, sizeof y);
  const qgemv_weight_desc *d = &hw.desc;
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_reference_matvec(NULL, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0, y, bound));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_reference_matvec(d, 0, QGEMV_F32, x, QGEMV_F32, NULL, 0, y, bound));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_reference_matvec(d, -1, QGEMV_F32, x, QGEMV_F32, NULL, 0, y, bound));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG,
             qgemv_reference_matvec(d, INT64_MAX, QGEMV_F32, x, QGEMV_F32, NULL, 0, y, bound));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_reference_matvec(d, 1, QGEMV_F32, NULL, QGEMV_F32, NULL, 0, y, bound));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_reference_matvec(d, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0, NULL, bound));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG,
             qgemv_reference_matvec(d, 1, (qgemv_dtype)4, x, QGEMV_F32, NULL, 0, y, bound));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG,
             qgemv_reference_matvec(d, 1, QGEMV_F32, x, (qgemv_dtype)4, gamma, 1e-5f, y, bound));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_reference_matvec(d, 1, QGEMV_F32, x, QGEMV_F32, gamma, 0.0f, y, bound));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, qgemv_reference_matvec(d, 1, QGEMV_F32, x, QGEMV_F32, gamma, NAN, y, bound));
  ck_assert_msg(all_bytes(y, sizeof y, 0x5a), "a failed reference_matvec wrote y");
  /* positive control; bound may be NULL */
  ck_assert_int_eq(qgemv_reference_matvec(d, 1, QGEMV_BF16, x, QGEMV_F32, NULL, 0, y, NULL), QGEMV_OK);
  tu_weight_free(&hw);
}
END_TEST

/* ---- the last error ---------------------------------------------------- */

/* Successful calls leave the last error alone ("replaced only by the next
 * failure"). */
START_TEST(success_keeps_last_error) {
  rng r = {.s = 7};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_Q2_0, 64, 8, 128, &hw);
  float x[2 * 128], g[128], wd[8 * 128];
  double yr[2 * 8];
  fill_random(&r, DIST_HEAVY, x, 2 * 128);
  fill_random(&r, DIST_NORMAL, g, 128);
  sentinel();
  qgemv_ctx *ctx = open_cpu();
  qgemv_weight *w;
  qgemv_tensor *xt, *yt, *gt;
  int devices;
  EXPECT_OK(qgemv_backend_probe("cpu", &devices));
  EXPECT_OK(qgemv_weight_upload(ctx, &hw.desc, &w));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 2, 128, &xt));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_BF16, 2, 8, &yt));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, 128, &gt));
  EXPECT_OK(qgemv_tensor_write(xt, x, sizeof x));
  EXPECT_OK(qgemv_tensor_write(gt, g, sizeof g));
  qgemv_rmsnorm norm = {.gamma = gt, .eps = 1e-6f};
  EXPECT_OK(qgemv_matvec(ctx, w, xt, yt, &norm));
  EXPECT_OK(qgemv_sync(ctx));
  uint16_t y[2 * 8];
  EXPECT_OK(qgemv_tensor_read(yt, y, sizeof y));
  EXPECT_OK(qgemv_dequantize(&hw.desc, wd));
  EXPECT_OK(qgemv_reference_matvec(&hw.desc, 2, QGEMV_F32, x, QGEMV_F32, g, 1e-6f, yr, NULL));
  ck_assert_uint_gt(qgemv_data_bytes(QGEMV_NF4, 1, 64, 64), 0);
  qgemv_close(ctx);
  ck_assert_msg(strstr(qgemv_last_error(), "zz-sentinel-zz") != NULL, "a successful call replaced the last error: %s",
                qgemv_last_error());
  tu_weight_free(&hw);
}
END_TEST

static void *fail_in_thread(void *arg) {
  qgemv_ctx *ctx = NULL;
  qgemv_status s = qgemv_open("thrdonly", &ctx);
  snprintf(arg, 256, "%s|%s", qgemv_status_str(s), qgemv_last_error());
  return NULL;
}

/* The last error is per thread. */
START_TEST(last_error_is_per_thread) {
  sentinel();
  char seen[256] = "";
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, fail_in_thread, seen), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_msg(strstr(seen, "QGEMV_ERR_NO_BACKEND|") == seen && strstr(seen, "thrdonly"),
                "the thread saw \"%s\"", seen);
  ck_assert_msg(strstr(qgemv_last_error(), "zz-sentinel-zz") != NULL, "another thread's failure replaced ours: %s",
                qgemv_last_error());
}
END_TEST

static Suite *api_errors_suite(void) {
  Suite *s = suite_create("api_errors");
  TCase *ctx = tcase_create("context");
  tcase_set_timeout(ctx, 60); /* the 4 s default is tight on a loaded machine */
  tcase_add_test(ctx, open_and_close);
  tcase_add_test(ctx, context_queries);
  tcase_add_test(ctx, status_strings);
  tcase_add_test(ctx, success_keeps_last_error);
  tcase_add_test(ctx, last_error_is_per_thread);
  suite_add_tcase(s, ctx);
  TCase *obj = tcase_create("objects");
  tcase_set_timeout(obj, 60);
  tcase_add_test(obj, weight_upload_errors);
  tcase_add_test(obj, tensor_new_and_wrap_errors);
  tcase_add_test(obj, tensor_copy_errors);
  suite_add_tcase(s, obj);
  TCase *mv = tcase_create("matvec");
  tcase_set_timeout(mv, 60);
  tcase_add_test(mv, matvec_handle_errors);
  tcase_add_test(mv, matvec_shape_errors);
  tcase_add_test(mv, matvec_alias_errors);
  tcase_add_test(mv, matvec_error_keeps_device_y);
  suite_add_tcase(s, mv);
  TCase *host = tcase_create("host");
  tcase_set_timeout(host, 60);
  tcase_add_test(host, quantize_errors);
  tcase_add_test(host, dequantize_and_size_errors);
  tcase_add_test(host, reference_errors);
  suite_add_tcase(s, host);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(api_errors_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
