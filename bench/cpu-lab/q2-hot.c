/* A level's Q2_0 kernel, compiled in, on hot data: one thread, best of
 * REPS calls, TSC ticks per weight (and per weight and activation row),
 * the activation quantizer outside the timing. Built as q2-avx2-hot
 * (src/backend-cpu/q2_avx2.c; bench/NOTES-cpu.md v29's lab figures) and,
 * with -DQ2HOT_VNNI, as q2-vnni-hot (q2_vnni.c; v39):
 *   make -C bench/cpu-lab q2-avx2-hot && bench/cpu-lab/q2-avx2-hot N K M G REPS [bf16]
 * (defaults 64 4096 1 128 200; 64 x 4096 stays in L2). x: uniform in [-1,
 * 1] in steps of 1e-3, an f32 x, so some blocks get a further term; "y
 * bits" hashes the output for bit-for-bit comparisons of two builds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#ifdef Q2HOT_VNNI
#include "backend-cpu/q2_vnni.c"
#define Q2HOT_NAME "q2-vnni-hot"
#define Q2HOT(fn) qg_q2_vnni_##fn
#else
#include "backend-cpu/q2_avx2.c"
#define Q2HOT_NAME "q2-avx2-hot"
#define Q2HOT(fn) qg_q2_avx2_##fn
#endif
#include "q2-hot-weights.h"

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 64, k = argc > 2 ? atoll(argv[2]) : 4096;
  const int64_t m = argc > 3 ? atoll(argv[3]) : 1;
  const int g = argc > 4 ? atoi(argv[4]) : 128;
  const int reps = argc > 5 ? atoi(argv[5]) : 200;
  const int bf16 = argc > 6 && strcmp(argv[6], "bf16") == 0; /* x rounded to bf16: no further terms */
  if (n % 16 || k % g || (g != 64 && g != 128) || m < 1) {
    fprintf(stderr, Q2HOT_NAME ": N a multiple of 16, K of G, G 64 or 128, M >= 1\n");
    return 2;
  }
  uint8_t *w = q2hot_weights(n, k, g);
  float *x = aligned_alloc(64, (size_t)(m * k) * 4), *y = malloc((size_t)(m * n) * 4);
  for (int64_t i = 0; i < m * k; i++) {
    x[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
    if (bf16) {
      uint32_t u;
      memcpy(&u, &x[i], 4);
      u &= 0xffff0000u;
      memcpy(&x[i], &u, 4);
    }
  }
  qg_xfix_row *xq = malloc((size_t)m * sizeof *xq);
  const size_t rb = qg_xfix_row_bytes(k, g);
  uint8_t *ws = aligned_alloc(64, (rb * (size_t)m + 63) / 64 * 64);
  for (int64_t t = 0; t < m; t++) xq[t] = qg_xfix_quantize(x + t * k, k, g, ws + (size_t)t * rb, Q2HOT(xfix));
  qg_cpu_weight W = {0};
  W.desc.n = n, W.desc.k = k, W.desc.data = w;
  qg_cpu_job job = {.w = &W, .m = m, .xn = x, .xq = xq, .y = y, .y_dtype = QGEMV_F32};
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    const uint64_t t0 = __rdtsc();
    if (g == 64)
      Q2HOT(rows_g64)(&job, 0, n);
    else
      Q2HOT(rows_g128)(&job, 0, n);
    const double t = (double)(__rdtsc() - t0);
    if (t < best) best = t;
  }
  uint64_t h = 1469598103934665603ull; /* FNV-1a of y's bytes: two builds with the same bits print the same */
  const uint8_t *yb = (const uint8_t *)y;
  for (size_t i = 0; i < (size_t)(m * n) * sizeof *y; i++) h = (h ^ yb[i]) * 1099511628211ull;
  printf("n=%lld k=%lld m=%lld g=%d%s: %.4f ticks per weight, %.4f per weight and row (y bits %016llx)\n",
         (long long)n, (long long)k, (long long)m, g, bf16 ? " bf16" : "", best / (double)(n * k),
         best / (double)(n * k * m), (unsigned long long)h);
  return 0;
}
