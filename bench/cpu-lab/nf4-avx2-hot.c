/* The avx2 level's NF4 kernel (src/backend-cpu/nf4_avx2.c, compiled in)
 * on hot data: one thread, best of REPS calls, TSC ticks per weight (and
 * per weight and activation row). bench/NOTES-cpu.md v27's lab figures:
 *   make -C bench/cpu-lab nf4-avx2-hot && bench/cpu-lab/nf4-avx2-hot N K M REPS
 * (defaults 64 4096 1 100; 128 x 4096 stays in L2, 16384 x 8192 streams).
 * For main's kernel before v27 (kernel_tmpl.h's), build this against a
 * checkout of 2e0e80f with NF4_AVX2_BASE=1 (its level_avx2.c held it). */
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

#if NF4_AVX2_BASE
#include "backend-cpu/level_avx2.c"
/* level_avx2.c's other kernels and hooks, which this harness never calls */
bool qg_cpu_has_avx2(void) { return true; }
void qg_q2_avx2_rows_g64(const qg_cpu_job *j, int64_t a, int64_t b) { (void)j, (void)a, (void)b; }
void qg_q2_avx2_rows_g128(const qg_cpu_job *j, int64_t a, int64_t b) { (void)j, (void)a, (void)b; }
double qg_q2_avx2_xfix(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t) {
  (void)x, (void)res, (void)g, (void)bits, (void)out, (void)t;
  return 0;
}
void qg_cpu_xorder_transpose(int lanes, int vecs, qg_cpu_xorder *out) { (void)lanes, (void)vecs, (void)out; }
#define NF4_ROWS qg_cpu_level_avx2.kernels[QG_LAYOUT_NF4].rows
#else
#include "backend-cpu/nf4_avx2.c"
#define NF4_ROWS qg_nf4_avx2_rows
#endif

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 64, k = argc > 2 ? atoll(argv[2]) : 4096;
  const int64_t m = argc > 3 ? atoll(argv[3]) : 1;
  const int reps = argc > 4 ? atoi(argv[4]) : 100;
  uint8_t *codes = aligned_alloc(64, (size_t)(n * k / 2));
  float *sc = aligned_alloc(64, (size_t)(n * (k / 64)) * 4), *x = aligned_alloc(64, (size_t)(m * k) * 4);
  float *y = malloc((size_t)(m * n) * 4);
  srand(1);
  for (int64_t i = 0; i < n * k / 2; i++) codes[i] = (uint8_t)rand();
  for (int64_t i = 0; i < n * (k / 64); i++) sc[i] = (float)(rand() % 1000 + 1) / 1000.0f;
  for (int64_t i = 0; i < m * k; i++) x[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
  qg_cpu_weight W = {0};
  W.desc.n = n, W.desc.k = k, W.desc.data = codes, W.desc.scales = sc;
  qg_cpu_job job = {.w = &W, .m = m, .xn = x, .y = y, .y_dtype = QGEMV_F32};
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    const uint64_t t0 = __rdtsc();
    NF4_ROWS(&job, 0, n);
    const double t = (double)(__rdtsc() - t0);
    if (t < best) best = t;
  }
  double cs = 0;
  for (int64_t i = 0; i < m * n; i++) cs += y[i];
  printf("n=%lld k=%lld m=%lld: %.4f ticks per weight, %.4f per weight and row (checksum %.6g)\n", (long long)n,
         (long long)k, (long long)m, best / (double)(n * k), best / (double)(n * k * m), cs);
  return 0;
}
