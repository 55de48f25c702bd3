/* Streaming-read probe variants: does qgemv's read probe (cpu_backend.c:
 * each thread reads its contiguous share of a 1 GiB buffer with 4 chains
 * of full-width loads, best of 5 passes) read low?
 *
 *   ./probe [threads] [MiB] [rounds]
 *
 * Every variant reads the same bytes; the variants alternate within each
 * round so that load from other processes spreads over all of them; the
 * table gives the median and the best GB/s of the rounds. Variants:
 *   plain     the library's loop: contiguous share per thread, 4 chains
 *   chains8   8 chains instead of 4 (more loads in flight per thread)
 *   nt        vmovntdqa (non-temporal hint; on write-back memory the CPU
 *             may treat it as a plain load)
 *   pf        plain + prefetcht0 1 KiB ahead
 *   pfnta     plain + prefetchnta 1 KiB ahead
 *   inter     threads take 64 KiB chunks in turn (interleaved) instead of
 *             a contiguous share
 *   small4k   the buffer without transparent huge pages (4 KiB pages)
 *   sgemv     (built with -DPROBE_OPENBLAS, `make probe-blas`) OpenBLAS's
 *             sgemv over the same buffer as f32 [N x 8192]: a dense
 *             library's read, which `qgemv bench` reports beside the probe
 * The buffer is first-touched by its reader (as weights are at upload).
 * Without AVX-512 the same loops run with 32-byte AVX2 loads (the
 * library's avx2 probe loop). */
#define _GNU_SOURCE
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#ifdef PROBE_OPENBLAS
#include <cblas.h>
#endif

#define T __attribute__((target("avx512f,avx512bw,avx2")))
#define T2 __attribute__((target("avx2")))

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { PLAIN, CHAINS8, NT, PF, PFNTA, NVAR };
static const char *const names[] = {"plain", "chains8", "nt", "pf", "pfnta"};

static T uint64_t read_range(const uint8_t *p, size_t bytes, int v) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  const __m512i *q = (const __m512i *)p;
  size_t n = bytes / 64;
  switch (v) {
  case CHAINS8:
    for (size_t i = 0; i < n; i += 8) {
      a0 = _mm512_xor_si512(a0, _mm512_load_si512(q + i));
      a1 = _mm512_xor_si512(a1, _mm512_load_si512(q + i + 1));
      a2 = _mm512_xor_si512(a2, _mm512_load_si512(q + i + 2));
      a3 = _mm512_xor_si512(a3, _mm512_load_si512(q + i + 3));
      a4 = _mm512_xor_si512(a4, _mm512_load_si512(q + i + 4));
      a5 = _mm512_xor_si512(a5, _mm512_load_si512(q + i + 5));
      a6 = _mm512_xor_si512(a6, _mm512_load_si512(q + i + 6));
      a7 = _mm512_xor_si512(a7, _mm512_load_si512(q + i + 7));
    }
    break;
  case NT:
    for (size_t i = 0; i < n; i += 4) {
      a0 = _mm512_xor_si512(a0, _mm512_stream_load_si512((void *)(q + i)));
      a1 = _mm512_xor_si512(a1, _mm512_stream_load_si512((void *)(q + i + 1)));
      a2 = _mm512_xor_si512(a2, _mm512_stream_load_si512((void *)(q + i + 2)));
      a3 = _mm512_xor_si512(a3, _mm512_stream_load_si512((void *)(q + i + 3)));
    }
    break;
  default:
    for (size_t i = 0; i < n; i += 4) {
      if (v == PF) _mm_prefetch((const char *)(q + i + 16), _MM_HINT_T0);
      if (v == PFNTA) _mm_prefetch((const char *)(q + i + 16), _MM_HINT_NTA);
      a0 = _mm512_xor_si512(a0, _mm512_load_si512(q + i));
      a1 = _mm512_xor_si512(a1, _mm512_load_si512(q + i + 1));
      a2 = _mm512_xor_si512(a2, _mm512_load_si512(q + i + 2));
      a3 = _mm512_xor_si512(a3, _mm512_load_si512(q + i + 3));
    }
  }
  __m512i a = _mm512_xor_si512(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3)),
                               _mm512_xor_si512(_mm512_xor_si512(a4, a5), _mm512_xor_si512(a6, a7)));
  return (uint64_t)_mm512_reduce_add_epi64(a);
}

