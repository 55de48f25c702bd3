/* ggml GEMV timing driver: the ggml side of the issue 12 record
 * (record.sh, run-all.sh; bench/NOTES-cpu.md). Not part of the build:
 * `make -C bench/cpu-lab ggml-drv GGML=DIR`, DIR a ggml source tree built
 * with CMake in DIR/build.
 *
 * usage: ggml-drv TYPE N K M THREADS [repack 0|1|2] [working-set MB] [min-seconds]
 * y[M,N] = W[N,K] x[M,K]^T through ggml_mul_mat on the CPU backend, the
 * weight in the CPU_REPACK buffer (repack 1), AMX (2) or plain (0);
 * weights rotated over enough copies to exceed the working set; prints the
 * median and best time of the samples and the weight GB/s at the median.
 * M and THREADS may be comma lists ("1,8", "16,8,4,2,1"): every pair is
 * timed on the same weight copies, which are made once (the quantization
 * and the copies take far longer than the timing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A comma list of positive integers into v (at most cap); its length, or
 * -1 when it is not one. */
static int parse_list(const char *s, int *v, int cap) {
  int n = 0;
  while (*s) {
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || x <= 0 || x > 1 << 20 || n == cap) return -1;
    v[n++] = (int)x;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return n;
}

static enum ggml_type type_of(const char *s) {
  if (!strcmp(s, "q4_0")) return GGML_TYPE_Q4_0;
  if (!strcmp(s, "iq4_nl")) return GGML_TYPE_IQ4_NL;
  if (!strcmp(s, "tq2_0")) return GGML_TYPE_TQ2_0;
  if (!strcmp(s, "q2_0")) return GGML_TYPE_Q2_0;
  if (!strcmp(s, "f16")) return GGML_TYPE_F16;
  if (!strcmp(s, "f32")) return GGML_TYPE_F32;
  if (!strcmp(s, "q8_0")) return GGML_TYPE_Q8_0;
  fprintf(stderr, "unknown type %s\n", s);
  exit(2);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: ggml-drv TYPE N K M THREADS [repack 0|1|2] [working-set MB] [min-seconds]\n");
    return 2;
  }
  enum ggml_type type = type_of(argv[1]);
  int64_t n = atoll(argv[2]), k = atoll(argv[3]);
  int ms[16], nm = parse_list(argv[4], ms, 16), ts[16], nt = parse_list(argv[5], ts, 16);
  if (nm <= 0 || nt <= 0) {
    fprintf(stderr, "M and THREADS: positive integers, comma-separated, at most 16\n");
    return 2;
  }
  int repack = argc > 6 ? atoi(argv[6]) : 1;
  double ws_mb = argc > 7 ? atof(argv[7]) : 1100;
  double min_s = argc > 8 ? atof(argv[8]) : 2.0;

  ggml_backend_t be = ggml_backend_cpu_init();
  ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(dev);
  const char *bname = "CPU";
  if (repack) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    ggml_backend_dev_get_extra_bufts_t get = (ggml_backend_dev_get_extra_bufts_t)ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    ggml_backend_buffer_type_t *extra = get ? get(dev) : NULL;
    for (int i = 0; extra && extra[i]; i++) {
      const char *nm = ggml_backend_buft_name(extra[i]);
      fprintf(stderr, "extra buffer type: %s\n", nm);
      if (repack == 1 && strstr(nm, "REPACK")) buft = extra[i], bname = nm;
      if (repack == 2 && strstr(nm, "AMX")) buft = extra[i], bname = nm;
    }
  }
  size_t row_bytes = ggml_row_size(type, k);
  size_t wbytes = row_bytes * (size_t)n;
  int copies = (int)ceil(ws_mb * 1e6 / (double)wbytes);
  if (copies < 2) copies = 2;

  /* The quantized weight, made once on the host. */
  float *wf = malloc(sizeof(float) * (size_t)n * (size_t)k);
  unsigned s = 1;
  for (size_t i = 0; i < (size_t)n * (size_t)k; i++) {
    s = s * 1664525u + 1013904223u;
    double u1 = ((s >> 8) + 0.5) / 16777216.0;
    s = s * 1664525u + 1013904223u;
    double u2 = ((s >> 8) + 0.5) / 16777216.0;
    wf[i] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2) * 0.02);
  }
  void *wq = malloc(wbytes);
  if (type == GGML_TYPE_F32)
    memcpy(wq, wf, wbytes);
  else if (type == GGML_TYPE_F16)
    for (size_t i = 0; i < (size_t)n * (size_t)k; i++) ((ggml_fp16_t *)wq)[i] = ggml_fp32_to_fp16(wf[i]);
  else
    ggml_quantize_chunk(type, wf, wq, 0, n, k, NULL);

  struct ggml_init_params wp = {.mem_size = ggml_tensor_overhead() * (size_t)(copies + 1), .no_alloc = true};
  struct ggml_context *wctx = ggml_init(wp);
  struct ggml_tensor **W = malloc(sizeof *W * (size_t)copies);
  for (int c = 0; c < copies; c++) W[c] = ggml_new_tensor_2d(wctx, type, k, n);
  ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, buft);
  if (!wbuf) {
    fprintf(stderr, "weight allocation failed\n");
    return 1;
  }
  ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
  for (int c = 0; c < copies; c++) ggml_backend_tensor_set(W[c], wq, 0, wbytes);

  float *xf = NULL;
  int next = 0;
  for (int mi = 0; mi < nm; mi++) {
    const int64_t m = ms[mi];
    /* One graph per copy: y = W x. */
    size_t gmem = ggml_tensor_overhead() * (size_t)(3 * copies + 8) + ggml_graph_overhead() * (size_t)copies;
    struct ggml_init_params gp = {.mem_size = gmem, .no_alloc = true};
    struct ggml_context *gctx = ggml_init(gp);
    struct ggml_tensor *x = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, k, m);
    struct ggml_cgraph **G = malloc(sizeof *G * (size_t)copies);
    for (int c = 0; c < copies; c++) {
      G[c] = ggml_new_graph(gctx);
      ggml_build_forward_expand(G[c], ggml_mul_mat(gctx, W[c], x));
    }
    ggml_backend_buffer_t gbuf = ggml_backend_alloc_ctx_tensors(gctx, be);
    xf = realloc(xf, sizeof(float) * (size_t)(k * m));
    for (int64_t i = 0; i < k * m; i++) {
      s = s * 1664525u + 1013904223u;
      xf[i] = (float)((s >> 8) / 16777216.0 - 0.5);
    }
    ggml_backend_tensor_set(x, xf, 0, sizeof(float) * (size_t)(k * m));
    for (int ti = 0; ti < nt; ti++) {
      const int threads = ts[ti];
      ggml_backend_cpu_set_n_threads(be, threads);
      for (int i = 0; i < copies; i++) ggml_backend_graph_compute(be, G[(next++) % copies]);
      int cap = 100000, cnt = 0;
      double *t = malloc(sizeof(double) * (size_t)cap);
      double start = now();
      while (cnt < cap && (cnt < 10 || now() - start < min_s)) {
        double t0 = now();
        ggml_backend_graph_compute(be, G[(next++) % copies]);
        t[cnt++] = now() - t0;
      }
      qsort(t, (size_t)cnt, sizeof *t, cmp);
      double med = t[cnt / 2];
      printf("ggml %s buft=%s n=%lld k=%lld m=%lld threads=%d copies=%d ws=%.0fMB samples=%d median_ms=%.3f "
             "min_ms=%.3f GB/s=%.2f\n",
             ggml_type_name(type), bname, (long long)n, (long long)k, (long long)m, threads, copies,
             copies * (double)wbytes / 1e6, cnt, med * 1e3, t[0] * 1e3, (double)wbytes / med / 1e9);
      fflush(stdout);
      free(t);
    }
    ggml_backend_buffer_free(gbuf);
    ggml_free(gctx);
    free(G);
  }
  return 0;
}
