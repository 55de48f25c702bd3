/* Throughput on this core of the avx2 Q2_0 loop's instructions (q2_avx2.c):
 * vpmaddubsw, vpaddw, vpsrlw, vpand, vpbroadcastd from memory, and two
 * mixes; 8 independent chains (distinct start values, so that the compiler
 * cannot merge them), best of 5 x 2e7 iterations, in core cycles from a
 * dependent-add chain (no PMU in the VM). bench/NOTES-cpu.md v29:
 *   make -C bench/cpu-lab avx2-int-rate && bench/cpu-lab/avx2-int-rate */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <x86intrin.h>

#include "clock-chain.h"

#define T __attribute__((target("avx2"), noinline))
#define N 20000000L

static int32_t mem[16] __attribute__((aligned(64))) = {1, 2, 3, 4, 5, 6, 7, 8};

#define KEEP __asm__ volatile("" ::"x"(a0), "x"(a1), "x"(a2), "x"(a3), "x"(a4), "x"(a5), "x"(a6), "x"(a7))
#define R8(op) a0 = op(a0), a1 = op(a1), a2 = op(a2), a3 = op(a3), a4 = op(a4), a5 = op(a5), a6 = op(a6), a7 = op(a7)
#define MADD(a) _mm256_maddubs_epi16(t, a)
#define ADDW(a) _mm256_add_epi16(t, a)
#define SRL(a) _mm256_srli_epi16(a, 2)
#define AND(a) _mm256_and_si256(a, t)

T int main(void) {
  const double tpc = ticks_per_cycle();
  __m256i a0 = _mm256_set1_epi8(1), a1 = _mm256_set1_epi8(3), a2 = _mm256_set1_epi8(5), a3 = _mm256_set1_epi8(7);
  __m256i a4 = _mm256_set1_epi8(9), a5 = _mm256_set1_epi8(11), a6 = _mm256_set1_epi8(13), a7 = _mm256_set1_epi8(15);
  const __m256i t = _mm256_set1_epi8(2);
  static const char *const names[7] = {"8 vpmaddubsw", "8 vpaddw", "8 vpsrlw", "8 vpand", "8 vpbroadcastd m32",
                                       "4 vpbroadcastd m32 + 8 vpmaddubsw", "8 vpmaddubsw + 8 vpaddw (8 sums)"};
  printf("core: %.3f TSC ticks per cycle\n", tpc);
/* One timed loop per mode: a switch inside the loop would cost as much as
 * the cheap instructions it measures. */
#define TIME(mode, body)                                                     \
  do {                                                                       \
    double best = 1e30;                                                      \
    for (int r = 0; r < 5; r++) {                                            \
      const unsigned long long t0 = __rdtsc();                               \
      for (long i = 0; i < N; i++) {                                         \
        body;                                                                \
        KEEP;                                                                \
      }                                                                      \
      const double d = (double)(__rdtsc() - t0) / N / tpc;                   \
      if (d < best) best = d;                                                \
    }                                                                        \
    printf("%-36s %.2f cycles per iteration\n", names[mode], best);         \
  } while (0)
  TIME(0, R8(MADD));
  TIME(1, R8(ADDW));
  TIME(2, R8(SRL));
  TIME(3, R8(AND));
  TIME(4, __asm__ volatile("vpbroadcastd (%0),%%ymm0\n\tvpbroadcastd 4(%0),%%ymm1\n\tvpbroadcastd 8(%0),%%ymm2\n\t"
                           "vpbroadcastd 12(%0),%%ymm3\n\tvpbroadcastd 16(%0),%%ymm4\n\tvpbroadcastd 20(%0),%%ymm5\n\t"
                           "vpbroadcastd 24(%0),%%ymm6\n\tvpbroadcastd 28(%0),%%ymm7" ::"r"(mem)
                           : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7"));
  TIME(5, __asm__ volatile("vpbroadcastd (%0),%%ymm0\n\tvpmaddubsw %%ymm0,%%ymm8,%%ymm9\n\t"
                           "vpmaddubsw %%ymm0,%%ymm10,%%ymm11\n\tvpbroadcastd 4(%0),%%ymm1\n\t"
                           "vpmaddubsw %%ymm1,%%ymm8,%%ymm12\n\tvpmaddubsw %%ymm1,%%ymm10,%%ymm13\n\t"
                           "vpbroadcastd 8(%0),%%ymm2\n\tvpmaddubsw %%ymm2,%%ymm8,%%ymm14\n\t"
                           "vpmaddubsw %%ymm2,%%ymm10,%%ymm15\n\tvpbroadcastd 12(%0),%%ymm3\n\t"
                           "vpmaddubsw %%ymm3,%%ymm8,%%ymm4\n\tvpmaddubsw %%ymm3,%%ymm10,%%ymm5" ::"r"(mem)
                           : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm9", "xmm11", "xmm12", "xmm13",
                             "xmm14", "xmm15"));
  /* the loop's pattern: each product added into its own int16 accumulator */
  TIME(6, __asm__ volatile("vpmaddubsw %%ymm0,%%ymm8,%%ymm9\n\tvpaddw %%ymm9,%%ymm1,%%ymm1\n\t"
                           "vpmaddubsw %%ymm0,%%ymm10,%%ymm11\n\tvpaddw %%ymm11,%%ymm2,%%ymm2\n\t"
                           "vpmaddubsw %%ymm0,%%ymm8,%%ymm12\n\tvpaddw %%ymm12,%%ymm3,%%ymm3\n\t"
                           "vpmaddubsw %%ymm0,%%ymm10,%%ymm13\n\tvpaddw %%ymm13,%%ymm4,%%ymm4\n\t"
                           "vpmaddubsw %%ymm0,%%ymm8,%%ymm14\n\tvpaddw %%ymm14,%%ymm5,%%ymm5\n\t"
                           "vpmaddubsw %%ymm0,%%ymm10,%%ymm15\n\tvpaddw %%ymm15,%%ymm6,%%ymm6\n\t"
                           "vpmaddubsw %%ymm0,%%ymm8,%%ymm9\n\tvpaddw %%ymm9,%%ymm7,%%ymm7\n\t"
                           "vpmaddubsw %%ymm0,%%ymm10,%%ymm11\n\tvpaddw %%ymm11,%%ymm1,%%ymm1" ::
                               : "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm9", "xmm11", "xmm12",
                                 "xmm13", "xmm14", "xmm15"));
  return 0;
}
