/* The avx512amx level's Q2_0 kernel (src/backend-cpu/q2_amx.c, compiled
 * in) against the avx512vnni level's (q2_vnni.c) on hot data: one thread,
 * best of REPS calls, TSC ticks per weight and per weight and activation
 * row, the activation quantizer outside the timing; m = 1, 2, 4, 8, 16.
 * Four kernels: vnni (the avx512vnni level: VNNI sums, its digit layout),
 * pm (the VNNI sums on the plane-major digits: what the avx512amx level
 * runs below QG_AMX_MIN_M), rows and planes (q2_amx.c's two forms of tile
 * products; planes needs m >= 2 and runs rows at m = 1). All four must
 * give y bit for bit (the same integers, the same fold); "SAME" or
 * "DIFFER" says so for each m.
 *   make -C bench/cpu-lab q2-amx-hot && bench/cpu-lab/q2-amx-hot N K G REPS [bf16]
 * (defaults 64 4096 128 200: 64 x 4096 stays in L2). x: uniform in [-1, 1]
 * in steps of 1e-3 (an f32 x: some blocks get a further term), and every
 * 37th block of the first activation row holds an infinity (the exact
 * path). Needs a CPU with AMX (the GPU machine's host). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "backend-cpu/q2_amx.c"
#include "q2-hot-weights.h"

typedef void (*rows_fn)(const qg_cpu_job *, int64_t, int64_t, int);

QG_AMX_TARGET static void run_amx(const qg_cpu_job *j, int64_t r0, int64_t r1, int g) { amx_rows_g(j, r0, r1, g, -1); }
QG_AMX_TARGET static void run_planes(const qg_cpu_job *j, int64_t r0, int64_t r1, int g) { amx_rows_g(j, r0, r1, g, 1); }
QG_AMX_TARGET static void run_pm(const qg_cpu_job *j, int64_t r0, int64_t r1, int g) { rows_g(j, r0, r1, g, true); }
QG_AMX_TARGET static void run_vnni(const qg_cpu_job *j, int64_t r0, int64_t r1, int g) { rows_g(j, r0, r1, g, false); }

static uint64_t fnv(const float *y, size_t n) {
  uint64_t h = 1469598103934665603ull;
  const uint8_t *b = (const uint8_t *)y;
  for (size_t i = 0; i < n * sizeof *y; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 64, k = argc > 2 ? atoll(argv[2]) : 4096;
  const int g = argc > 3 ? atoi(argv[3]) : 128;
  const int reps = argc > 4 ? atoi(argv[4]) : 200;
  const int bf16 = argc > 5 && strcmp(argv[5], "bf16") == 0;
  enum { MMAX = 16 };
  if (n % 16 || k % g || (g != 64 && g != 128)) {
    fprintf(stderr, "q2-amx-hot: N a multiple of 16, K of G, G 64 or 128\n");
    return 2;
  }
  if (!qg_cpu_has_avx512amx() || qg_cpu_amx_request() != NULL) {
    printf("q2-amx-hot: no usable AMX here (avx512amx level unavailable)\n");
    return 0;
  }
  const int64_t nb = k / g;
  uint8_t *w = q2hot_weights(n, k, g);
  float *x = aligned_alloc(64, (size_t)(MMAX * k) * 4);
  for (int64_t i = 0; i < MMAX * k; i++) {
    x[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
    if (bf16) {
      uint32_t u;
      memcpy(&u, &x[i], 4);
      u &= 0xffff0000u;
      memcpy(&x[i], &u, 4);
    }
  }
  for (int64_t b = 0; b < nb; b += 37) x[b * g + 5] = 1.0f / 0.0f;
  const size_t rb = qg_xfix_row_bytes(k, g);
  qg_xfix_row *xv = malloc(MMAX * sizeof *xv), *xp = malloc(MMAX * sizeof *xp);
  uint8_t *wsv = aligned_alloc(64, rb * MMAX), *wsp = aligned_alloc(64, rb * MMAX);
  for (int t = 0; t < MMAX; t++) {
    xv[t] = qg_xfix_quantize(x + t * k, k, g, wsv + (size_t)t * rb, qg_q2_vnni_xfix);
    xp[t] = qg_xfix_quantize(x + t * k, k, g, wsp + (size_t)t * rb, qg_q2_amx_xfix);
  }
  float *y = malloc((size_t)(MMAX * n) * 4);
  qg_cpu_weight W = {0};
  W.desc.n = n, W.desc.k = k, W.desc.data = w;
  enum { KERNELS = 4 };
  static const char *const name[KERNELS] = {"vnni", "pm", "rows", "planes"};
  const rows_fn fn[KERNELS] = {run_vnni, run_pm, run_amx, run_planes};
  int differ = 0;
  printf("n=%lld k=%lld g=%d%s, ticks per weight (per weight and row):\n", (long long)n, (long long)k, g,
         bf16 ? " bf16" : "");
  for (int m = 1; m <= MMAX; m *= 2) {
    double best[KERNELS];
    uint64_t h[KERNELS];
    for (int v = 0; v < KERNELS; v++) {
      qg_cpu_job job = {.w = &W, .m = m, .xn = x, .xq = v == 0 ? xv : xp, .y = y, .y_dtype = QGEMV_F32};
      best[v] = 1e30;
      for (int r = 0; r < reps; r++) {
        const uint64_t t0 = __rdtsc();
        fn[v](&job, 0, n, g);
        const double t = (double)(__rdtsc() - t0);
        if (t < best[v]) best[v] = t;
      }
      h[v] = fnv(y, (size_t)(m * n));
    }
    const int same = h[0] == h[1] && h[0] == h[2] && h[0] == h[3];
    differ += !same;
    printf("m=%2d", m);
    for (int v = 0; v < KERNELS; v++)
      printf("  %s %.4f (%.4f)", name[v], best[v] / (double)(n * k), best[v] / (double)(n * k * m));
    printf("  vnni/rows %.2f vnni/planes %.2f  y %s\n", best[0] / best[2], best[0] / best[3], same ? "SAME" : "DIFFER");
  }
  return differ != 0;
}
