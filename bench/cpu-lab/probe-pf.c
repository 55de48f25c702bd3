/* Read-probe variants against the kernels' own access pattern (issue 12,
 * v39): the NF4 kernel streams weights faster than `qgemv bench`'s probe
 * on the Zen 5 VM. The kernels prefetch 4 KiB ahead (prefetch.h) and read
 * 16 interleaved rows; the probe (cpu_backend.c) reads each thread's
 * contiguous share in one sequential stream with 4 chains of full-width
 * loads, best of 5 passes. Does prefetch or more streams read faster?
 *
 *   ./probe-pf [MiB] [reps] [passes]      (defaults 1024 6 5)
 *
 * For 1 and 2 threads (each pinned to its own CPU, as the library binds
 * one thread per core; the buffer first-touched by its reader): every rep
 * times each variant `passes` times and keeps the best (the library's
 * best-of-5), variants alternating within a rep so that noise from other
 * tenants spreads over all of them. The table gives, per variant, each
 * rep's best-of-N in GB/s, then the median and the max over the reps, and
 * in how many reps the variant beat `plain`. Variants:
 *   plain       the library's loop (avx512_read_stream)
 *   pf1k..pf16k plain + prefetcht0 that far ahead, one per 128 bytes
 *               (the kernels: qg_prefetch_ahead, 4 KiB, T0)
 *   nta4k       plain + prefetchnta 4 KiB ahead
 *   s2, s4      the share split into 2 or 4 contiguous parts read in
 *               lockstep (2 or 4 streams per thread, as the kernel's rows)
 *   s4pf4k      s4 + prefetcht0 4 KiB ahead in every stream (the kernel)
 *   nt          vmovntdqa loads
 * AVX-512 only (the machine of the issue); 32-byte loads elsewhere would
 * be probe.c's job. */
#define _GNU_SOURCE
#include <immintrin.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define T __attribute__((target("avx512f,avx512bw,avx2")))

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { PLAIN, PF1K, PF2K, PF4K, PF8K, PF16K, NTA4K, S2, S4, S4PF4K, NT, NVAR };
static const char *const names[] = {"plain", "pf1k", "pf2k", "pf4k", "pf8k", "pf16k",
                                    "nta4k", "s2",   "s4",   "s4pf4k", "nt"};

/* One stream, 256 bytes a step, 4 chains; prefetch `ahead` bytes ahead
 * every 128 bytes (two per step) with hint `hint` (0 none, 1 T0, 2 NTA). */
static T uint64_t one(const uint8_t *p, size_t bytes, size_t ahead, int hint) {
  const __m512i *q = (const __m512i *)p;
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  size_t n = bytes / 64;
  /* _mm_prefetch takes its hint as a constant: one loop per hint */
#define ONE_LOOP(PREFETCH)                                  \
  for (size_t i = 0; i < n; i += 4) {                       \
    PREFETCH;                                               \
    a0 = _mm512_xor_si512(a0, _mm512_load_si512(q + i));     \
    a1 = _mm512_xor_si512(a1, _mm512_load_si512(q + i + 1)); \
    a2 = _mm512_xor_si512(a2, _mm512_load_si512(q + i + 2)); \
    a3 = _mm512_xor_si512(a3, _mm512_load_si512(q + i + 3)); \
  }
#define PF_PAIR(H)                                          \
  (_mm_prefetch((const char *)(q + i) + ahead, H), _mm_prefetch((const char *)(q + i) + ahead + 128, H))
  if (hint == 1)
    ONE_LOOP(PF_PAIR(_MM_HINT_T0))
  else if (hint == 2)
    ONE_LOOP(PF_PAIR(_MM_HINT_NTA))
  else
    ONE_LOOP((void)0)
#undef PF_PAIR
#undef ONE_LOOP
  __m512i a = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
  return (uint64_t)_mm512_reduce_add_epi64(a);
}

static T uint64_t nt(const uint8_t *p, size_t bytes) {
  const __m512i *q = (const __m512i *)p;
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < bytes / 64; i += 4) {
    a0 = _mm512_xor_si512(a0, _mm512_stream_load_si512((void *)(q + i)));
    a1 = _mm512_xor_si512(a1, _mm512_stream_load_si512((void *)(q + i + 1)));
    a2 = _mm512_xor_si512(a2, _mm512_stream_load_si512((void *)(q + i + 2)));
    a3 = _mm512_xor_si512(a3, _mm512_stream_load_si512((void *)(q + i + 3)));
  }
  __m512i a = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
  return (uint64_t)_mm512_reduce_add_epi64(a);
}

/* `s` streams (2 or 4) over [p, p + bytes) split into s parts (bytes a
 * multiple of 256 * s), 128 bytes of each per step; prefetch `ahead` bytes
 * ahead in each stream (0: none). */