/* The same variants with 32-byte loads, for CPUs without AVX-512. */
static T2 uint64_t read_range_avx2(const uint8_t *p, size_t bytes, int v) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  const __m256i *q = (const __m256i *)p;
  size_t n = bytes / 32;
  switch (v) {
  case CHAINS8:
    for (size_t i = 0; i < n; i += 8) {
      a0 = _mm256_xor_si256(a0, _mm256_load_si256(q + i));
      a1 = _mm256_xor_si256(a1, _mm256_load_si256(q + i + 1));
      a2 = _mm256_xor_si256(a2, _mm256_load_si256(q + i + 2));
      a3 = _mm256_xor_si256(a3, _mm256_load_si256(q + i + 3));
      a4 = _mm256_xor_si256(a4, _mm256_load_si256(q + i + 4));
      a5 = _mm256_xor_si256(a5, _mm256_load_si256(q + i + 5));
      a6 = _mm256_xor_si256(a6, _mm256_load_si256(q + i + 6));
      a7 = _mm256_xor_si256(a7, _mm256_load_si256(q + i + 7));
    }
    break;
  case NT:
    for (size_t i = 0; i < n; i += 4) {
      a0 = _mm256_xor_si256(a0, _mm256_stream_load_si256((void *)(q + i)));
      a1 = _mm256_xor_si256(a1, _mm256_stream_load_si256((void *)(q + i + 1)));
      a2 = _mm256_xor_si256(a2, _mm256_stream_load_si256((void *)(q + i + 2)));
      a3 = _mm256_xor_si256(a3, _mm256_stream_load_si256((void *)(q + i + 3)));
    }
    break;
  default:
    for (size_t i = 0; i < n; i += 4) {
      /* 1 KiB ahead, once per 128 bytes as the AVX-512 loop does per 256 */
      if (v == PF && (i & 4) == 0) _mm_prefetch((const char *)(q + i + 32), _MM_HINT_T0);
      if (v == PFNTA && (i & 4) == 0) _mm_prefetch((const char *)(q + i + 32), _MM_HINT_NTA);
      a0 = _mm256_xor_si256(a0, _mm256_load_si256(q + i));
      a1 = _mm256_xor_si256(a1, _mm256_load_si256(q + i + 1));
      a2 = _mm256_xor_si256(a2, _mm256_load_si256(q + i + 2));
      a3 = _mm256_xor_si256(a3, _mm256_load_si256(q + i + 3));
    }
  }
  __m256i a = _mm256_xor_si256(_mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3)),
                               _mm256_xor_si256(_mm256_xor_si256(a4, a5), _mm256_xor_si256(a6, a7)));
  return (uint64_t)_mm256_extract_epi64(a, 0) ^ (uint64_t)_mm256_extract_epi64(a, 3);
}

static int wide; /* AVX-512 present */
static uint64_t read_any(const uint8_t *p, size_t bytes, int v) {
  return wide ? read_range(p, bytes, v) : read_range_avx2(p, bytes, v);
}

static volatile uint64_t sink;

/* One timed pass over buf: contiguous shares, or 64 KiB chunks in turn. */
static double pass(const uint8_t *buf, size_t bytes, int threads, int v, int interleaved) {
  const size_t chunk = 64 << 10;
  double t0 = now();
  uint64_t total = 0;
#pragma omp parallel num_threads(threads) reduction(^ : total)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    if (interleaved) {
      for (size_t c = (size_t)t; c < bytes / chunk; c += (size_t)nt) total ^= read_any(buf + c * chunk, chunk, v);
    } else {
      size_t u = bytes / 512, u0 = u * (size_t)t / (size_t)nt, u1 = u * (size_t)(t + 1) / (size_t)nt;
      total ^= read_any(buf + u0 * 512, (u1 - u0) * 512, v);
    }
  }
  double dt = now() - t0;
  sink ^= total;
  return (double)bytes / dt / 1e9;
}

static uint8_t *make(size_t bytes, int threads, int huge, int interleaved) {
  uint8_t *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  const size_t chunk = 64 << 10;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    if (interleaved) {
      for (size_t c = (size_t)t; c < bytes / chunk; c += (size_t)nt) memset(p + c * chunk, t + 1, chunk);
    } else {
      size_t u = bytes / 512, u0 = u * (size_t)t / (size_t)nt, u1 = u * (size_t)(t + 1) / (size_t)nt;
      memset(p + u0 * 512, t + 1, (u1 - u0) * 512);
    }
  }
  return p;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 1024;
  int rounds = argc > 3 ? atoi(argv[3]) : 9;
  size_t bytes = mib << 20;
  wide = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  uint8_t *huge = make(bytes, threads, 1, 0), *inter = make(bytes, threads, 1, 1), *small = make(bytes, threads, 0, 0);
  if (!huge || !inter || !small) return 1;
#ifdef PROBE_OPENBLAS
  enum { NROW = NVAR + 3 };
  const int kk = 8192, nn = (int)(bytes / sizeof(float) / (size_t)kk);
  float *x = malloc(sizeof(float) * (size_t)kk), *y = malloc(sizeof(float) * (size_t)nn);
  if (!x || !y) return 1;
  for (int i = 0; i < kk; i++) x[i] = 1.0f / (float)(i + 1);
  openblas_set_num_threads(threads);
#else
  enum { NROW = NVAR + 2 };
#endif
  double gbs[NROW][64];
  const char *row_names[NROW];
  for (int r = 0; r < rounds && r < 64; r++) {
    for (int v = 0; v < NVAR; v++) {
      row_names[v] = names[v];
      gbs[v][r] = pass(huge, bytes, threads, v, 0);
    }
    row_names[NVAR] = "inter";
    gbs[NVAR][r] = pass(inter, bytes, threads, PLAIN, 1);
    row_names[NVAR + 1] = "small4k";
    gbs[NVAR + 1][r] = pass(small, bytes, threads, PLAIN, 0);
#ifdef PROBE_OPENBLAS
    row_names[NVAR + 2] = "sgemv";
    double t0 = now();
    cblas_sgemv(CblasRowMajor, CblasNoTrans, nn, kk, 1.0f, (const float *)huge, kk, x, 1, 0.0f, y, 1);
    gbs[NVAR + 2][r] = (double)nn * kk * sizeof(float) / (now() - t0) / 1e9;
    sink ^= (uint64_t)(y[0] != 0.0f);
#endif
  }
  printf("threads %d, buffer %zu MiB, %d rounds, %s loads (GB/s: median, best)\n", threads, mib, rounds,
         wide ? "64-byte" : "32-byte");
  for (int v = 0; v < NROW; v++) {
    qsort(gbs[v], (size_t)rounds, sizeof(double), cmpd);
    printf("  %-8s %6.1f %6.1f\n", row_names[v], gbs[v][rounds / 2], gbs[v][rounds - 1]);
  }
  return 0;
}
