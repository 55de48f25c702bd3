/* The avx2 level's two probe readers, one stream (avx2_read_stream) and
 * the share's halves in lockstep (avx2_read_stream2), timed against each
 * other (bench/NOTES-cpu.md v41): level_avx2.c is included as it is, its
 * kernels stubbed. 1 and 2 threads, each pinned to its CPU and
 * first-touching its share; per rep the best of 5 passes of each, the two
 * alternating; then a check that both fold every 64-bit word.
 *   gcc -O2 -fopenmp -I src/backend-cpu -I include -I . \
 *     bench/cpu-lab/read2-avx2.c -o read2-avx2
 *   ./read2-avx2 [MiB] [reps]      (defaults 1024 6) */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "level_avx2.c"
void qg_nf4_avx2_rows(const qg_cpu_job *j, int64_t a, int64_t b) { (void)j; (void)a; (void)b; }
void qg_q2_avx2_rows_g64(const qg_cpu_job *j, int64_t a, int64_t b) { (void)j; (void)a; (void)b; }
void qg_q2_avx2_rows_g128(const qg_cpu_job *j, int64_t a, int64_t b) { (void)j; (void)a; (void)b; }
double qg_q2_avx2_xfix(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t) { (void)x; (void)res; (void)g; (void)bits; (void)out; (void)t; return 0; }
bool qg_cpu_has_avx2(void) { return true; }
void qg_cpu_xorder_transpose(int a, int b, qg_cpu_xorder *o) { (void)a; (void)b; (void)o; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv) {
  size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) << 20; int reps = argc > 2 ? atoi(argv[2]) : 6;
  unsigned char *buf = aligned_alloc(4096, bytes);
  uint64_t (*rd[2])(const void *, size_t) = {qg_cpu_level_avx2.read_stream, qg_cpu_level_avx2.read_stream2};
  volatile uint64_t sink = 0;
  for (int nt = 1; nt <= 2; nt++) {
    #pragma omp parallel num_threads(nt)
    { cpu_set_t s; CPU_ZERO(&s); CPU_SET(omp_get_thread_num(), &s); sched_setaffinity(0, sizeof s, &s);
      size_t u = bytes / 256, t = omp_get_thread_num(); memset(buf + u * t / nt * 256, 1 + t, (u * (t + 1) / nt - u * t / nt) * 256); }
    int wins = 0; printf("%d thread(s), GB/s best of 5 per rep: one / two streams\n", nt);
    for (int r = 0; r < reps; r++) {
      double best[2] = {0, 0};
      for (int pass = 0; pass < 10; pass++) {
        int v = pass % 2; double t0 = now(); uint64_t tot = 0;
        #pragma omp parallel num_threads(nt) reduction(^ : tot)
        { size_t u = bytes / 256, t = omp_get_thread_num(), u0 = u * t / nt, u1 = u * (t + 1) / nt;
          tot ^= rd[v](buf + u0 * 256, (u1 - u0) * 256); }
        double g = bytes / (now() - t0) / 1e9; sink ^= tot; if (g > best[v]) best[v] = g;
      }
      wins += best[1] > best[0];
      printf("  rep %d: %.1f / %.1f\n", r, best[0], best[1]);
    }
    printf("  two streams faster in %d of %d reps\n", wins, reps);
  }
  /* both fold every 64-bit word: compare with a scalar xor */
  uint64_t x = 0; for (size_t i = 0; i < bytes / 8; i++) x ^= ((uint64_t *)buf)[i];
  for (size_t i = 0; i < 4096; i++) buf[i * 7919 % bytes] ^= (unsigned char)i;
  x = 0; for (size_t i = 0; i < bytes / 8; i++) x ^= ((uint64_t *)buf)[i];
  printf("fold check: one %s, two %s\n", rd[0](buf, bytes) == x ? "ok" : "WRONG", rd[1](buf, bytes) == x ? "ok" : "WRONG");
  return (int)(sink & 0);
}
