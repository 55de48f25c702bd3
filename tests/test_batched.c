/*
 * Bit-exactness invariants of the CPU backend (DESIGN.md s.5): row r of a
 * batched call equals an m = 1 call on that row; a call repeated gives the
 * same bits; any thread count gives the same bits.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "testutil.h"

/* Quiet checks for loops (ck_assert marks every pass through a pipe). */
/* 6: a pass of 6 rows where a kernel takes 8 at a time (nf4_avx2.c); the
 * best level only (the ref level, sampled, is most of the suite's time). */
static const int64_t MS[] = {1, 3, 6, 8, 17, 33};
enum { NMS = sizeof MS / sizeof MS[0], MMAX = 33 };


/* Opens "cpu" with QGEMV_CPU_ISA and QGEMV_NUM_THREADS as given (NULL:
 * unset); each test runs in its own forked process, so the setenv stays
 * there. */
static qgemv_ctx *open_cpu(const char *isa, const char *threads) {
  if (isa)
    setenv("QGEMV_CPU_ISA", isa, 1);
  else
    unsetenv("QGEMV_CPU_ISA");
  if (threads)
    setenv("QGEMV_NUM_THREADS", threads, 1);
  else
    unsetenv("QGEMV_NUM_THREADS");
  qgemv_ctx *ctx = NULL;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  return ctx;
}

/* Everything one combination needs, host side. */
typedef struct problem {
  tu_weight w;
  qgemv_dtype xt, yt, gt;
  int norm; /* 0 none, 1 f32 gamma, 2 bf16 gamma */
  void *x;  /* [MMAX, k] of xt */
  void *gamma;
} problem;

static void problem_make(rng *r, int f, int64_t n, int64_t k, int combo, problem *p) {
  k = tu_whole_blocks(f, k);
  tu_weight_make(r, (dist_kind)(combo % DIST_COUNT), tu_format(f).format, tu_format(f).group, n, k, &p->w);
  p->xt = (qgemv_dtype)(combo & 1);
  p->yt = (qgemv_dtype)((combo >> 1) & 1);
  p->norm = (combo >> 2) % 3;
  p->gt = p->norm == 2 ? QGEMV_BF16 : QGEMV_F32;
  float *xf = malloc((size_t)(MMAX * k) * sizeof(float)), *gf = malloc((size_t)k * sizeof(float));
  ck_assert(xf && gf);
  fill_random(r, (dist_kind)((combo + 1) % DIST_COUNT), xf, (size_t)(MMAX * k));
  fill_random(r, DIST_NORMAL, gf, (size_t)k);
  p->x = tu_convert(xf, (size_t)(MMAX * k), p->xt);
  p->gamma = p->norm ? tu_convert(gf, (size_t)k, p->gt) : NULL;
  free(xf);
  free(gf);
}

static void problem_free(problem *p) {
  tu_weight_free(&p->w);
  free(p->x);
  free(p->gamma);
}

/* A weight and gamma resident on one context. */
typedef struct resident {
  qgemv_weight *w;
  qgemv_tensor *g;
} resident;

static resident upload(qgemv_ctx *ctx, const problem *p) {
  resident d = {NULL, NULL};
  EXPECT_OK(qgemv_weight_upload(ctx, &p->w.desc, &d.w));
  if (p->norm) {
    EXPECT_OK(qgemv_tensor_new(ctx, p->gt, 1, p->w.desc.k, &d.g));
    EXPECT_OK(qgemv_tensor_write(d.g, p->gamma, (size_t)p->w.desc.k * tu_dtype_size(p->gt)));
  }
  return d;
}

static void resident_free(resident *d) {
  qgemv_weight_free(d->w);
  qgemv_tensor_free(d->g);
}

/* y = matvec of activation rows [row0, row0 + m) into a fresh poisoned,
 * guarded buffer, checked fully written (no NaN: the inputs are finite)
 * and the guard intact. The caller frees the result. */
