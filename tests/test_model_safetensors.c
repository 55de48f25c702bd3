/*
 * safetensors files made here (8-byte header length, JSON header, data):
 * plain f32, f16 and bf16 matrices read back as floats and quantized to
 * NF4 and Q2_0 with qgemv_quantize, __metadata__, the listing, and bad
 * headers refused (invalid JSON, duplicate or non-UTF-8 names, offsets
 * past the end or overlapping, sizes that disagree with dtype and shape),
 * truncated and byte-flipped copies included. Built without jansson, the
 * suite checks instead that safetensors is refused with the reason.
 */
#include <config.h>

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "modelfile.h"
#include "testutil.h"

enum { N = 8, K = 128 };

/* IEEE half bits of a value that is exact in it (normal or zero). */
static uint16_t half_bits(float v) {
  if (v == 0.0f) return 0;
  int e;
  double m = frexp(fabs((double)v), &e); /* v = m * 2^e, m in [0.5, 1) */
  uint16_t bits = (uint16_t)(((e - 1 + 15) << 10) | ((int)ldexp(m, 11) - 1024));
  return (uint16_t)(bits | (v < 0 ? 0x8000 : 0));
}

static uint16_t bf16_bits(float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  return (uint16_t)(u >> 16); /* exact values: the low half is zero */
}

#ifdef QG_HAVE_JANSSON

/* Values exact in f16 and bf16: i / 64 with |i| < 128. */
static float value(int i) { return (float)((i * 37) % 255 - 127) / 64.0f; }

static float w32[N * K];
static uint16_t w16[N * K], wb16[N * K];
static float norm[K];

static mf_buf plain_file(void) {
  for (int i = 0; i < N * K; i++) {
    w32[i] = value(i);
    w16[i] = half_bits(w32[i]);
    wb16[i] = bf16_bits(w32[i]);
  }
  for (int i = 0; i < K; i++) norm[i] = 1.0f + (float)i / 256.0f;
  mf_entry e[] = {
      {"model.layers.0.mlp.down_proj.weight", "F32", 2, {N, K}, w32, sizeof w32},
      {"model.layers.0.mlp.up_proj.weight", "F16", 2, {N, K}, w16, sizeof w16},
      {"model.layers.0.mlp.gate_proj.weight", "BF16", 2, {N, K}, wb16, sizeof wb16},
      {"model.layers.0.post_attention_layernorm.weight", "F32", 1, {K}, norm, sizeof norm},
      {"model.embed_tokens.ids", "U8", 1, {4}, "abcd", 4},
  };
  return mf_safetensors(e, 5, "{\"format\":\"pt\"}");
}

START_TEST(plain_matrices_read_back) {
  mf_buf b = plain_file();
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  ck_assert_int_eq(qgemv_model_file_kind(m), QGEMV_MODEL_SAFETENSORS);
  ck_assert_int_eq(qgemv_model_tensor_count(m), 5);
  static const char *const names[] = {"model.layers.0.mlp.down_proj.weight", "model.layers.0.mlp.up_proj.weight",
                                      "model.layers.0.mlp.gate_proj.weight"};
  float got[N * K];
  for (int t = 0; t < 3; t++) {
    EXPECT_OK(qgemv_model_read_f32(m, names[t], got, N * K));
    for (int i = 0; i < N * K; i++)
      EXPECT(got[i] == w32[i], "%s[%d] read as %g, expected %g", names[t], i, (double)got[i], (double)w32[i]);
    qgemv_model_tensor info;
    EXPECT_OK(qgemv_model_tensor_info(m, qgemv_model_find(m, names[t]), &info));
    EXPECT(info.use == QGEMV_USE_FLOAT && info.ndims == 2 && info.shape[0] == N && info.shape[1] == K &&
               info.ggml_type == -1,
           "%s listed as use %d, %lld x %lld", names[t], info.use, (long long)info.shape[0], (long long)info.shape[1]);
  }
  EXPECT_OK(qgemv_model_read_f32(m, "model.layers.0.post_attention_layernorm.weight", got, K));
  ck_assert(memcmp(got, norm, sizeof norm) == 0);
  float u8[4];
  ck_assert_int_eq(qgemv_model_read_f32(m, "model.embed_tokens.ids", u8, 4), QGEMV_ERR_UNSUPPORTED);
  qgemv_weight_desc d;
  ck_assert_int_eq(qgemv_model_weight(m, names[0], 0, &d), QGEMV_ERR_UNSUPPORTED);
  qgemv_model_kv kv;
  ck_assert_int_eq(qgemv_model_metadata_count(m), 1);
  EXPECT_OK(qgemv_model_metadata(m, 0, &kv));
  ck_assert_str_eq(kv.key, "format");
  ck_assert_str_eq(kv.str, "pt");
  /* the listing is in file order, offsets from the start of the file */
  uint64_t hlen = b.p[0] | (uint64_t)b.p[1] << 8 | (uint64_t)b.p[2] << 16;
  qgemv_model_tensor first;
  EXPECT_OK(qgemv_model_tensor_info(m, 0, &first));
  ck_assert_str_eq(first.name, names[0]);
  ck_assert_uint_eq(first.offset, 8 + hlen);
  ck_assert_uint_eq(first.bytes, sizeof w32);
  qgemv_model_close(m);
  mf_free(&b);
}
END_TEST

