/*
 * The GGUF fixture written by ggml 0.21.0's own writer and quantizer
 * (tests/data/ggml-q2_0.gguf, see tests/data/README) read through the
 * public API: what it lists, the Q2_0 bytes against qgemv_quantize of the
 * f32 rows the file also holds, zero-copy descriptors, the group told by
 * the byte extent, and the refusal of the Q4_0 tensor by name.
 * Expected names, types and shapes are those the fixture's README states.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "modelfile.h"
#include "testutil.h"

static const char *fixture;

static qgemv_model *open_fixture(void) {
  qgemv_model *m = NULL;
  EXPECT_OK(qgemv_model_open(fixture, &m));
  return m;
}

static qgemv_model_tensor info_of(const qgemv_model *m, const char *name) {
  qgemv_model_tensor t;
  int64_t i = qgemv_model_find(m, name);
  EXPECT(i >= 0, "tensor %s not found: %s", name, qgemv_last_error());
  EXPECT_OK(qgemv_model_tensor_info(m, i, &t));
  return t;
}

START_TEST(lists_what_the_readme_says) {
  static const struct {
    const char *name, *type;
    int32_t ggml_type, ndims;
    int64_t rows, k;
    qgemv_model_use use;
  } want[] = {
      {"blk.0.ffn_down.weight", "Q2_0", 42, 2, 96, 1024, QGEMV_USE_WEIGHT},
      {"blk.0.ffn_down.weight.f32", "F32", 0, 2, 96, 1024, QGEMV_USE_FLOAT},
      {"blk.0.attn_q.weight", "Q2_0", 42, 2, 64, 4096, QGEMV_USE_WEIGHT},
      {"blk.0.attn_q.weight.f32", "F32", 0, 2, 64, 4096, QGEMV_USE_FLOAT},
      {"blk.0.ffn_norm.weight", "F32", 0, 1, 1024, 0, QGEMV_USE_FLOAT},
      {"token_embd.weight", "Q4_0", 2, 2, 32, 256, QGEMV_USE_NONE},
  };
  qgemv_model *m = open_fixture();
  ck_assert_int_eq(qgemv_model_file_kind(m), QGEMV_MODEL_GGUF);
  ck_assert_int_eq(qgemv_model_tensor_count(m), 6);
  uint64_t prev_end = 0;
  for (int i = 0; i < 6; i++) {
    qgemv_model_tensor t;
    EXPECT_OK(qgemv_model_tensor_info(m, i, &t));
    EXPECT(strcmp(t.name, want[i].name) == 0, "tensor %d is %s, expected %s", i, t.name, want[i].name);
    EXPECT(strcmp(t.type_name, want[i].type) == 0 && t.ggml_type == want[i].ggml_type, "%s: type %s (%d)", t.name,
           t.type_name, t.ggml_type);
    EXPECT(t.ndims == want[i].ndims && t.shape[0] == want[i].rows && (t.ndims == 1 || t.shape[1] == want[i].k),
           "%s: shape %lld x %lld", t.name, (long long)t.shape[0], (long long)t.shape[1]);
    EXPECT(t.use == want[i].use, "%s: use %d, expected %d (%s)", t.name, t.use, want[i].use, t.note);
    /* in file order, aligned to the default 32, not overlapping */
    EXPECT(t.offset % 32 == 0 && t.offset >= prev_end, "%s: offset %llu", t.name, (unsigned long long)t.offset);
    prev_end = t.offset + t.bytes;
  }
  /* sizes: Q2_0 g64 is 18 bytes per 64 values; f32 4 per value; Q4_0 18 per 32 */
  ck_assert_uint_eq(info_of(m, "blk.0.ffn_down.weight").bytes, 96 * 1024 / 64 * 18);
  ck_assert_uint_eq(info_of(m, "blk.0.attn_q.weight.f32").bytes, 64 * 4096 * 4);
  ck_assert_uint_eq(info_of(m, "token_embd.weight").bytes, 32 * 256 / 32 * 18);
  qgemv_model_close(m);
}
END_TEST

