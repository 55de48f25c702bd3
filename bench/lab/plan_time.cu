/* The host's time for one matvec plan (matvec_plan.h, made on every call)
 * at a few shapes, NF4 bf16 x, m = 1 and 8, on an H200's facts; shapes
 * where qgc_wave_fit applies make the plan two or three times. Host only.
 *   cc -std=c11 -c src/backend-cuda/plan_tune.c -o /tmp/plan_tune.o -Isrc -Isrc/core -Iinclude -IBUILD
 *   nvcc -O2 -std=c++17 -Isrc -Isrc/core -Iinclude -IBUILD -x cu -c \
 *     bench/lab/plan_time.cu -o /tmp/plan_time.o
 *   nvcc -std=c++17 -Isrc -Isrc/core -Iinclude -IBUILD -x cu -c \
 *     src/backend-cuda/repack.c -o /tmp/plan_repack.o
 *   nvcc /tmp/plan_time.o /tmp/plan_repack.o /tmp/plan_tune.o -o /tmp/plan_time
 * (BUILD: a configured build tree, for config.h.) */
#include <stdio.h>
#include <time.h>

#include "backend-cuda/matvec_plan.h"

int main() {
  const qgc_device_facts h200 = {132, 232448, 233472, true, {}};
  const long shapes[][2] = {{28672, 8192}, {14336, 4096}, {11008, 4096}, {18944, 3584}, {37888, 3584}, {4096, 4096}};
  for (const auto &s : shapes)
    for (int m : {1, 8}) {
      qgemv_weight_desc d = {};
      d.format = QGEMV_NF4, d.n = s[0], d.k = s[1], d.group = 64;
      qgc_layout L = qgc_layout();
      qgc_layout_shape(&L, &d, QG_LAYOUT_NF4);
      qg_matvec_args a = {};
      a.layout_id = QG_LAYOUT_NF4, a.n = s[0], a.k = s[1], a.m = m, a.x_dtype = QGEMV_BF16, a.y_dtype = QGEMV_F32;
      const int N = 200000;
      unsigned sink = 0;
      timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      for (int i = 0; i < N; i++) sink += qgc_make_plan(&L, &a, h200).kc.grid;
      clock_gettime(CLOCK_MONOTONIC, &t1);
      const double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
      printf("%5ldx%-5ld m=%d: %.3f us per plan (grid sum %u)\n", s[0], s[1], m, ns / N / 1e3, sink);
    }
  return 0;
}
