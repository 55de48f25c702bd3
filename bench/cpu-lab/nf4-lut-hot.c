/* NF4 by an activation-side lookup table in f32, scalar lookups (issue 12,
 * bench/NOTES-cpu.md v38): a question, not a kernel of the library.
 *
 * For every pair of k positions (a "slot", one code byte) a 256-entry f32
 * table holds v[lo] x0 + v[hi] x1 for every byte value, so a code byte costs
 * one load-and-add instead of the shuffle decode's 12 shuffles per 32
 * weights. Tables are built per chunk of 16 slots (32 k positions, 16 KiB:
 * L1) and used by every row of the thread, so the weight is laid out
 * [chunk][row][16 bytes]; a row's chunk sum times its block's scale goes
 * into an f64 accumulator per row. One thread, best of REPS calls, TSC
 * ticks per weight, against nf4-avx2-hot's figure for the library's kernel
 * at the same N x K:
 *   make -C bench/cpu-lab nf4-lut-hot && bench/cpu-lab/nf4-lut-hot N K REPS [ROWS_PER_BLOCK]
 * (ROWS_PER_BLOCK: rows per chunk pass, default N; v38 took 1024 streamed)
 * It checks its y against a plain f64 sum of the same weights and x
 * (|y - ref| / R, R = sqrt(sum (w x)^2), DESIGN.md 5's measure). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "core/layouts.h" /* qg_nf4_lut, the NormalFloat table */


enum { SLOTS = 16 }; /* code bytes per chunk: 32 weights */

static void build(float (*T)[256], const float *x) {
  for (int s = 0; s < SLOTS; s++) {
    float a[16], b[16];
    for (int i = 0; i < 16; i++) a[i] = qg_nf4_lut[i] * x[2 * s], b[i] = qg_nf4_lut[i] * x[2 * s + 1];
    for (int h = 0; h < 16; h++)
      for (int l = 0; l < 16; l++) T[s][h * 16 + l] = a[l] + b[h];
  }
}

#define LK(w, i, s) T[s][(w >> (8 * (i))) & 255]

/* rows [r0, r1) of chunk c; codes [chunk][row][16], scales [row][k/64] */
static void rows_chunk(const uint8_t *codes, const float *sc, float (*T)[256], double *acc, int64_t n, int64_t k,
                       int64_t c, int64_t r0, int64_t r1) {
  const int64_t nb = k / 64;
  for (int64_t r = r0; r < r1; r++) {
    const uint8_t *p = codes + ((size_t)c * n + r) * 16;
    uint64_t a, b;
    memcpy(&a, p, 8);
    memcpy(&b, p + 8, 8);
    const float s0 = (LK(a, 0, 0) + LK(a, 1, 1)) + (LK(a, 2, 2) + LK(a, 3, 3));
    const float s1 = (LK(a, 4, 4) + LK(a, 5, 5)) + (LK(a, 6, 6) + LK(a, 7, 7));
    const float s2 = (LK(b, 0, 8) + LK(b, 1, 9)) + (LK(b, 2, 10) + LK(b, 3, 11));
    const float s3 = (LK(b, 4, 12) + LK(b, 5, 13)) + (LK(b, 6, 14) + LK(b, 7, 15));
    acc[r] += (double)(((s0 + s1) + (s2 + s3)) * sc[r * nb + c / 2]);
  }
}

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 14336, k = argc > 2 ? atoll(argv[2]) : 8192;
  const int reps = argc > 3 ? atoi(argv[3]) : 5;
  const int64_t chunks = k / 32;
  uint8_t *codes = aligned_alloc(64, (size_t)(n * k / 2));
  float *sc = aligned_alloc(64, (size_t)(n * (k / 64)) * 4), *x = aligned_alloc(64, (size_t)k * 4);
  float (*T)[256] = aligned_alloc(64, sizeof(float) * SLOTS * 256);
  double *acc = aligned_alloc(64, (size_t)n * 8);
  float *y = malloc((size_t)n * 4);
  srand(1);
  for (int64_t i = 0; i < n * k / 2; i++) codes[i] = (uint8_t)rand();
  for (int64_t i = 0; i < n * (k / 64); i++) sc[i] = (float)(rand() % 1000 + 1) / 1000.0f;
  for (int64_t i = 0; i < k; i++) x[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
  /* rows in blocks so the accumulators stay in L2 while a chunk's tables stay in L1 */
  const int64_t RB = argc > 4 ? atoll(argv[4]) : n;
  double best = 1e30, build_t = 0;
  for (int rep = 0; rep < reps; rep++) {
    const uint64_t t0 = __rdtsc();
    uint64_t tb = 0;
    for (int64_t r0 = 0; r0 < n; r0 += RB) {
      const int64_t r1 = r0 + RB < n ? r0 + RB : n;
      for (int64_t r = r0; r < r1; r++) acc[r] = 0.0;
      for (int64_t c = 0; c < chunks; c++) {
        const uint64_t b0 = __rdtsc();
        build(T, x + c * 32);
        tb += __rdtsc() - b0;
        rows_chunk(codes, sc, T, acc, n, k, c, r0, r1);
      }
      for (int64_t r = r0; r < r1; r++) y[r] = (float)acc[r];
    }
    const double t = (double)(__rdtsc() - t0);
    if (t < best) best = t, build_t = (double)tb;
  }
  /* check a sample of rows against an f64 sum (codes [chunk][row][16]: byte
   * j of chunk c is k positions 32c + 2j (low nibble) and 32c + 2j + 1) */
  double worst = 0;
  for (int64_t r = 0; r < n; r += n / 64 + 1) {
    double ref = 0, R2 = 0;
    for (int64_t c = 0; c < chunks; c++)
      for (int j = 0; j < 16; j++) {
        const uint8_t e = codes[((size_t)c * n + r) * 16 + j];
        const double s = sc[r * (k / 64) + c / 2];
        const double w0 = qg_nf4_lut[e & 15] * s, w1 = qg_nf4_lut[e >> 4] * s;
        ref += w0 * x[32 * c + 2 * j] + w1 * x[32 * c + 2 * j + 1];
        R2 += (w0 * x[32 * c + 2 * j]) * (w0 * x[32 * c + 2 * j]) + (w1 * x[32 * c + 2 * j + 1]) * (w1 * x[32 * c + 2 * j + 1]);
      }
    const double e = fabs(y[r] - ref) / sqrt(R2);
    if (e > worst) worst = e;
  }
  printf("n=%lld k=%lld rows/block %lld: %.4f ticks per weight (builds %.4f), worst |y - ref| / R %.2e\n",
         (long long)n, (long long)k, (long long)RB, best / (double)(n * k), build_t / (double)(n * k), worst);
  return 0;
}