/* A checkpoint's matrix turned into qgemv weights: read, quantize, run. */
START_TEST(quantized_from_a_checkpoint) {
  mf_buf b = plain_file();
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  float w[N * K], gamma[K], x[K];
  EXPECT_OK(qgemv_model_read_f32(m, "model.layers.0.mlp.gate_proj.weight", w, N * K));
  EXPECT_OK(qgemv_model_read_f32(m, "model.layers.0.post_attention_layernorm.weight", gamma, K));
  for (int j = 0; j < K; j++) x[j] = sinf(0.3f * (float)j);
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  static const struct { qgemv_format f; int32_t g; } formats[] = {{QGEMV_NF4, 64}, {QGEMV_Q2_0, 64}, {QGEMV_Q2_0, 128}};
  for (int fi = 0; fi < 3; fi++) {
    unsigned char data[N * K];
    float scales[N * K / 64];
    EXPECT_OK(qgemv_quantize(formats[fi].f, N, K, formats[fi].g, w, data, scales));
    qgemv_weight_desc d = {formats[fi].f, N, K, formats[fi].g, data, formats[fi].f == QGEMV_NF4 ? scales : NULL};
    qgemv_weight *wt;
    qgemv_tensor *xt, *yt, *gt;
    float y[N];
    EXPECT_OK(qgemv_weight_upload(ctx, &d, &wt));
    EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, K, &xt));
    EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, N, &yt));
    EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, K, &gt));
    EXPECT_OK(qgemv_tensor_write(xt, x, sizeof x));
    EXPECT_OK(qgemv_tensor_write(gt, gamma, sizeof gamma));
    qgemv_rmsnorm norm = {gt, 1e-5f};
    EXPECT_OK(qgemv_matvec(ctx, wt, xt, yt, &norm));
    EXPECT_OK(qgemv_sync(ctx));
    EXPECT_OK(qgemv_tensor_read(yt, y, sizeof y));
    char where[128];
    double worst = tu_check_contract(&d, 1, QGEMV_F32, x, QGEMV_F32, gamma, 1e-5f, QGEMV_F32, y, where, sizeof where);
    EXPECT(worst <= 1.0, "format %d g%d: worst %.3g of the bound at %s", formats[fi].f, formats[fi].g, worst, where);
  }
  qgemv_close(ctx);
  qgemv_model_close(m);
  mf_free(&b);
}
END_TEST

static void expect_refused(const char *json, size_t data_bytes, const char *needle, const char *what) {
  static unsigned char data[256];
  mf_buf b = mf_safetensors_raw(json, data, data_bytes);
  unsigned char *copy = malloc(b.len);
  memcpy(copy, b.p, b.len);
  qgemv_model *m;
  qgemv_status s = qgemv_model_open_memory(copy, b.len, &m);
  EXPECT(s == QGEMV_ERR_BAD_DATA && strstr(qgemv_last_error(), needle), "%s: %s (%s), expected BAD_DATA with '%s'",
         what, qgemv_status_str(s), qgemv_last_error(), needle);
  if (s == QGEMV_OK) qgemv_model_close(m);
  free(copy);
  mf_free(&b);
}

