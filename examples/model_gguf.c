/* Load a weight from a GGUF file and run it: open the file (memory-mapped),
 * take a ready descriptor for a Q2_0 tensor (it points into the mapping;
 * no copy before the upload), upload it, run y = W x, check y against the
 * oracle.
 *   cc model_gguf.c $(pkg-config --cflags --libs qgemv) -lm -o model_gguf
 *   ./model_gguf model.gguf [TENSOR]     (default: the first weight) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <qgemv.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    qgemv_status s_ = (call);                                                            \
    if (s_ != QGEMV_OK) {                                                                \
      fprintf(stderr, "%s: %s: %s\n", #call, qgemv_status_str(s_), qgemv_last_error()); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

/* The name of the first tensor qgemv can use as a weight, or NULL. */
static const char *first_weight(const qgemv_model *m) {
  static qgemv_model_tensor t;
  for (int64_t i = 0; i < qgemv_model_tensor_count(m); i++)
    if (qgemv_model_tensor_info(m, i, &t) == QGEMV_OK && t.use == QGEMV_USE_WEIGHT) return t.name;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.gguf [TENSOR]\n", argv[0]);
    return 2;
  }
  qgemv_model *model;
  CHECK(qgemv_model_open(argv[1], &model));
  const char *name = argc > 2 ? argv[2] : first_weight(model);
  if (!name) {
    fprintf(stderr, "%s holds no tensor qgemv can use as a weight\n", argv[1]);
    return 1;
  }
  qgemv_weight_desc desc;
  CHECK(qgemv_model_weight(model, name, 0, &desc)); /* 0: the file tells the group */
  int64_t n = desc.n, k = desc.k;

  float *x = malloc((size_t)k * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  double *ref = malloc((size_t)n * sizeof *ref), *bound = malloc((size_t)n * sizeof *bound);
  if (!x || !y || !ref || !bound) return 1;
  for (int64_t j = 0; j < k; j++) x[j] = cosf(0.11f * (float)j);

  qgemv_ctx *ctx;
  qgemv_weight *w;
  qgemv_tensor *xt, *yt;
  CHECK(qgemv_open(NULL, &ctx));
  CHECK(qgemv_weight_upload(ctx, &desc, &w));
  CHECK(qgemv_tensor_new(ctx, QGEMV_F32, 1, k, &xt));
  CHECK(qgemv_tensor_new(ctx, QGEMV_F32, 1, n, &yt));
  CHECK(qgemv_tensor_write(xt, x, (size_t)k * sizeof *x));
  CHECK(qgemv_matvec(ctx, w, xt, yt, NULL));
  CHECK(qgemv_sync(ctx));
  CHECK(qgemv_tensor_read(yt, y, (size_t)n * sizeof *y));

  CHECK(qgemv_reference_matvec(&desc, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, ref, bound));
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double r = fabs(y[i] - ref[i]) / (1e-3 * bound[i] + 1e-30);
    if (r > worst) worst = r;
  }
  printf("%s: %s %lld x %lld (group %d) on %s: y[0] = %g, worst error %.3f of the bound: %s\n", argv[1], name,
         (long long)n, (long long)k, (int)desc.group, qgemv_ctx_backend(ctx), (double)y[0], worst,
         worst <= 1.0 ? "ok" : "WRONG");
  qgemv_close(ctx);
  qgemv_model_close(model); /* after the upload the file is no longer needed */
  free(x);
  free(y);
  free(ref);
  free(bound);
  return worst <= 1.0 ? 0 : 1;
}
