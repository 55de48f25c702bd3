/* Host time of the LUT layout's repack (src/backend-cuda/lut_repack.c) for
 * a 28672 x 8192 NF4 weight, codes and scales: what an upload spends
 * before its copies (bench/NOTES.md v39, the Zen 5 VM idle: 0.218 s byte
 * by byte as 66094c7 had it, 0.098 s with a lane's 4 bytes as one run).
 * From the project root:
 *   cc -O2 -Isrc/backend-cuda -Iinclude bench/lab/lut-repack-time.c \
 *     src/backend-cuda/lut_repack.c -o /tmp/lut-repack-time && /tmp/lut-repack-time
 * (the earlier form: git show 66094c7:src/backend-cuda/lut_repack.c > F, and
 * F in place of lut_repack.c) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lut_layout.h"

int main(void) {
  const int64_t n = 28672, k = 8192;
  qgemv_weight_desc d = {.format = QGEMV_NF4, .n = n, .k = k, .group = 64};
  uint8_t *data = calloc((size_t)(n * k / 2), 1), *dst = malloc((size_t)(n * k / 2));
  float *scales = calloc((size_t)(n * k / 64), sizeof(float));
  if (!data || !dst || !scales) return 1;
  d.data = data;
  d.scales = scales;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  qgc_lut_repack_codes(&d, 0, k / qgc_lut_chunk_k(QGEMV_NF4), dst);
  qgc_lut_repack_scales(&d, 0, k / qgc_lut_chunk_k(QGEMV_NF4), dst);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.3f s for %lld MB of codes and %lld MB of scales\n",
         (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec), (long long)(n * k / 2 >> 20),
         (long long)(n * k / 16 >> 20));
  free(data);
  free(dst);
  free(scales);
  return 0;
}
