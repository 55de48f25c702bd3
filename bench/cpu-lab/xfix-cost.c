/* The activation quantizer (src/backend-cpu/cpu_xfix.c with the avx2
 * level's term, compiled in) on one Gaussian row: its time (best of 200,
 * one thread; and of its first phase, which the backend spreads over the
 * threads) and how many further terms the row gets. A further term is
 * a second pass of the kernel over that block (one digit plane since v29),
 * so the count says how much kernel work an f32 x adds over a bf16 one
 * (bench/NOTES-cpu.md v29). AVX2 only:
 *   make -C bench/cpu-lab xfix-cost && bench/cpu-lab/xfix-cost K G */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

#include "cpu.h"
#include "cpu_xfix.h"

int main(int argc, char **argv) {
  const int64_t k = argc > 1 ? atoll(argv[1]) : 8192;
  const int g = argc > 2 ? atoi(argv[2]) : 128;
  if (k <= 0 || (g != 64 && g != 128) || k % g) {
    fprintf(stderr, "xfix-cost: K a positive multiple of G, G 64 or 128\n");
    return 2;
  }
  float *x = malloc((size_t)k * sizeof *x);
  srand(1);
  for (int64_t i = 0; i < k; i++) { /* Box-Muller */
    const float u1 = ((float)rand() + 1.0f) / ((float)RAND_MAX + 1.0f), u2 = (float)rand() / (float)RAND_MAX;
    x[i] = sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
  }
  const size_t rb = qg_xfix_row_bytes(k, g);
  void *ws = aligned_alloc(64, (rb + 63) / 64 * 64);
  double best = 1e30, best1 = 1e30; /* the whole, and its first phase (term 0 of every block) */
  qg_xfix_row r = {0};
  for (int i = 0; i < 200; i++) {
    const uint64_t t0 = __rdtsc();
    qg_xfix_first(x, k, g, ws, qg_q2_avx2_xfix, 0, k / g);
    const uint64_t t1 = __rdtsc();
    r = qg_xfix_finish(x, k, g, ws, qg_q2_avx2_xfix);
    const double t = (double)(__rdtsc() - t0);
    if (t < best) best = t;
    if ((double)(t1 - t0) < best1) best1 = (double)(t1 - t0);
  }
  printf("k=%lld g=%d: %.0f ticks (term 0 of every block %.0f), further terms %d over %lld blocks\n", (long long)k,
         g, best, best1, r.nextra, (long long)(k / g));
  free(x);
  free(ws);
  return 0;
}
