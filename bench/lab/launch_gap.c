/* Where a small matvec's time goes between launches: the same calls timed
 * as `qgemv bench` times them (back to back on a stream, one sync per
 * batch), with the host's own time to queue them, and captured once in a
 * CUDA graph and replayed, as an inference engine runs a decode step (and
 * as ggml-cuda's figures in issue 13 were taken: matvecs in a graph). If
 * the graph is faster, the host's launch path, not the kernel, sets the
 * stream figure.
 *
 * Public API only, plus the driver's graph calls from libcuda.so.1 (as
 * tests/test_cuda_backend.c takes them). Weights are random codes with
 * valid scales, rotated over copies of at least 256 MB (past the L2).
 *
 *   cc -std=c11 -O2 -Iinclude bench/lab/launch_gap.c -o launch_gap \
 *     -LBUILD/.libs -lqgemv -ldl
 *   launch_gap [CALLS [REPS]]       (default 400 calls, 7 replays)
 *
 * Prints one line per shape, format and dtype (bf16 x and y, m = 1): us
 * per call on the stream (median of REPS batches), the host's us per call
 * to queue them, and us per call of the graph (median of REPS replays). */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qgemv.h"

static void *driver(const char *name, const char *alt) {
  static void *lib;
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return NULL;
  void *f = dlsym(lib, name);
  return f ? f : (alt ? dlsym(lib, alt) : NULL);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

#define CHECK(call)                                                                          \
  do {                                                                                       \
    const qgemv_status s_ = (call);                                                          \
    if (s_ != QGEMV_OK) {                                                                    \
      fprintf(stderr, "launch_gap: %s: %s (%s)\n", #call, qgemv_status_str(s_), qgemv_last_error()); \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

/* A random weight of this format, uploaded `copies` times: random code
 * bytes, every scale finite (the copies differ only in where they live,
 * which is what the rotation needs). */
static void upload_copies(qgemv_ctx *ctx, const qgemv_format_info *f, int64_t n, int64_t k, int copies,
                          qgemv_weight **w) {
  const size_t bytes = qgemv_data_bytes(f->format, n, k, f->group), ns = qgemv_scale_count(f->format, n, k, f->group);
  uint8_t *data = malloc(bytes);
  float *scales = ns ? malloc(ns * sizeof *scales) : NULL;
  if (!data || (ns && !scales)) exit(1);
  uint64_t r = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < bytes; i++) r ^= r << 13, r ^= r >> 7, r ^= r << 17, data[i] = (uint8_t)r;
  for (size_t i = 0; i < ns; i++) scales[i] = 0.01f;
  if (!ns) /* inline fp16 scales at each block's start: 2^-7 */
    for (size_t b = 0; b < bytes; b += (size_t)f->block_bytes) data[b] = 0x00, data[b + 1] = 0x20;
  const qgemv_weight_desc d = {f->format, n, k, f->group, data, scales};
  for (int c = 0; c < copies; c++) CHECK(qgemv_weight_upload(ctx, &d, &w[c]));
  free(data);
  free(scales);
}

int main(int argc, char **argv) {
  const int calls = argc > 1 ? atoi(argv[1]) : 400, reps = argc > 2 ? atoi(argv[2]) : 7;
  if (calls < 1 || reps < 1 || reps > 64) return fprintf(stderr, "usage: launch_gap [CALLS [REPS<=64]]\n"), 2;
  int (*begin)(void *, int) = driver("cuStreamBeginCapture_v2", "cuStreamBeginCapture");
  int (*end)(void *, void **) = driver("cuStreamEndCapture", NULL);
  int (*inst)(void **, void *, unsigned long long) = driver("cuGraphInstantiateWithFlags", NULL);
  int (*launch)(void *, void *) = driver("cuGraphLaunch", NULL);
  int (*ssync)(void *) = driver("cuStreamSynchronize", NULL);
  int (*exec_destroy)(void *) = driver("cuGraphExecDestroy", NULL);
  int (*graph_destroy)(void *) = driver("cuGraphDestroy", NULL);
  int (*screate)(void **, unsigned) = driver("cuStreamCreate", NULL);
  int (*retain)(void **, int) = driver("cuDevicePrimaryCtxRetain", NULL);
  int (*push)(void *) = driver("cuCtxPushCurrent_v2", "cuCtxPushCurrent");
  int (*pop)(void **) = driver("cuCtxPopCurrent_v2", "cuCtxPopCurrent");
  if (!(begin && end && inst && launch && ssync && exec_destroy && graph_destroy && screate && retain && push && pop))
    return fprintf(stderr, "launch_gap: libcuda.so.1 with the graph API is needed\n"), 1;

  qgemv_ctx *ctx = NULL;
  CHECK(qgemv_open("cuda:0", &ctx));
  void *pctx, *stream, *popped;
  if (retain(&pctx, qgemv_ctx_device(ctx)) || push(pctx) || screate(&stream, 1)) return 1;
  pop(&popped);
  CHECK(qgemv_set_stream(ctx, stream));

  static const int64_t shapes[][2] = {{1024, 4096}, {4096, 4096}, {14336, 4096}, {4096, 14336}, {28672, 8192}};
  static const char *formats[] = {"nf4", "q2_0g64", "q2_0"};
  printf("%-12s %-8s  %10s %10s %10s %8s\n", "shape", "format", "stream us", "queue us", "graph us", "copies");
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (size_t fi = 0; fi < 3; fi++) {
      const int64_t n = shapes[si][0], k = shapes[si][1];
      qgemv_format_info f;
      CHECK(qgemv_format_lookup(formats[fi], &f));
      const size_t wbytes = qgemv_data_bytes(f.format, n, k, f.group);
      int copies = (int)((256u << 20) / wbytes) + 1;
      if (copies < 4) copies = 4;
      if (copies > 96) copies = 96;
      qgemv_weight **w = malloc((size_t)copies * sizeof *w);
      if (!w) return 1;
      upload_copies(ctx, &f, n, k, copies, w);
      qgemv_tensor *x, *y;
      CHECK(qgemv_tensor_new(ctx, QGEMV_BF16, 1, k, &x));
      CHECK(qgemv_tensor_new(ctx, QGEMV_BF16, 1, n, &y));
      uint16_t *xh = malloc((size_t)k * 2);
      for (int64_t i = 0; i < k; i++) xh[i] = qgemv_f32_to_bf16((float)((i * 37 % 101) - 50) / 64.0f);
      CHECK(qgemv_tensor_write(x, xh, (size_t)k * 2));
      free(xh);

      double st[64], q[64], gr[64];
      for (int c = 0; c < copies; c++) CHECK(qgemv_matvec(ctx, w[c], x, y, NULL)); /* warm-up */
      CHECK(qgemv_sync(ctx));
      for (int r = 0; r < reps; r++) {
        const double t0 = now_us();
        for (int i = 0; i < calls; i++) CHECK(qgemv_matvec(ctx, w[i % copies], x, y, NULL));
        const double t1 = now_us();
        CHECK(qgemv_sync(ctx));
        st[r] = (now_us() - t0) / calls, q[r] = (t1 - t0) / calls;
      }
      void *graph, *exec;
      push(pctx);
      if (begin(stream, 2 /* relaxed */)) return fprintf(stderr, "launch_gap: capture refused\n"), 1;
      pop(&popped);
      for (int i = 0; i < calls; i++) CHECK(qgemv_matvec(ctx, w[i % copies], x, y, NULL));
      push(pctx);
      if (end(stream, &graph) || inst(&exec, graph, 0)) return fprintf(stderr, "launch_gap: graph failed\n"), 1;
      launch(exec, stream); /* warm-up */
      ssync(stream);
      for (int r = 0; r < reps; r++) {
        const double t0 = now_us();
        if (launch(exec, stream) || ssync(stream)) return fprintf(stderr, "launch_gap: replay failed\n"), 1;
        gr[r] = (now_us() - t0) / calls;
      }
      exec_destroy(exec);
      graph_destroy(graph);
      pop(&popped);
      char sh[32];
      snprintf(sh, sizeof sh, "%lldx%lld", (long long)n, (long long)k);
      printf("%-12s %-8s  %10.2f %10.2f %10.2f %8d\n", sh, formats[fi], median(st, reps), median(q, reps),
             median(gr, reps), copies);
      fflush(stdout);
      qgemv_tensor_free(x);
      qgemv_tensor_free(y);
      for (int c = 0; c < copies; c++) qgemv_weight_free(w[c]);
      free(w);
    }
  CHECK(qgemv_set_stream(ctx, NULL));
  qgemv_close(ctx);
  return 0;
}