static tu_guarded run(qgemv_ctx *ctx, const problem *p, const resident *d, int64_t row0, int64_t m) {
  int64_t n = p->w.desc.n, k = p->w.desc.k;
  size_t xs = tu_dtype_size(p->xt), ys = tu_dtype_size(p->yt);
  qgemv_tensor *x, *y;
  EXPECT_OK(qgemv_tensor_new(ctx, p->xt, m, k, &x));
  EXPECT_OK(qgemv_tensor_write(x, (const char *)p->x + (size_t)(row0 * k) * xs, (size_t)(m * k) * xs));
  tu_guarded out = tu_guarded_new((size_t)(m * n) * ys);
  EXPECT_OK(qgemv_tensor_wrap(ctx, p->yt, m, n, out.mem, &y));
  qgemv_rmsnorm norm = {.gamma = d->g, .eps = 1e-5f};
  EXPECT_OK(qgemv_matvec(ctx, d->w, x, y, p->norm ? &norm : NULL));
  EXPECT_OK(qgemv_sync(ctx));
  for (size_t i = 0; i < (size_t)(m * n); i++)
    EXPECT(!isnan(tu_elem(p->yt, out.mem, i)), "y element %zu (m=%lld) not written or NaN", i, (long long)m);
  EXPECT(tu_guard_intact(&out), "the guard after y (m=%lld) was overwritten", (long long)m);
  qgemv_tensor_free(x);
  qgemv_tensor_free(y);
  return out;
}

/* The step through the 12 combinations: every third under QGEMV_TEST_QUICK
 * (make check-valgrind, where this suite took 4.5 of its 9 minutes):
 * 0, 3, 6, 9 still take each x dtype, y dtype and norm. */
static int combo_step(int step) { return tu_quick() ? 3 * step : step; }

/* Rows of a batch compared with m = 1 calls: all of them, or (sampled) the
 * first two, the last and those around 16-row tiles. */
static bool row_checked(int64_t row, int64_t m, bool sampled) {
  if (!sampled) return true;
  return row < 2 || row == m - 1 || row == 7 || (row >= 15 && row <= 17);
}

/* Every xt x yt x norm combination for one format and level; each m. The
 * slow ref level compares sampled rows. */
static void check_batch_rows(const char *isa, int f) {
  qgemv_ctx *ctx = open_cpu(isa, NULL);
  bool sampled = isa != NULL;
  rng r = {.s = 0xba7c + (uint64_t)f};
  for (int combo = 0; combo < 12; combo += combo_step(1)) {
    problem p;
    problem_make(&r, f, 67, 384, combo, &p);
    resident d = upload(ctx, &p);
    size_t row_bytes = (size_t)p.w.desc.n * tu_dtype_size(p.yt);
    /* m = 1 result of each activation row, made when first needed */
    tu_guarded single[MMAX] = {{0}};
    for (int mi = 0; mi < NMS; mi++) {
      int64_t m = MS[mi], row0 = mi % 2 ? MMAX - m : 0; /* batches from either end */
      if (sampled && m == 6) continue;
      tu_guarded batch = run(ctx, &p, &d, row0, m);
      for (int64_t row = 0; row < m; row++) {
        if (!row_checked(row, m, sampled)) continue;
        if (single[row0 + row].mem == NULL) single[row0 + row] = run(ctx, &p, &d, row0 + row, 1);
        EXPECT(memcmp(batch.mem + (size_t)row * row_bytes, single[row0 + row].mem, row_bytes) == 0,
               "%s level, format %d, x %d y %d norm %d: row %lld of an m=%lld batch differs from m=1",
               isa ? isa : "best", f, p.xt, p.yt, p.norm, (long long)row, (long long)m);
      }
      tu_guarded again = run(ctx, &p, &d, row0, m);
      EXPECT(memcmp(batch.mem, again.mem, batch.bytes) == 0, "format %d combo %d m=%lld: a repeat differs", f,
             combo, (long long)m);
      tu_guarded_free(&batch);
      tu_guarded_free(&again);
    }
    for (int64_t row = 0; row < MMAX; row++) tu_guarded_free(&single[row]);
    resident_free(&d);
    problem_free(&p);
  }
  qgemv_close(ctx);
}

/* Loop index: format (the library's list). */
START_TEST(batch_rows_match_single_best) { check_batch_rows(NULL, _i); }
END_TEST

START_TEST(batch_rows_match_single_ref) { check_batch_rows("ref", _i); }
END_TEST

/* The same problems on contexts with 1, 2, 3 and 7 threads (7 > n for the
 * small shape: some threads get no rows) give identical bits. */
