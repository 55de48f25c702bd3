/* Throughput on this core of vpshufb (mode 0), byte unpacks (1), FMAs (2)
 * and 6 vpshufb with 2 FMAs (3), 8 independent chains each, best of 5 x
 * 2e7 iterations, TSC ticks per instruction: the floor of the avx2 NF4
 * decode, 12 shuffles per 32 weights (bench/NOTES-cpu.md v27).
 *   make -C bench/cpu-lab avx2-shuffle-rate && bench/cpu-lab/avx2-shuffle-rate */
#include <immintrin.h>
#include <x86intrin.h>
#include <stdio.h>
#define T __attribute__((target("avx2,fma")))
T int main(void) {
  __m256i a0=_mm256_set1_epi8(1),a1=_mm256_set1_epi8(2),a2=_mm256_set1_epi8(3),a3=_mm256_set1_epi8(4),a4=a0,a5=a1,a6=a2,a7=a3, t=_mm256_set1_epi8(5);
  __m256 f0=_mm256_set1_ps(1),f1=f0,f2=f0,f3=f0,f4=f0,f5=f0,f6=f0,f7=f0,m=_mm256_set1_ps(0.999f);
  for (int mode=0; mode<4; mode++) { double best=1e30; for (int r=0;r<5;r++){
    unsigned long long t0=__rdtsc();
    for (long i=0;i<20000000;i++){
      if (mode==0) { /* 8 independent pshufb */
      a0=_mm256_shuffle_epi8(t,a0);a1=_mm256_shuffle_epi8(t,a1);a2=_mm256_shuffle_epi8(t,a2);a3=_mm256_shuffle_epi8(t,a3);
      a4=_mm256_shuffle_epi8(t,a4);a5=_mm256_shuffle_epi8(t,a5);a6=_mm256_shuffle_epi8(t,a6);a7=_mm256_shuffle_epi8(t,a7);
      } else if (mode==1) { /* 8 independent unpack */
      a0=_mm256_unpacklo_epi8(t,a0);a1=_mm256_unpacklo_epi8(t,a1);a2=_mm256_unpacklo_epi8(t,a2);a3=_mm256_unpacklo_epi8(t,a3);
      a4=_mm256_unpackhi_epi8(t,a4);a5=_mm256_unpackhi_epi8(t,a5);a6=_mm256_unpackhi_epi8(t,a6);a7=_mm256_unpackhi_epi8(t,a7);
      } else if (mode==2) { /* 8 FMA, 8 chains */
      f0=_mm256_fmadd_ps(f0,m,m);f1=_mm256_fmadd_ps(f1,m,m);f2=_mm256_fmadd_ps(f2,m,m);f3=_mm256_fmadd_ps(f3,m,m);
      f4=_mm256_fmadd_ps(f4,m,m);f5=_mm256_fmadd_ps(f5,m,m);f6=_mm256_fmadd_ps(f6,m,m);f7=_mm256_fmadd_ps(f7,m,m);
      } else { /* 6 pshufb + 2 fma: mixed */
      a0=_mm256_shuffle_epi8(t,a0);a1=_mm256_shuffle_epi8(t,a1);a2=_mm256_shuffle_epi8(t,a2);a3=_mm256_shuffle_epi8(t,a3);
      a4=_mm256_shuffle_epi8(t,a4);a5=_mm256_shuffle_epi8(t,a5);f0=_mm256_fmadd_ps(f0,m,m);f1=_mm256_fmadd_ps(f1,m,m);
      }

    }
    double d=(double)(__rdtsc()-t0)/20000000.0/8.0; if(d<best)best=d;}
    printf("mode %d: %.3f ticks per op\n", mode, best);
  }
  int s=_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(a0,a1),_mm256_or_si256(_mm256_or_si256(a2,a3),_mm256_or_si256(_mm256_or_si256(a4,a5),_mm256_or_si256(a6,a7)))));
  float fs[8]; _mm256_storeu_ps(fs,_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(f0,f1),_mm256_add_ps(f2,f3)),_mm256_add_ps(_mm256_add_ps(f4,f5),_mm256_add_ps(f6,f7))));
  return (s ^ (int)fs[0]) == 12345;
}
