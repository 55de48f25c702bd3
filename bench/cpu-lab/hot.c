/* Compute speed of each kernel with its weight in cache (lab): one thread,
 * the same small weight over and over, the best of many calls. Best-of
 * timing is robust to the other processes on this shared VM (a call that
 * lost its time slice is just not the best), so these figures compare
 * kernels' instruction streams when memory timings are too noisy.
 *
 *   ./hot FORMAT N K M [calls]     FORMAT: nf4, q2g64, q2g128
 * Prints cycles per weight (per weight and activation row for M > 1), the
 * clock taken from a chain of dependent adds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

static volatile uint64_t sink;

static double clock_ghz(void) {
  double best = 1e30;
  for (int r = 0; r < 20; r++) {
    uint64_t a = 1;
    double t0 = lab_now();
    for (long i = 0; i < 1000000; i++) __asm__ volatile("add $1, %0\n add $1, %0\n add $1, %0\n add $1, %0" : "+r"(a));
    double dt = lab_now() - t0;
    sink = a;
    if (dt < best) best = dt;
  }
  return 4e6 / best / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 5) return 2;
  const char *fmt = argv[1];
  int64_t n = atoll(argv[2]), k = atoll(argv[3]), m = atoll(argv[4]);
  int calls = argc > 5 ? atoi(argv[5]) : 2000;
  qgemv_format f = strcmp(fmt, "nf4") == 0 ? QGEMV_NF4 : QGEMV_Q2_0;
  int g = f == QGEMV_NF4 ? 64 : strcmp(fmt, "q2g64") == 0 ? 64 : 128;
  uint64_t s = 11;
  float *wf = malloc(sizeof(float) * (size_t)(n * k));
  for (int64_t i = 0; i < n * k; i++) wf[i] = (float)(0.02 * lab_normal(&s));
  size_t dbytes = qgemv_data_bytes(f, n, k, g), ns = qgemv_scale_count(f, n, k, g);
  uint8_t *data = malloc(dbytes);
  float *scales = ns ? malloc(ns * sizeof(float)) : NULL;
  qgemv_quantize(f, n, k, g, wf, data, scales);
  float *x = malloc(sizeof(float) * (size_t)(m * k)), *y = malloc(sizeof(float) * (size_t)(m * n));
  for (int64_t i = 0; i < m * k; i++) x[i] = (float)lab_normal(&s);
  double ghz = clock_ghz();

  /* the library, one thread (QGEMV_NUM_THREADS=1 is set by the caller) */
  qgemv_ctx *ctx;
  qgemv_weight *qw;
  qgemv_tensor *tx, *ty;
  qgemv_weight_desc d = {.format = f, .n = n, .k = k, .group = g, .data = data, .scales = scales};
  if (qgemv_open("cpu", &ctx) || qgemv_weight_upload(ctx, &d, &qw) || qgemv_tensor_new(ctx, QGEMV_F32, m, k, &tx) ||
      qgemv_tensor_new(ctx, QGEMV_F32, m, n, &ty))
    return 1;
  qgemv_tensor_write(tx, x, sizeof(float) * (size_t)(m * k));
  qgemv_device_info info;
  qgemv_ctx_info(ctx, &info);

  uint8_t *wv = aligned_alloc(64, q2v_bytes(n, k, g) + nf4i_bytes(n, k));
  uint8_t *wt = aligned_alloc(64, q2t_bytes(n, k, g));
  qg_xfix_row *xr = calloc((size_t)m, sizeof *xr);
  void *ws = aligned_alloc(64, (size_t)m * qg_xfix_row_bytes(k, g));
  float *tab = malloc(sizeof(float) * (size_t)(m * k) * 8u);
  if (f == QGEMV_Q2_0) {
    q2v_repack(data, n, k, g, wv);
    q2t_repack(data, n, k, g, wt);
    for (int64_t t = 0; t < m; t++) {
      xr[t] = qg_xfix_quantize(x + t * k, k, g, (char *)ws + (size_t)t * qg_xfix_row_bytes(k, g), qg_xfix_term_portable);
      q2t_tables(x + t * k, k, tab + (size_t)t * (size_t)k * 8u);
    }
  } else {
    nf4i_repack(data, scales, n, k, wv);
  }
  const char *names[] = {"qgemv", f == QGEMV_Q2_0 ? "q2v" : "nf4i", "q2t"};
  int nvar = f == QGEMV_Q2_0 ? 3 : 2;
  double best[3] = {1e30, 1e30, 1e30};
  for (int c = 0; c < calls; c++)
    for (int v = 0; v < nvar; v++) {
      double t0 = lab_now();
      if (v == 0)
        qgemv_matvec(ctx, qw, tx, ty, NULL);
      else if (v == 1 && f == QGEMV_Q2_0)
        q2v_matvec(wv, n, k, g, xr, x, m, y, 1);
      else if (v == 1)
        nf4i_matvec(wv, n, k, x, m, y, 1);
      else
        q2t_matvec(wt, n, k, g, tab, m, y, 1);
      double dt = lab_now() - t0;
      if (dt < best[v]) best[v] = dt;
    }
  printf("%s %lldx%lld m=%lld, 1 thread, library level %s, clock %.2f GHz, weight %.0f KB\n", fmt, (long long)n,
         (long long)k, (long long)m, info.isa, ghz, (double)(dbytes + ns * 4) / 1024);
  for (int v = 0; v < nvar; v++)
    printf("  %-8s %9.1f us  %.3f cycles per weight%s\n", names[v], best[v] * 1e6,
           best[v] * ghz * 1e9 / ((double)n * (double)k * (double)m), m > 1 ? " and row" : "");
  return 0;
}