START_TEST(metadata) {
  qgemv_model *m = open_fixture();
  ck_assert_int_eq(qgemv_model_metadata_count(m), 2);
  qgemv_model_kv kv;
  EXPECT_OK(qgemv_model_metadata(m, 0, &kv));
  ck_assert_str_eq(kv.key, "general.architecture");
  ck_assert_int_eq(kv.type, QGEMV_VALUE_STRING);
  ck_assert_str_eq(kv.type_name, "string");
  ck_assert_str_eq(kv.str, "llama");
  ck_assert_uint_eq(kv.len, 5);
  EXPECT_OK(qgemv_model_metadata(m, 1, &kv));
  ck_assert_str_eq(kv.key, "general.name");
  ck_assert_int_eq(qgemv_model_metadata(m, 2, &kv), QGEMV_ERR_INVALID_ARG);
  qgemv_model_close(m);
}
END_TEST

/* ggml's Q2_0 blocks of the file are byte for byte what qgemv_quantize
 * makes of the f32 rows stored beside them. */
static void check_bytes_match_quantizer(const char *name, int64_t n, int64_t k) {
  qgemv_model *m = open_fixture();
  char f32name[64];
  snprintf(f32name, sizeof f32name, "%s.f32", name);
  size_t count = (size_t)(n * k);
  float *w = malloc(count * sizeof *w);
  size_t bytes = qgemv_data_bytes(QGEMV_Q2_0, n, k, 64);
  unsigned char *mine = malloc(bytes);
  ck_assert_ptr_nonnull(w);
  ck_assert_ptr_nonnull(mine);
  EXPECT_OK(qgemv_model_read_f32(m, f32name, w, count));
  EXPECT_OK(qgemv_quantize(QGEMV_Q2_0, n, k, 64, w, mine, NULL));
  qgemv_weight_desc d;
  EXPECT_OK(qgemv_model_weight(m, name, 0, &d));
  EXPECT(d.format == QGEMV_Q2_0 && d.n == n && d.k == k && d.group == 64 && d.scales == NULL,
         "%s: descriptor %d %lld x %lld g%d", name, d.format, (long long)d.n, (long long)d.k, d.group);
  const unsigned char *file = d.data;
  for (size_t i = 0; i < bytes; i++)
    EXPECT(file[i] == mine[i], "%s: byte %zu (row %zu, block %zu) is 0x%02x in the file, 0x%02x from qgemv_quantize",
           name, i, i / (size_t)(k / 64 * 18), i % (size_t)(k / 64 * 18) / 18, file[i], mine[i]);
  free(w);
  free(mine);
  qgemv_model_close(m);
}

START_TEST(ffn_down_bytes_are_qgemv_quantize) { check_bytes_match_quantizer("blk.0.ffn_down.weight", 96, 1024); }
END_TEST

START_TEST(attn_q_bytes_are_qgemv_quantize) { check_bytes_match_quantizer("blk.0.attn_q.weight", 64, 4096); }
END_TEST

/* The descriptor points into the file's bytes: no copy. */
START_TEST(descriptor_points_into_the_file) {
  size_t size;
  unsigned char *bytes = mf_read_file(fixture, &size);
  ck_assert_ptr_nonnull(bytes);
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(bytes, size, &m));
  qgemv_weight_desc d;
  EXPECT_OK(qgemv_model_weight(m, "blk.0.attn_q.weight", 64, &d));
  qgemv_model_tensor t = info_of(m, "blk.0.attn_q.weight");
  ck_assert_ptr_eq(d.data, bytes + t.offset);
  qgemv_model_close(m);
  free(bytes);
}
END_TEST

START_TEST(group_named_against_the_extent) {
  qgemv_model *m = open_fixture();
  qgemv_weight_desc d;
  ck_assert_int_eq(qgemv_model_weight(m, "blk.0.ffn_down.weight", 128, &d), QGEMV_ERR_INVALID_ARG);
  EXPECT(strstr(qgemv_last_error(), "g64, not g128"), "message: %s", qgemv_last_error());
  ck_assert_int_eq(qgemv_model_weight(m, "blk.0.ffn_down.weight", 96, &d), QGEMV_ERR_INVALID_ARG);
  EXPECT_OK(qgemv_model_weight(m, "blk.0.ffn_down.weight", 64, &d));
  ck_assert_int_eq(d.group, 64);
  qgemv_model_close(m);
}
END_TEST