START_TEST(bad_headers_refused) {
  expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, "JSON", "unterminated JSON");
  expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
                 16, "duplicate", "duplicate names");
  expect_refused("{\"\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "JSON", "non-UTF-8 name");
  expect_refused("{\"\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "empty name", "empty name");
  expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, "data_offsets", "past the end");
  expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "data_offsets", "reversed");
  expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "need 12", "size mismatch");
  expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "shape", "negative dim");
  expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8, "shape",
                 "element count overflow");
  expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                 12, "overlap", "overlapping");
  expect_refused("{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "dtype", "no dtype");
  expect_refused("{\"a\":7}", 0, "dtype", "entry not an object");
  expect_refused("{\"__metadata__\":{\"k\":1}}", 0, "not a string", "metadata value not a string");
  expect_refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "dimensions",
                 "9 dimensions");
}
END_TEST

/* open, list, read every float tensor; the status of the open */
static qgemv_status open_and_use(const unsigned char *p, size_t size) {
  unsigned char *copy = malloc(size ? size : 1);
  memcpy(copy, p, size);
  qgemv_model *m;
  qgemv_status s = qgemv_model_open_memory(copy, size, &m);
  if (s == QGEMV_OK) {
    for (int64_t i = 0; i < qgemv_model_tensor_count(m); i++) {
      qgemv_model_tensor t;
      EXPECT_OK(qgemv_model_tensor_info(m, i, &t));
      EXPECT(t.offset <= size && t.bytes <= size - t.offset, "%s outside the file", t.name);
      if (t.use != QGEMV_USE_FLOAT) continue;
      size_t count = 1;
      for (int j = 0; j < t.ndims; j++) count *= (size_t)t.shape[j];
      float *f = malloc(count ? count * 4 : 1);
      EXPECT_OK(qgemv_model_read_f32(m, t.name, f, count));
      free(f);
    }
    qgemv_model_close(m);
  }
  free(copy);
  return s;
}

START_TEST(truncated_and_flipped) {
  mf_buf b = plain_file();
  for (size_t cut = 0; cut < b.len; cut += tu_quick() ? 97 : 1) {
    qgemv_status s = open_and_use(b.p, cut);
    EXPECT(s == QGEMV_ERR_BAD_DATA, "cut at %zu of %zu: %s (%s)", cut, b.len, qgemv_status_str(s), qgemv_last_error());
  }
  size_t header = 8 + (b.p[0] | (size_t)b.p[1] << 8);
  for (size_t i = 0; i < header; i += tu_quick() ? 7 : 1)
    for (int bit = 0; bit < 8; bit += tu_quick() ? 5 : 1) {
      b.p[i] ^= (unsigned char)(1u << bit);
      open_and_use(b.p, b.len);
      b.p[i] ^= (unsigned char)(1u << bit);
    }
  mf_free(&b);
}
END_TEST

static void add_tests(TCase *tc) {
  tcase_add_test(tc, plain_matrices_read_back);
  tcase_add_test(tc, quantized_from_a_checkpoint);
  tcase_add_test(tc, bad_headers_refused);
  tcase_add_test(tc, truncated_and_flipped);
}

#else /* built without jansson */

START_TEST(refused_with_the_reason) {
  float v[2] = {1, 2};
  mf_entry e = {"a", "F32", 1, {2}, v, sizeof v};
  mf_buf b = mf_safetensors(&e, 1, NULL);
  qgemv_model *m;
  ck_assert_int_eq(qgemv_model_open_memory(b.p, b.len, &m), QGEMV_ERR_UNSUPPORTED);
  EXPECT(strstr(qgemv_last_error(), "jansson"), "message: %s", qgemv_last_error());
  mf_free(&b);
}
END_TEST

static void add_tests(TCase *tc) { tcase_add_test(tc, refused_with_the_reason); }

#endif

START_TEST(value_encoders_are_exact) {
  /* the test's own f16 / bf16 encoders, against the IEEE bit patterns */
  ck_assert_uint_eq(half_bits(1.0f), 0x3c00);
  ck_assert_uint_eq(half_bits(-1.984375f), 0xbff0);
  ck_assert_uint_eq(half_bits(0.015625f), 0x2400);
  ck_assert_uint_eq(bf16_bits(-1.5f), 0xbfc0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("model_safetensors");
  TCase *tc = tcase_create("safetensors");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, value_encoders_are_exact);
  add_tests(tc);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
