/* The smallest useful qgemv program: quantize a weight to NF4, upload it to
 * the default backend, run y = W x, check y against the oracle.
 *   cc minimal.c $(pkg-config --cflags --libs qgemv) -o minimal */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <qgemv.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    qgemv_status s_ = (call);                                                        \
    if (s_ != QGEMV_OK) {                                                            \
      fprintf(stderr, "%s: %s: %s\n", #call, qgemv_status_str(s_), qgemv_last_error()); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

int main(void) {
  enum { N = 256, K = 1024 };
  static float w[N * K], x[K], y[N];
  static unsigned char data[N * K / 2];
  static float scales[N * K / 64];
  static double ref[N], bound[N];
  for (int i = 0; i < N * K; i++) w[i] = sinf(0.37f * (float)i);
  for (int j = 0; j < K; j++) x[j] = cosf(0.11f * (float)j);

  CHECK(qgemv_quantize(QGEMV_NF4, N, K, 64, w, data, scales));
  qgemv_weight_desc desc = {.format = QGEMV_NF4, .n = N, .k = K, .group = 64, .data = data, .scales = scales};

  qgemv_ctx *ctx;
  CHECK(qgemv_open(NULL, &ctx)); /* $QGEMV_BACKEND, else auto */
  qgemv_weight *wt;
  qgemv_tensor *xt, *yt;
  CHECK(qgemv_weight_upload_for_m(ctx, &desc, 1, &wt)); /* used at m = 1: decode */
  CHECK(qgemv_tensor_new(ctx, QGEMV_F32, 1, K, &xt));
  CHECK(qgemv_tensor_new(ctx, QGEMV_F32, 1, N, &yt));
  CHECK(qgemv_tensor_write(xt, x, sizeof x));
  CHECK(qgemv_matvec(ctx, wt, xt, yt, NULL));
  CHECK(qgemv_sync(ctx));
  CHECK(qgemv_tensor_read(yt, y, sizeof y));

  CHECK(qgemv_reference_matvec(&desc, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, ref, bound));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += !(fabs(y[i] - ref[i]) <= 1e-3 * bound[i]);
  printf("qgemv %s on %s: y[0] = %g, %d of %d outputs outside the contract\n", qgemv_version(),
         qgemv_ctx_backend(ctx), y[0], bad, N);
  qgemv_close(ctx); /* frees wt, xt, yt too */
  return bad != 0;
}