START_TEST(q4_0_refused_by_name) {
  qgemv_model *m = open_fixture();
  qgemv_weight_desc d;
  ck_assert_int_eq(qgemv_model_weight(m, "token_embd.weight", 0, &d), QGEMV_ERR_UNSUPPORTED);
  ck_assert_str_eq(qgemv_last_error(), "tensor token_embd.weight: ggml type Q4_0 (2) is not a qgemv format");
  float f[16];
  ck_assert_int_eq(qgemv_model_read_f32(m, "token_embd.weight", f, 16), QGEMV_ERR_UNSUPPORTED);
  EXPECT(strstr(qgemv_last_error(), "Q4_0"), "message: %s", qgemv_last_error());
  qgemv_model_close(m);
}
END_TEST

START_TEST(other_refusals) {
  qgemv_model *m = open_fixture();
  qgemv_weight_desc d;
  float f[1024];
  ck_assert_int_eq(qgemv_model_weight(m, "blk.0.ffn_norm.weight", 0, &d), QGEMV_ERR_UNSUPPORTED);
  ck_assert_int_eq(qgemv_model_weight(m, "no.such.tensor", 0, &d), QGEMV_ERR_INVALID_ARG);
  EXPECT(strstr(qgemv_last_error(), "no.such.tensor"), "message: %s", qgemv_last_error());
  ck_assert_int_eq(qgemv_model_find(m, "no.such.tensor"), -1);
  ck_assert_int_eq(qgemv_model_read_f32(m, "blk.0.ffn_norm.weight", f, 1000), QGEMV_ERR_INVALID_ARG);
  ck_assert_int_eq(qgemv_model_read_f32(m, "blk.0.ffn_down.weight", f, 1024), QGEMV_ERR_UNSUPPORTED);
  qgemv_model_tensor t;
  ck_assert_int_eq(qgemv_model_tensor_info(m, 6, &t), QGEMV_ERR_INVALID_ARG);
  ck_assert_int_eq(qgemv_model_tensor_info(m, -1, &t), QGEMV_ERR_INVALID_ARG);
  qgemv_model_close(m);
  ck_assert_int_eq(qgemv_model_tensor_info(NULL, 0, &t), QGEMV_ERR_INVALID_ARG);
  ck_assert_int_eq(qgemv_model_open("/nonexistent/model.gguf", &m), QGEMV_ERR_INVALID_ARG);
  EXPECT(m == NULL && strstr(qgemv_last_error(), "/nonexistent/model.gguf"), "message: %s", qgemv_last_error());
  ck_assert_int_eq(qgemv_model_open("/", &m), QGEMV_ERR_INVALID_ARG);
  qgemv_model_close(NULL);
}
END_TEST

START_TEST(norm_weight_values) {
  qgemv_model *m = open_fixture();
  float g[1024];
  EXPECT_OK(qgemv_model_read_f32(m, "blk.0.ffn_norm.weight", g, 1024));
  /* 1 + 0.1 * Gaussian, by the README: all near 1, not all equal */
  double lo = 1e9, hi = -1e9;
  for (int i = 0; i < 1024; i++) {
    lo = g[i] < lo ? g[i] : lo;
    hi = g[i] > hi ? g[i] : hi;
  }
  EXPECT(lo > 0.4 && hi < 1.6 && hi - lo > 0.1, "norm weight range [%g, %g]", lo, hi);
  qgemv_model_close(m);
}
END_TEST

static Suite *model_gguf_suite(void) {
  Suite *s = suite_create("model_gguf");
  TCase *tc = tcase_create("fixture");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, lists_what_the_readme_says);
  tcase_add_test(tc, metadata);
  tcase_add_test(tc, ffn_down_bytes_are_qgemv_quantize);
  tcase_add_test(tc, attn_q_bytes_are_qgemv_quantize);
  tcase_add_test(tc, descriptor_points_into_the_file);
  tcase_add_test(tc, group_named_against_the_extent);
  tcase_add_test(tc, q4_0_refused_by_name);
  tcase_add_test(tc, other_refusals);
  tcase_add_test(tc, norm_weight_values);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  if (!(fixture = mf_fixture())) return TU_SKIP;
  SRunner *sr = srunner_create(model_gguf_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
