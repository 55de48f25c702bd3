/* Throughput on this core of vpshufb (mode 0), byte unpacks (1), FMAs (2)
 * (ymm; 2x: xmm, which shows a core of 128-bit halves) and the NF4
 * decode's mix, 12 vpshufb with 4 FMAs (3): the floor of the
 * avx2 NF4 decode, 12 shuffles per 32 weights (bench/NOTES-cpu.md v27).
 * Each mode is its own loop of inline assembly, so that the compiler can
 * neither merge chains nor spill them; shuffles and unpacks take fixed
 * inputs (no chains), FMAs accumulate into 10 (mode 2) or 4 (mode 3)
 * registers, enough to hide their latency (4-5 cycles). Best of 5 x 2e7
 * iterations, TSC ticks per instruction and per core cycle (a chain of
 * dependent adds; no PMU in the VM). Before v34 the modes were C in one
 * loop: GCC merged the FMA chains, which started equal, into one, so modes
 * 2 and 3 timed one chain's latency.
 *   make -C bench/cpu-lab avx2-shuffle-rate && bench/cpu-lab/avx2-shuffle-rate */
#include <stdio.h>
#include <x86intrin.h>

#include "clock-chain.h"

#define N 20000000L
#define SHUF(i) "vpshufb %%ymm15,%%ymm14,%%ymm" #i "\n\t"
#define UNPK(i) "vpunpcklbw %%ymm15,%%ymm14,%%ymm" #i "\n\t"
#define FMA(i) "vfmadd231ps %%ymm14,%%ymm15,%%ymm" #i "\n\t"
#define FMAX(i) "vfmadd231ps %%xmm14,%%xmm15,%%xmm" #i "\n\t"
#define CLOBBER "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13"

#define TIME(name, ops, body)                                            \
  do {                                                                   \
    double best = 1e30;                                                  \
    for (int r = 0; r < 5; r++) {                                        \
      const unsigned long long t0 = __rdtsc();                           \
      for (long i = 0; i < N; i++) __asm__ volatile(body ::: CLOBBER);   \
      const double d = (double)(__rdtsc() - t0) / N / (ops);             \
      if (d < best) best = d;                                            \
    }                                                                    \
    printf("%-28s %.3f ticks per op, %.2f per cycle\n", name, best, tpc / best); \
  } while (0)

__attribute__((target("avx2,fma"))) int main(void) {
  const double tpc = ticks_per_cycle();
  printf("core: %.3f TSC ticks per cycle\n", tpc);
  TIME("mode 0: vpshufb", 12, SHUF(0) SHUF(1) SHUF(2) SHUF(3) SHUF(4) SHUF(5) SHUF(6) SHUF(7) SHUF(8) SHUF(9) SHUF(10) SHUF(11));
  TIME("mode 1: vpunpcklbw", 12, UNPK(0) UNPK(1) UNPK(2) UNPK(3) UNPK(4) UNPK(5) UNPK(6) UNPK(7) UNPK(8) UNPK(9) UNPK(10) UNPK(11));
  TIME("mode 2: vfmadd231ps", 10, FMA(0) FMA(1) FMA(2) FMA(3) FMA(4) FMA(5) FMA(6) FMA(7) FMA(8) FMA(9));
  TIME("mode 2x: vfmadd231ps xmm", 10, FMAX(0) FMAX(1) FMAX(2) FMAX(3) FMAX(4) FMAX(5) FMAX(6) FMAX(7) FMAX(8) FMAX(9));
  TIME("mode 3: 12 vpshufb + 4 FMA", 16,
       SHUF(0) SHUF(1) SHUF(2) FMA(10) SHUF(3) SHUF(4) SHUF(5) FMA(11) SHUF(6) SHUF(7) SHUF(8) FMA(12) SHUF(9) SHUF(10)
           SHUF(11) FMA(13));
  return 0;
}