START_TEST(thread_count_does_not_change_bits) {
  static const char *const threads[] = {"1", "2", "3", "7"};
  enum { NT = 4 };
  const char *isa = _i ? "ref" : NULL;
  qgemv_ctx *ctx[NT];
  for (int t = 0; t < NT; t++) {
    ctx[t] = open_cpu(isa, threads[t]);
    qgemv_device_info info;
    EXPECT_OK(qgemv_ctx_info(ctx[t], &info));
    ck_assert_int_eq(info.threads, atoi(threads[t]));
  }
  rng r = {.s = 0x7ead};
  static const int64_t shapes[][2] = {{67, 384}, {5, 256}, {130, 1152}};
  for (int f = 0; f < qgemv_format_count(); f++)
    for (int s = 0; s < 3; s++)
      for (int combo = 0; combo < 12; combo += combo_step(1 + s)) {
        problem p;
        problem_make(&r, f, shapes[s][0], shapes[s][1], combo, &p);
        resident d[NT];
        tu_guarded y[NT];
        for (int t = 0; t < NT; t++) {
          d[t] = upload(ctx[t], &p);
          y[t] = run(ctx[t], &p, &d[t], 0, combo % 2 ? 17 : 1);
        }
        for (int t = 1; t < NT; t++)
          EXPECT(memcmp(y[0].mem, y[t].mem, y[0].bytes) == 0,
                 "format %d n=%lld combo %d: %s threads differ from 1 thread", f, (long long)shapes[s][0], combo,
                 threads[t]);
        for (int t = 0; t < NT; t++) {
          resident_free(&d[t]);
          tu_guarded_free(&y[t]);
        }
        problem_free(&p);
      }
  for (int t = 0; t < NT; t++) qgemv_close(ctx[t]);
}
END_TEST

/* bf16 outputs are the round-to-nearest-even of the f32 result: the same
 * call with a bf16 y gives exactly qgemv_f32_to_bf16 of the f32 y. */
static void check_bf16_is_rounded_f32(const char *isa) {
  qgemv_ctx *ctx = open_cpu(isa, NULL);
  rng r = {.s = 0xbf16};
  for (int f = 0; f < qgemv_format_count(); f++)
    for (int combo = 0; combo < 12; combo++) {
      if ((combo >> 1) & 1) continue; /* the y dtype bit: made f32, then bf16, below */
      problem p;
      problem_make(&r, f, 67, 384, combo, &p);
      resident d = upload(ctx, &p);
      int64_t m = 1 + combo % 5, count = m * p.w.desc.n;
      tu_guarded y32 = run(ctx, &p, &d, 0, m);
      p.yt = QGEMV_BF16;
      tu_guarded y16 = run(ctx, &p, &d, 0, m);
      for (int64_t i = 0; i < count; i++) {
        uint16_t want = qgemv_f32_to_bf16(((const float *)(const void *)y32.mem)[i]);
        uint16_t got = ((const uint16_t *)(const void *)y16.mem)[i];
        EXPECT(got == want, "format %d combo %d element %lld: bf16 y 0x%04x, RNE of the f32 y is 0x%04x", f, combo,
               (long long)i, got, want);
      }
      tu_guarded_free(&y32);
      tu_guarded_free(&y16);
      resident_free(&d);
      problem_free(&p);
    }
  qgemv_close(ctx);
}

START_TEST(bf16_y_is_rounded_f32_y) { check_bf16_is_rounded_f32(_i ? "ref" : NULL); }
END_TEST

static Suite *batched_suite(void) {
  Suite *s = suite_create("batched");
  TCase *rows = tcase_create("rows");
  tcase_set_timeout(rows, 120);
  tcase_add_loop_test(rows, batch_rows_match_single_best, 0, qgemv_format_count());
  tcase_add_loop_test(rows, batch_rows_match_single_ref, 0, qgemv_format_count());
  tcase_add_loop_test(rows, bf16_y_is_rounded_f32_y, 0, 2);
  suite_add_tcase(s, rows);
  TCase *thr = tcase_create("threads");
  tcase_set_timeout(thr, 120);
  tcase_add_loop_test(thr, thread_count_does_not_change_bits, 0, 2);
  suite_add_tcase(s, thr);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(batched_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
