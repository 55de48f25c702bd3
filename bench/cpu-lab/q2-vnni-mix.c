/* The avx512vnni level's Q2_0 block sums (q2_vnni_sums.h, compiled in) on
 * data in L1, one thread: vpdpbusd per cycle of block_sums (one activation
 * row), block_sums2 (two rows sharing each decoded code vector) and
 * variants, to find what holds the m > 1 loop under the core's 2 per cycle
 * (bench/NOTES-cpu.md v39). The clock from clock-chain.h (no PMU in the VM).
 *
 *   ./q2-vnni-mix [g [k]]      g: 64 (default) or 128; k: elements per
 *                              row (default 16 g: the data in L1) */
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

#include "clock-chain.h"
#include "q2_vnni_sums.h"

static int NBLK = 16;
static int REPS = 20000;

static volatile int32_t sink;

/* mode 0: block_sums per row (m = 1's path, two rows); 1: block_sums2 (the
 * m > 1 pair path); 2: block_sums2 and the fold of both rows. */
__attribute__((noinline)) QG_TARGET static void run(const uint8_t *w, const int8_t *xd, const int8_t *yd, int g, int mode) {
  const size_t vb = 16 * qg_interleave_q2_block(g);
  const int32_t ds[4] = {1, 2, 3, 0};
  __m512i acc = _mm512_setzero_si512();
  qg_acc16 a0, a1;
  qg_acc16_zero(&a0);
  qg_acc16_zero(&a1);
  for (int r = 0; r < REPS; r++) {
    grp G = {.p = w, .rows = 16, .lanes = 0xffff};
    for (int b = 0; b < NBLK; b++, G.p += vb) {
      __m512i A[3], B[3];
      if (mode == 0) {
        block_sums(&G, xd + 4 * b * g, ds, g, false, A);
        block_sums(&G, yd + 4 * b * g, ds, g, false, B);
      } else {
        block_sums2(&G, xd + 4 * b * g, yd + 4 * b * g, ds, ds, g, false, A, B);
      }
      if (mode == 2) {
        __m512 s = scales(&G);
        fold(A, s, 0.5, &a0);
        fold(B, s, 0.5, &a1);
      } else {
        acc = _mm512_add_epi32(acc, _mm512_xor_si512(_mm512_xor_si512(A[0], A[1]), _mm512_xor_si512(A[2], B[0])));
        acc = _mm512_add_epi32(acc, _mm512_xor_si512(B[1], B[2]));
      }
    }
  }
  sink = _mm512_reduce_add_epi32(acc) + (int32_t)_mm512_reduce_add_pd(_mm512_add_pd(a0.lo, a1.hi));
}

int main(int argc, char **argv) {
  const int g = argc > 1 ? atoi(argv[1]) : 64;
  if (argc > 2) NBLK = atoi(argv[2]) / g;
  REPS = 20000 * 16 / NBLK;
  const size_t vb = 16 * qg_interleave_q2_block(g);
  uint8_t *w = aligned_alloc(64, (size_t)NBLK * vb);
  int8_t *xd = aligned_alloc(64, 4u * NBLK * (size_t)g), *yd = aligned_alloc(64, 4u * NBLK * (size_t)g);
  srand(1);
  for (size_t i = 0; i < NBLK * vb; i++) w[i] = (uint8_t)rand();
  for (size_t i = 0; i < 4u * NBLK * (size_t)g; i++) xd[i] = (int8_t)rand(), yd[i] = (int8_t)rand();
  for (int b = 0; b < NBLK; b++) memset(w + b * vb, 0x3c, 32); /* fp16 scales 1.0 */
  const double tpc = ticks_per_cycle();
  const char *names[] = {"block_sums x 2 rows", "block_sums2", "block_sums2 + fold"};
  for (int mode = 0; mode < 3; mode++) {
    double best = 1e30;
    for (int t = 0; t < 7; t++) {
      unsigned long long t0 = __rdtsc();
      run(w, xd, yd, g, mode);
      double c = (double)(__rdtsc() - t0) / tpc;
      if (c < best) best = c;
    }
    const double dots = (double)REPS * NBLK * 2 * 12 * (g / 16);
    printf("g%d k %d %-22s %.2f vpdpbusd per cycle\n", g, NBLK * g, names[mode], dots / best);
  }
  return 0;
}
