/* TSC ticks per core cycle from a chain of dependent adds (no PMU in the
 * VM): eight per iteration, best of 5 x 2e7 iterations. With four, the
 * loop's own overhead showed on Zen 1 (0.88-0.92 ticks per cycle against
 * 0.80, bench/NOTES-cpu.md v34). Shared by avx2-int-rate.c and
 * avx2-shuffle-rate.c. */
#ifndef CPU_LAB_CLOCK_CHAIN_H
#define CPU_LAB_CLOCK_CHAIN_H
#include <x86intrin.h>

static double ticks_per_cycle(void) {
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    long x = 0;
    const unsigned long long t0 = __rdtsc();
    for (long i = 0; i < 20000000L; i++)
      __asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0"
                       : "+r"(x));
    const double d = (double)(__rdtsc() - t0) / 20000000.0 / 8;
    if (d < best) best = d;
  }
  return best;
}
#endif
