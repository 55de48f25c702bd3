/*
 * Weights loaded from the GGUF fixture (ggml's own writer) run on one
 * backend (MODEL_BACKEND, one binary per backend) and agree with the
 * oracle under the accuracy contract: both Q2_0 tensors as the file holds
 * them, their f32 rows quantized to NF4, for f32 and bf16 activations and
 * outputs, m = 1 and 3, and fused RMSNorm with the file's norm weight.
 * Where the backend is not usable here the suite exits 77 (SKIP) saying
 * why; it runs without Check's fork, which CUDA does not survive.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "modelfile.h"
#include "testutil.h"

static const char *fixture;

/* y = x . W^T on the backend for weight d, x of [m, k] random values,
 * optionally normalized by the file's norm weight; checked against the
 * oracle. */
static void run_case(qgemv_ctx *ctx, const qgemv_weight_desc *d, const float *gamma, int64_t m, qgemv_dtype xt,
                     qgemv_dtype yt, const char *what) {
  rng r = {(uint64_t)(d->n * 131 + m * 7 + xt * 3 + yt)};
  size_t xc = (size_t)(m * d->k), yc = (size_t)(m * d->n);
  float *xf = malloc(xc * sizeof *xf);
  ck_assert_ptr_nonnull(xf);
  fill_random(&r, DIST_NORMAL, xf, xc);
  void *xh = tu_convert(xf, xc, xt), *gh = gamma ? tu_convert(gamma, (size_t)d->k, xt) : NULL;
  tu_guarded y = tu_guarded_new(yc * tu_dtype_size(yt));
  tu_poison(&y);
  qgemv_weight *w;
  qgemv_tensor *x, *yt_, *g = NULL;
  EXPECT_OK(qgemv_weight_upload(ctx, d, &w));
  EXPECT_OK(qgemv_tensor_new(ctx, xt, m, d->k, &x));
  EXPECT_OK(qgemv_tensor_new(ctx, yt, m, d->n, &yt_));
  EXPECT_OK(qgemv_tensor_write(x, xh, xc * tu_dtype_size(xt)));
  EXPECT_OK(qgemv_tensor_write(yt_, y.mem, y.bytes)); /* poison on the device too */
  qgemv_rmsnorm norm = {.eps = 1e-5f};
  if (gamma) {
    EXPECT_OK(qgemv_tensor_new(ctx, xt, 1, d->k, &g));
    EXPECT_OK(qgemv_tensor_write(g, gh, (size_t)d->k * tu_dtype_size(xt)));
    norm.gamma = g;
  }
  EXPECT_OK(qgemv_matvec(ctx, w, x, yt_, gamma ? &norm : NULL));
  EXPECT_OK(qgemv_sync(ctx));
  EXPECT_OK(qgemv_tensor_read(yt_, y.mem, y.bytes));
  EXPECT(tu_guard_intact(&y), "%s: write past the output", what);
  char where[256];
  double worst = tu_check_contract(d, m, xt, xh, xt, gh, 1e-5f, yt, y.mem, where, sizeof where);
  EXPECT(worst <= 1.0, "%s (m=%lld x %s y %s%s): worst error %.3g of the bound at %s", what, (long long)m,
         xt == QGEMV_F32 ? "f32" : "bf16", yt == QGEMV_F32 ? "f32" : "bf16", gamma ? ", rmsnorm" : "", worst, where);
  qgemv_weight_free(w);
  qgemv_tensor_free(x);
  qgemv_tensor_free(yt_);
  qgemv_tensor_free(g);
  tu_guarded_free(&y);
  free(xf);
  free(xh);
  free(gh);
}

static void run_all(const qgemv_weight_desc *d, const float *gamma, const char *what) {
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open(MODEL_BACKEND, &ctx));
  static const int64_t ms[] = {1, 3};
  for (int mi = 0; mi < 2; mi++)
    for (int xt = 0; xt < 2; xt++)
      for (int yt = 0; yt < 2; yt++) {
        run_case(ctx, d, NULL, ms[mi], (qgemv_dtype)xt, (qgemv_dtype)yt, what);
        if (gamma) run_case(ctx, d, gamma, ms[mi], (qgemv_dtype)xt, (qgemv_dtype)yt, what);
      }
  qgemv_close(ctx);
}

START_TEST(q2_0_from_the_file) {
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open(fixture, &m));
  float gamma[1024];
  EXPECT_OK(qgemv_model_read_f32(m, "blk.0.ffn_norm.weight", gamma, 1024));
  qgemv_weight_desc d;
  EXPECT_OK(qgemv_model_weight(m, "blk.0.ffn_down.weight", 0, &d));
  run_all(&d, gamma, "blk.0.ffn_down.weight"); /* k = 1024: the norm weight's length */
  EXPECT_OK(qgemv_model_weight(m, "blk.0.attn_q.weight", 0, &d));
  run_all(&d, NULL, "blk.0.attn_q.weight");
  qgemv_model_close(m);
}
END_TEST

/* The file's f32 rows, quantized to NF4 by qgemv_quantize. */
START_TEST(nf4_from_the_file_f32_rows) {
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open(fixture, &m));
  enum { N = 96, K = 1024 };
  float *w = malloc(N * K * sizeof *w), *scales = malloc(N * K / 64 * sizeof *scales), gamma[K];
  unsigned char *data = malloc(N * K / 2);
  ck_assert(w && scales && data);
  EXPECT_OK(qgemv_model_read_f32(m, "blk.0.ffn_down.weight.f32", w, N * K));
  EXPECT_OK(qgemv_model_read_f32(m, "blk.0.ffn_norm.weight", gamma, K));
  EXPECT_OK(qgemv_quantize(QGEMV_NF4, N, K, 64, w, data, scales));
  qgemv_weight_desc d = {.format = QGEMV_NF4, .n = N, .k = K, .group = 64, .data = data, .scales = scales};
  run_all(&d, gamma, "blk.0.ffn_down.weight.f32 as NF4");
  free(w);
  free(scales);
  free(data);
  qgemv_model_close(m);
}
END_TEST

int main(void) {
  if (!(fixture = mf_fixture())) return TU_SKIP;
  int devices = 0;
  if (qgemv_backend_probe(MODEL_BACKEND, &devices) != QGEMV_OK) {
    printf("SKIP: backend %s is not usable here: %s\n", MODEL_BACKEND, qgemv_last_error());
    return TU_SKIP;
  }
  Suite *s = suite_create("model_matvec_" MODEL_BACKEND);
  TCase *tc = tcase_create("loaded weights");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, q2_0_from_the_file);
  tcase_add_test(tc, nf4_from_the_file_f32_rows);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK); /* CUDA does not survive fork */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
