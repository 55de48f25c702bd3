/* Speed of the lab kernels against the library's, in alternating rounds
 * (lab).
 *
 *   ./speed FORMAT N K M [threads] [rounds] [working-set MB]
 *     FORMAT: nf4, q2g64, q2g128
 *
 * Each variant gets its own weight copies, enough of them to exceed the
 * working set (default 1100 MB), so every call streams its weight from
 * memory. A round times `calls` back-to-back calls of each variant in turn
 * (rotating over the copies); the table gives the median and the best of
 * the rounds' per-call times and the weight bytes per second at the
 * median. x is quantized once per row outside the timed calls (its cost is
 * printed separately). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

typedef struct variant {
  const char *name;
  int kind; /* 0 qgemv, 1 q2v, 2 nf4i, 3 q2t */
  int digits;
  int copies;
  void **w;
  double bytes;
  double t[256];
} variant;

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: speed nf4|q2g64|q2g128 N K M [threads] [rounds] [ws_mb]\n");
    return 2;
  }
  const char *fmt = argv[1];
  int64_t n = atoll(argv[2]), k = atoll(argv[3]), m = atoll(argv[4]);
  int threads = argc > 5 ? atoi(argv[5]) : 2;
  int rounds = argc > 6 ? atoi(argv[6]) : 7;
  double ws = (argc > 7 ? atof(argv[7]) : 1100) * 1e6;
  if (rounds > 256) rounds = 256;
  qgemv_format f = strcmp(fmt, "nf4") == 0 ? QGEMV_NF4 : QGEMV_Q2_0;
  int g = f == QGEMV_NF4 ? 64 : strcmp(fmt, "q2g64") == 0 ? 64 : 128;

  /* The host weight. */
  uint64_t s = 7;
  float *wf = malloc(sizeof(float) * (size_t)(n * k));
  for (int64_t i = 0; i < n * k; i++) wf[i] = (float)(0.02 * lab_normal(&s));
  size_t dbytes = qgemv_data_bytes(f, n, k, g), ns = qgemv_scale_count(f, n, k, g);
  uint8_t *data = malloc(dbytes);
  float *scales = ns ? malloc(ns * sizeof(float)) : NULL;
  if (qgemv_quantize(f, n, k, g, wf, data, scales) != QGEMV_OK) return 1;
  free(wf);
  qgemv_weight_desc d = {.format = f, .n = n, .k = k, .group = g, .data = data, .scales = scales};

  float *x = malloc(sizeof(float) * (size_t)(m * k));
  for (int64_t i = 0; i < m * k; i++) x[i] = (float)lab_normal(&s);
  qgemv_ctx *ctx;
  qgemv_tensor *tx, *ty;
  if (qgemv_open("cpu", &ctx) || qgemv_tensor_new(ctx, QGEMV_F32, m, k, &tx) || qgemv_tensor_new(ctx, QGEMV_F32, m, n, &ty))
    return 1;
  qgemv_tensor_write(tx, x, sizeof(float) * (size_t)(m * k));
  qgemv_device_info info;
  qgemv_ctx_info(ctx, &info);

  variant v[5];
  int nv = 0;
  v[nv++] = (variant){.name = "qgemv", .kind = 0};
  if (f == QGEMV_Q2_0) {
    v[nv++] = (variant){.name = "q2v", .kind = 1, .digits = 4};
    v[nv++] = (variant){.name = "q2t", .kind = 3};
  } else {
    v[nv++] = (variant){.name = "nf4i", .kind = 2};
  }
  double packed = (double)dbytes + (double)ns * 4.0;
  for (int i = 0; i < nv; i++) {
    v[i].bytes = packed;
    v[i].copies = (int)ceil(ws / packed);
    if (v[i].copies < 2) v[i].copies = 2;
    v[i].w = calloc((size_t)v[i].copies, sizeof(void *));
    for (int c = 0; c < v[i].copies; c++) {
      if (v[i].kind == 0) {
        if (qgemv_weight_upload(ctx, &d, (qgemv_weight **)&v[i].w[c]) != QGEMV_OK) return 1;
      } else {
        size_t b = v[i].kind == 1 ? q2v_bytes(n, k, g) : v[i].kind == 3 ? q2t_bytes(n, k, g) : nf4i_bytes(n, k);
        v[i].w[c] = aligned_alloc(2 << 20, (b + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1));
        if (v[i].kind == 1)
          q2v_repack(data, n, k, g, v[i].w[c]);
        else if (v[i].kind == 3)
          q2t_repack(data, n, k, g, v[i].w[c]);
        else
          nf4i_repack(data, scales, n, k, v[i].w[c]);
      }
    }
  }
  qg_xfix_row *xr = calloc((size_t)m, sizeof *xr);
  void *xws = aligned_alloc(64, (size_t)m * qg_xfix_row_bytes(k, g));
  double tq0 = lab_now();
  for (int64_t t = 0; t < m && f == QGEMV_Q2_0; t++)
    xr[t] = qg_xfix_quantize(x + t * k, k, g, (char *)xws + (size_t)t * qg_xfix_row_bytes(k, g), qg_xfix_term_portable);
  double tq = lab_now() - tq0;
  float *tab = malloc(sizeof(float) * (size_t)(m * k) * 8u);
  double tt0 = lab_now();
  for (int64_t t = 0; t < m; t++) q2t_tables(x + t * k, k, tab + (size_t)t * (size_t)k * 8u);
  double ttab = lab_now() - tt0;
  float *y = malloc(sizeof(float) * (size_t)(m * n));

  int calls = 0, next[5] = {0};
  for (int r = -1; r < rounds; r++) {
    for (int i = 0; i < nv; i++) {
      if (calls == 0) calls = 1;
      double t0 = lab_now();
      for (int c = 0; c < calls; c++) {
        void *w = v[i].w[next[i]];
        next[i] = (next[i] + 1) % v[i].copies;
        if (v[i].kind == 0)
          qgemv_matvec(ctx, w, tx, ty, NULL);
        else if (v[i].kind == 1)
          q2v_matvec(w, n, k, g, xr, x, m, y, threads);
        else if (v[i].kind == 3)
          q2t_matvec(w, n, k, g, tab, m, y, threads);
        else
          nf4i_matvec(w, n, k, x, m, y, threads);
      }
      double dt = (lab_now() - t0) / calls;
      if (r < 0 && i == 0) calls = (int)(0.3 / dt) + 1; /* about 0.3 s per variant and round */
      if (r >= 0) v[i].t[r] = dt;
    }
  }
  printf("%s %lldx%lld m=%lld, %d threads, level %s, %d rounds of %d calls, weights %.1f MB x %d copies\n", fmt,
         (long long)n, (long long)k, (long long)m, threads, info.isa, rounds, calls, packed / 1e6, v[0].copies);
  printf("  x quantization (cpu_xfix.c, all rows): %.1f us; pair tables: %.1f us\n", tq * 1e6, ttab * 1e6);
  for (int i = 0; i < nv; i++) {
    qsort(v[i].t, (size_t)rounds, sizeof(double), cmpd);
    double med = v[i].t[rounds / 2];
    printf("  %-8s median %8.1f us  best %8.1f us  %6.1f GB/s\n", v[i].name, med * 1e6, v[i].t[0] * 1e6, v[i].bytes / med / 1e9);
  }
  return 0;
}
