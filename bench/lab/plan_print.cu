/* Prints the CUDA backend's plan (matvec_plan.h) for the issue-13 shapes on
 * an H200's facts (132 SMs, 227 KB of shared memory per block): kernel
 * mode, column groups, tiles per warp, B per CTA, k-split, row groups,
 * phases, rows per launch, grid, block, shared memory and units. Host
 * only: what a change to the plan picks, before any device run.
 *   cc -std=c11 -c src/backend-cuda/plan_tune.c -o /tmp/plan_tune.o
 *   nvcc -std=c++17 -Isrc -Isrc/core -Iinclude -IBUILD -x cu -c \
 *     bench/lab/plan_print.cu -o /tmp/plan_print.o
 *   nvcc -std=c++17 -Isrc -Isrc/core -Iinclude -IBUILD -x cu -c \
 *     src/backend-cuda/repack.c -o /tmp/plan_repack.o
 *   nvcc /tmp/plan_print.o /tmp/plan_repack.o /tmp/plan_tune.o -o /tmp/plan_print
 * (BUILD: a configured build tree, for config.h; add -DQGC_EXP_...=N to
 * see a switch's plan). QGEMV_CUDA_PLAN is read as the library reads it,
 * so an override's geometry prints too. PLAN_PRINT_GB10=1 takes GB10's
 * facts instead (48 SMs, 99 KB per block, 100 KB per SM); PLAN_PRINT_SMS=N
 * that many SMs (the tests' small devices); PLAN_PRINT_SHAPE=NxK that
 * shape only. */
#include <stdio.h>
#include <stdlib.h>

#include "backend-cuda/matvec_plan.h"

int main() {
  qgc_device_facts h200 = {132, 232448, 233472, true, {}};
  const char *gb10 = getenv("PLAN_PRINT_GB10");
  if (gb10 && *gb10 == '1') h200 = {48, 101376, 102400, true, {}};
  char err[256];
  if (!qgc_plan_tune_parse(getenv("QGEMV_CUDA_PLAN"), &h200.tune, err, sizeof err)) {
    fprintf(stderr, "plan_print: QGEMV_CUDA_PLAN: %s\n", err);
    return 2;
  }
  static const struct {
    qg_layout_id id;
    qgemv_format f;
    int group;
    const char *name;
  } fmts[] = {{QG_LAYOUT_NF4, QGEMV_NF4, 64, "nf4"},
              {QG_LAYOUT_Q2_G64, QGEMV_Q2_0, 64, "q2_0g64"},
              {QG_LAYOUT_Q2_G128, QGEMV_Q2_0, 128, "q2_0"}};
  const char *sms = getenv("PLAN_PRINT_SMS"), *one = getenv("PLAN_PRINT_SHAPE");
  if (sms && atoi(sms) > 0) h200.sms = atoi(sms);
  long shapes[][2] = {{28672, 8192}, {8192, 28672}, {14336, 4096}, {4096, 14336}, {4096, 4096}, {1024, 4096}};
  int nshapes = 6;
  if (one && sscanf(one, "%ldx%ld", &shapes[0][0], &shapes[0][1]) == 2) nshapes = 1;
  for (int si = 0; si < nshapes; si++)
    for (const auto &f : fmts)
      for (qgemv_dtype x : {QGEMV_F32, QGEMV_BF16})
        for (int m : {1, 8, 16}) {
          const long *s = shapes[si];
          qgemv_weight_desc d = {};
          d.format = f.f, d.n = s[0], d.k = s[1], d.group = f.group;
          qgc_layout L = qgc_layout();
          qgc_layout_shape(&L, &d, f.id);
          qg_matvec_args a = {};
          a.layout_id = f.id, a.n = s[0], a.k = s[1], a.m = m, a.x_dtype = x, a.y_dtype = QGEMV_F32;
          const qgc_plan pl = qgc_make_plan(&L, &a, h200);
          printf("%5ldx%-5ld %-7s %-4s m=%-2d mode=%d ng=%d t=%d bs=%d ks=%d G=%d phases=%d rows=%d launches=%d "
                 "grid=%u block=%u smem=%zu units=%d\n",
                 s[0], s[1], f.name, x == QGEMV_F32 ? "f32" : "bf16", m, pl.kc.xm, pl.kc.ng, pl.kc.t, pl.kc.bs, pl.KS,
                 pl.G, pl.phases, pl.rows, (int)((m + pl.rows - 1) / pl.rows), pl.kc.grid, pl.kc.block, pl.kc.smem,
                 pl.p.units);
        }
  return 0;
}