static inline __attribute__((always_inline)) T uint64_t streams(const uint8_t *p, size_t bytes, int s,
                                                                  size_t ahead) {
  size_t part = bytes / (size_t)s;
  const uint8_t *r[4] = {p, p + part, p + 2 * part, p + 3 * part};
  __m512i a[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; k++) a[k] = _mm512_setzero_si512();
  for (size_t o = 0; o < part; o += 128) {
#pragma GCC unroll 4
    for (int k = 0; k < s; k++) {
      if (ahead) _mm_prefetch((const char *)r[k] + o + ahead, _MM_HINT_T0);
      a[2 * k] = _mm512_xor_si512(a[2 * k], _mm512_load_si512(r[k] + o));
      a[2 * k + 1] = _mm512_xor_si512(a[2 * k + 1], _mm512_load_si512(r[k] + o + 64));
    }
  }
  __m512i x = a[0];
#pragma GCC unroll 8
  for (int k = 1; k < 8; k++) x = _mm512_xor_si512(x, a[k]);
  return (uint64_t)_mm512_reduce_add_epi64(x);
}

/* constant s and ahead: the accumulators stay in registers */
static T uint64_t s2(const uint8_t *p, size_t bytes) { return streams(p, bytes, 2, 0); }
static T uint64_t s4(const uint8_t *p, size_t bytes) { return streams(p, bytes, 4, 0); }
static T uint64_t s4pf(const uint8_t *p, size_t bytes) { return streams(p, bytes, 4, 4096); }

static uint64_t read_var(const uint8_t *p, size_t bytes, int v) {
  switch (v) {
  case PF1K: return one(p, bytes, 1024, 1);
  case PF2K: return one(p, bytes, 2048, 1);
  case PF4K: return one(p, bytes, 4096, 1);
  case PF8K: return one(p, bytes, 8192, 1);
  case PF16K: return one(p, bytes, 16384, 1);
  case NTA4K: return one(p, bytes, 4096, 2);
  case S2: return s2(p, bytes);
  case S4: return s4(p, bytes);
  case S4PF4K: return s4pf(p, bytes);
  case NT: return nt(p, bytes);
  default: return one(p, bytes, 0, 0);
  }
}

static volatile uint64_t sink;
static const size_t unit = 1024; /* share granularity: 256 bytes x 4 streams */

static void pin(int t) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(t % CPU_SETSIZE, &set);
  sched_setaffinity(0, sizeof set, &set); /* failure: unpinned, same sums */
}

static double pass(const uint8_t *buf, size_t bytes, int threads, int v) {
  double t0 = now();
  uint64_t total = 0;
#pragma omp parallel num_threads(threads) reduction(^ : total)
  {
    int t = omp_get_thread_num(), nt_ = omp_get_num_threads();
    size_t u = bytes / unit, u0 = u * (size_t)t / (size_t)nt_, u1 = u * (size_t)(t + 1) / (size_t)nt_;
    total ^= read_var(buf + u0 * unit, (u1 - u0) * unit, v);
  }
  double dt = now() - t0;
  sink ^= total;
  return (double)bytes / dt / 1e9;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 1024;
  int reps = argc > 2 ? atoi(argv[2]) : 6, passes = argc > 3 ? atoi(argv[3]) : 5;
  if (reps < 1 || reps > 32 || passes < 1) return 2;
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw")) {
    fprintf(stderr, "probe-pf: AVX-512 only\n");
    return 77;
  }
  size_t bytes = (mib << 20) / unit * unit;
  double t_start = now();
  for (int threads = 1; threads <= 2; threads++) {
    uint8_t *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) return 1;
    madvise(buf, bytes, MADV_HUGEPAGE);
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num(), nt_ = omp_get_num_threads();
      pin(t);
      size_t u = bytes / unit, u0 = u * (size_t)t / (size_t)nt_, u1 = u * (size_t)(t + 1) / (size_t)nt_;
      memset(buf + u0 * unit, t + 1, (u1 - u0) * unit); /* first touch by the reader */
    }
    double g[NVAR][32];
    for (int r = 0; r < reps; r++)
      for (int v = 0; v < NVAR; v++) {
        double best = 0;
        for (int k = 0; k < passes; k++) {
          double x = pass(buf, bytes, threads, v);
          if (x > best) best = x;
        }
        g[v][r] = best;
      }
    printf("threads %d, buffer %zu MiB, %d reps of best-of-%d (GB/s per rep | median max | reps > plain)\n",
           threads, mib, reps, passes);
    for (int v = 0; v < NVAR; v++) {
      int wins = 0;
      printf("  %-7s", names[v]);
      for (int r = 0; r < reps; r++) {
        printf(" %5.1f", g[v][r]);
        wins += g[v][r] > g[PLAIN][r];
      }
      double s[32];
      memcpy(s, g[v], sizeof(double) * (size_t)reps);
      qsort(s, (size_t)reps, sizeof(double), cmpd);
      printf(" | %5.1f %5.1f | %d/%d\n", reps % 2 ? s[reps / 2] : 0.5 * (s[reps / 2 - 1] + s[reps / 2]),
             s[reps - 1], v == PLAIN ? 0 : wins, reps);
    }
    munmap(buf, bytes);
  }
  printf("(%.1f s)\n", now() - t_start);
  return 0;
}
