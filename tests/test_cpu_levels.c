/*
 * Every CPU ISA level available on this machine against the oracle
 * (DESIGN.md s.5), through the public API only, a level being chosen by
 * QGEMV_CPU_ISA before qgemv_open:
 * - the library's lists of levels and formats are the documented ones, and
 *   the level list agrees with what opens;
 * - every combination of every listed format (NF4, Q2_0 g64, Q2_0 g128) x
 *   {f32, bf16} x and y x {plain, RMSNorm}, on ragged shapes (k = one
 *   block, three blocks, 4160 rounded up to a whole block: 64, 192, 4160
 *   for the 64-wide blocks, 128, 384, 4224 for g128; n = 1, 7, 257) and
 *   m = 1, 3, 8, 17;
 * - row r of a batched call bit-identical to an m = 1 call on row r;
 * - the same bits with QGEMV_NUM_THREADS=1 and 2;
 * - avx512amx's Q2_0 bit for bit avx512vnni's (the same integer sums);
 * - a level the CPU (or the build) lacks is a clean error naming it, and the
 *   default is the best level available.
 * Outputs are poisoned before each call, and a guard region follows them
 * (the y tensor wraps a guarded host buffer), so a missing or stray write
 * fails. Levels this machine lacks are skipped with a note: the Arm check
 * (scripts/arm-check.sh) runs this same file under qemu for NEON.
 *
 * Environment: QGEMV_TEST_LEVELS="neon scalar" (spaces or commas) limits
 * the levels exercised (emulators are slow); QGEMV_TEST_REQUIRE="neon"
 * fails, rather than skips, when a named level is not available (so a CI
 * run cannot pass by testing nothing); a name in either that is not a
 * level, or a required level the first leaves out, fails the suite; QGEMV_TEST_QUICK=1 (make check-valgrind) keeps one
 * small k (three blocks) and drops the others.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "testutil.h"

enum { MMAX = 17 };
static const int64_t ms[] = {1, 3, 8, 17}; /* ms[0] must be 1, the last MMAX */
static const int64_t ns[] = {1, 7, 257};

/* The levels and formats as the library lists them (test_lists checks the
 * lists themselves). */
static qgemv_cpu_level_info level_at(int i) {
  qgemv_cpu_level_info l;
  EXPECT_OK(qgemv_cpu_level_get(i, &l));
  return l;
}
static const char *level_name(int i) { return level_at(i).name; }
static qgemv_format format_of(int f) { return tu_format(f).format; }
static int32_t group_of(int f) { return tu_format(f).group; }
static const char *format_name(int f) { return tu_format(f).label; }
static const char *dtype_name(qgemv_dtype t) { return t == QGEMV_F32 ? "f32" : "bf16"; }

/* qgemv_open("cpu") with QGEMV_CPU_ISA = level and QGEMV_NUM_THREADS =
 * threads (0: unset). Each test runs in its own forked process (Check's
 * default), so the environment changes stay there. */
static qgemv_status open_level(const char *level, int threads, qgemv_ctx **ctx) {
  setenv("QGEMV_CPU_ISA", level, 1);
  if (threads > 0) {
    char buf[16];
    snprintf(buf, sizeof buf, "%d", threads);
    setenv("QGEMV_NUM_THREADS", buf, 1);
  } else {
    unsetenv("QGEMV_NUM_THREADS");
  }
  *ctx = NULL;
  return qgemv_open("cpu", ctx);
}

/* Opens the level, or returns NULL with a note when this machine lacks it
 * or QGEMV_TEST_LEVELS leaves it out. */
static qgemv_ctx *open_or_skip(const char *level, int threads) {
  const char *only = getenv("QGEMV_TEST_LEVELS");
  if (only && *only && !tu_env_lists("QGEMV_TEST_LEVELS", level)) return NULL;
  qgemv_ctx *ctx;
  qgemv_status s = open_level(level, threads, &ctx);
  EXPECT(s == QGEMV_OK || !tu_env_lists("QGEMV_TEST_REQUIRE", level), "level %s is required here: %s", level,
         qgemv_last_error());
  if (s == QGEMV_ERR_UNSUPPORTED) {
    fprintf(stderr, "level %s not available here (skipped): %s\n", level, qgemv_last_error());
    return NULL;
  }
  EXPECT(s == QGEMV_OK, "open level %s: %s (%s)", level, qgemv_status_str(s), qgemv_last_error());
  return ctx;
}

/* One problem's host data: x has MMAX rows, gamma one. */
typedef struct problem {
  tu_weight w;
  float *x, *gamma;
} problem;

static void problem_make(int f, int64_t n, int64_t k, unsigned seed, problem *p) {
  rng r = {seed};
  tu_weight_make(&r, (dist_kind)(seed % DIST_COUNT), format_of(f), group_of(f), n, k, &p->w);
  p->x = malloc((size_t)(MMAX * k) * sizeof(float));
  p->gamma = malloc((size_t)k * sizeof(float));
  ck_assert_ptr_nonnull(p->x);
  ck_assert_ptr_nonnull(p->gamma);
  fill_random(&r, (dist_kind)((seed / 4) % DIST_COUNT), p->x, (size_t)(MMAX * k));
  fill_random(&r, DIST_NORMAL, p->gamma, (size_t)k);
}

static void problem_free(problem *p) {
  tu_weight_free(&p->w);
  free(p->x);
  free(p->gamma);
}

/* One matvec of the first m rows of x (host, dtype xt) into a poisoned,
 * guarded host buffer that the y tensor wraps. */
static void run(qgemv_ctx *ctx, const qgemv_weight *w, int64_t n, int64_t k, int64_t m, qgemv_dtype xt,
                const void *x, const qgemv_tensor *gamma, qgemv_dtype yt, tu_guarded *y) {
  qgemv_tensor *xs, *ys;
  EXPECT_OK(qgemv_tensor_new(ctx, xt, m, k, &xs));
  EXPECT_OK(qgemv_tensor_write(xs, x, (size_t)(m * k) * tu_dtype_size(xt)));
  tu_poison(y);
  EXPECT_OK(qgemv_tensor_wrap(ctx, yt, m, n, y->mem, &ys));
  qgemv_rmsnorm norm = {.gamma = gamma, .eps = 1e-5f};
  EXPECT_OK(qgemv_matvec(ctx, w, xs, ys, gamma ? &norm : NULL));
  EXPECT_OK(qgemv_sync(ctx));
  EXPECT(tu_guard_intact(y), "a write past the end of y");
  qgemv_tensor_free(xs);
  qgemv_tensor_free(ys);
}

/* All dtype and norm combinations and every m for one weight on one
 * level. For each (x dtype, norm):
 * - y f32: the m = 1 call on each of the 17 rows of x, then m = 3, 8, 17
 *   on the first rows; every batched row must equal its m = 1 call, and the
 *   oracle judges the m = 17 call, so (being the same bits) every call;
 * - y bf16: the same calls and identities, and every element must be the
 *   f32 result rounded to nearest even (DESIGN.md s.5: bf16 outputs are
 *   the rounded f32 result), which implies the contract's bf16 bound
 *   without a second oracle run. */
static void check_weight(qgemv_ctx *ctx, const char *level, int f, int64_t n, int64_t k, unsigned seed) {
  problem p;
  problem_make(f, n, k, seed, &p);
  qgemv_weight *w;
  EXPECT_OK(qgemv_weight_upload(ctx, &p.w.desc, &w));
  size_t ycount = (size_t)(MMAX * n);
  float *yf32 = malloc(ycount * sizeof(float)); /* m = 17, y f32 */
  unsigned char *single = malloc(ycount * sizeof(float));
  ck_assert_ptr_nonnull(yf32);
  ck_assert_ptr_nonnull(single);
  tu_guarded y = tu_guarded_new(ycount * sizeof(float));
  for (int combo = 0; combo < 8; combo++) {
    qgemv_dtype xt = combo & 2 ? QGEMV_BF16 : QGEMV_F32, yt = combo & 1 ? QGEMV_BF16 : QGEMV_F32;
    bool norm = combo & 4;
    qgemv_dtype gt = xt == QGEMV_F32 ? QGEMV_BF16 : QGEMV_F32; /* vary gamma's dtype too */
    void *x = tu_convert(p.x, (size_t)(MMAX * k), xt), *g = tu_convert(p.gamma, (size_t)k, gt);
    qgemv_tensor *gamma = NULL;
    if (norm) {
      EXPECT_OK(qgemv_tensor_new(ctx, gt, 1, k, &gamma));
      EXPECT_OK(qgemv_tensor_write(gamma, g, (size_t)k * tu_dtype_size(gt)));
    }
    size_t row_bytes = (size_t)n * tu_dtype_size(yt);
    char what[160];
    snprintf(what, sizeof what, "%s %s n=%lld k=%lld x=%s y=%s norm=%s", level, format_name(f), (long long)n,
             (long long)k, dtype_name(xt), dtype_name(yt), norm ? "on" : "off");
    for (int64_t r = 0; r < MMAX; r++) {
      y.bytes = row_bytes;
      run(ctx, w, n, k, 1, xt, (const char *)x + (size_t)(r * k) * tu_dtype_size(xt), gamma, yt, &y);
      memcpy(single + (size_t)r * row_bytes, y.mem, row_bytes);
    }
    for (size_t i = 1; i < sizeof ms / sizeof ms[0]; i++) {
      int64_t m = ms[i];
      y.bytes = (size_t)m * row_bytes;
      run(ctx, w, n, k, m, xt, x, gamma, yt, &y);
      for (int64_t r = 0; r < m; r++)
        EXPECT(memcmp(y.mem + (size_t)r * row_bytes, single + (size_t)r * row_bytes, row_bytes) == 0,
               "%s: row %lld of m=%lld differs from the m=1 call", what, (long long)r, (long long)m);
    }
    /* y now holds the m = 17 call. */
    if (yt == QGEMV_F32) {
      char where[256];
      double worst = tu_check_contract(&p.w.desc, MMAX, xt, x, gt, norm ? g : NULL, 1e-5f, yt, y.mem, where,
                                       sizeof where);
      EXPECT(worst <= 1.0, "%s m=%d: error %.3g of the bound at %s", what, MMAX, worst, where);
      memcpy(yf32, y.mem, ycount * sizeof(float));
    } else {
      const uint16_t *yb = (const uint16_t *)y.mem;
      for (size_t i = 0; i < ycount; i++)
        EXPECT(yb[i] == qgemv_f32_to_bf16(yf32[i]), "%s: element %zu is 0x%04x, the f32 result %.9g rounds to 0x%04x",
               what, i, yb[i], yf32[i], qgemv_f32_to_bf16(yf32[i]));
    }
    qgemv_tensor_free(gamma);
    free(x);
    free(g);
  }
  y.bytes = ycount * sizeof(float);
  tu_guarded_free(&y);
  free(single);
  free(yf32);
  qgemv_weight_free(w);
  problem_free(&p);
}

/* The k of each shape: ragged against every SIMD width and tile (one
 * block, three blocks, 4160 rounded up to whole blocks: 65 of 64). */
static int64_t k_of(int f, int i) {
  const int64_t g = group_of(f), k[] = {g, 3 * g, (4160 + g - 1) / g * g};
  return k[i];
}

/* Loop index: level * formats + format. */
START_TEST(test_contract) {
  const char *level = level_name(_i / qgemv_format_count());
  int f = _i % qgemv_format_count();
  /* One thread: test_threads shows that the thread count changes no bits,
   * and an idle OpenMP worker spinning beside the serial oracle would only
   * slow this test down. */
  qgemv_ctx *ctx = open_or_skip(level, 1);
  if (ctx == NULL) return;
  unsigned seed = 100u + (unsigned)_i;
  for (int ki = tu_quick() ? 1 : 0; ki < (tu_quick() ? 2 : 3); ki++)
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) check_weight(ctx, level, f, ns[ni], k_of(f, ki), seed++);
  qgemv_close(ctx);
}
END_TEST

/* Same level, 1 and 2 threads, and 1 and 4: the same bits (the row split
 * moves rows between threads and must not change any, nor must the split
 * of the activation quantizer's blocks, which both cut inside a row of x).
 * n = 257 is odd, so the split falls inside a tile of rows. */
static void threads_against_one(const char *level, int threads);
START_TEST(test_threads) {
  threads_against_one(level_name(_i), 2);
  threads_against_one(level_name(_i), 4);
}
END_TEST

static void threads_against_one(const char *level, int threads) {
  qgemv_ctx *one = open_or_skip(level, 1);
  if (one == NULL) return;
  qgemv_ctx *two;
  EXPECT_OK(open_level(level, threads, &two));
  for (int f = 0; f < qgemv_format_count(); f++) {
    int64_t n = 257, k = k_of(f, tu_quick() ? 1 : 2), m = 3;
    problem p;
    problem_make(f, n, k, 700u + (unsigned)f, &p);
    qgemv_weight *w1, *w2;
    EXPECT_OK(qgemv_weight_upload(one, &p.w.desc, &w1));
    EXPECT_OK(qgemv_weight_upload(two, &p.w.desc, &w2));
    for (int combo = 0; combo < 2; combo++) {
      qgemv_dtype t = combo ? QGEMV_BF16 : QGEMV_F32;
      void *x = tu_convert(p.x, (size_t)(m * k), t);
      tu_guarded y1 = tu_guarded_new((size_t)(m * n) * tu_dtype_size(t));
      tu_guarded y2 = tu_guarded_new((size_t)(m * n) * tu_dtype_size(t));
      run(one, w1, n, k, m, t, x, NULL, t, &y1);
      run(two, w2, n, k, m, t, x, NULL, t, &y2);
      EXPECT(memcmp(y1.mem, y2.mem, y1.bytes) == 0, "%s %s %s: 1 and %d threads differ", level, format_name(f),
             dtype_name(t), threads);
      tu_guarded_free(&y1);
      tu_guarded_free(&y2);
      free(x);
    }
    qgemv_weight_free(w1);
    qgemv_weight_free(w2);
    problem_free(&p);
  }
  qgemv_close(one);
  qgemv_close(two);
}

/* The level list is the documented one, in order (ref, scalar, avx2,
 * avx512, avx512vnni, avx512amx, neon, neondot), built as this architecture says; the
 * format list has every format exactly once by name. */
START_TEST(test_lists) {
  enum { LEVELS = 8 };
  static const char *const documented[LEVELS] = {"ref",        "scalar",    "avx2", "avx512",
                                                 "avx512vnni", "avx512amx", "neon", "neondot"};
#if defined(__x86_64__)
  static const int built[LEVELS] = {1, 1, 1, 1, 1, 1, 0, 0};
#elif defined(__aarch64__)
  static const int built[LEVELS] = {1, 1, 0, 0, 0, 0, 1, 1};
#else
  static const int built[LEVELS] = {1, 1, 0, 0, 0, 0, 0, 0};
#endif
  ck_assert_int_eq(qgemv_cpu_level_count(), LEVELS);
  int defaults = 0;
  for (int i = 0; i < LEVELS; i++) {
    qgemv_cpu_level_info l = level_at(i);
    EXPECT(strcmp(l.name, documented[i]) == 0, "level %d is %s, expected %s", i, l.name, documented[i]);
    EXPECT(l.built == built[i], "%s: built %d, expected %d on this architecture", l.name, l.built, built[i]);
    EXPECT(l.built || !l.supported, "%s is supported but not built", l.name);
    EXPECT(i >= 2 || l.supported, "%s must be supported everywhere", l.name);
    defaults += l.is_default;
  }
  ck_assert_int_eq(defaults, 1);
  qgemv_cpu_level_info l;
  ck_assert_int_eq(qgemv_cpu_level_get(LEVELS, &l), QGEMV_ERR_INVALID_ARG);
  ck_assert_int_eq(qgemv_cpu_level_get(-1, &l), QGEMV_ERR_INVALID_ARG);
  ck_assert_int_eq(qgemv_cpu_level_get(0, NULL), QGEMV_ERR_INVALID_ARG);
  for (int f = 0; f < qgemv_format_count(); f++) {
    qgemv_format_info named;
    EXPECT_OK(qgemv_format_lookup(tu_format(f).name, &named));
    EXPECT(named.format == format_of(f) && named.group == group_of(f), "%s names another format", named.name);
  }
}
END_TEST

/* Each listed level opens exactly when the list says it is supported; a
 * level this CPU or build lacks is QGEMV_ERR_UNSUPPORTED naming it; an
 * unknown name is INVALID_ARG; the default is the best available level
 * (the last that opens; avx512amx too, since v34) and the one the list
 * marks. */
START_TEST(test_selection) {
  int missing = 0;
  const char *best = NULL, *marked = NULL;
  for (int i = 0; i < qgemv_cpu_level_count(); i++) {
    const qgemv_cpu_level_info l = level_at(i);
    if (l.is_default) marked = l.name;
    qgemv_ctx *ctx;
    qgemv_status s = open_level(l.name, 0, &ctx);
    EXPECT((s == QGEMV_OK) == (l.supported != 0), "QGEMV_CPU_ISA=%s: %s, but the list says %s", l.name,
           qgemv_status_str(s), l.supported ? "supported" : "unsupported");
    if (s == QGEMV_OK) {
      qgemv_device_info info;
      EXPECT_OK(qgemv_ctx_info(ctx, &info));
      EXPECT(strcmp(info.isa, l.name) == 0, "QGEMV_CPU_ISA=%s opened level '%s'", l.name, info.isa);
      best = l.name;
      qgemv_close(ctx);
      continue;
    }
    missing++;
    EXPECT(s == QGEMV_ERR_UNSUPPORTED, "QGEMV_CPU_ISA=%s: %s, want QGEMV_ERR_UNSUPPORTED", l.name,
           qgemv_status_str(s));
    EXPECT(ctx == NULL, "a failed open must leave no context");
    EXPECT(strstr(qgemv_last_error(), l.name) != NULL, "the message does not name the level: %s",
           qgemv_last_error());
  }
  /* No build has both x86 and Arm levels, so something is always missing. */
  EXPECT(missing > 0, "every level opened, neon and avx2 together?");
  EXPECT(best != NULL, "not even ref opened");
  EXPECT(marked != NULL && strcmp(marked, best) == 0, "the list marks %s as the default, the best is %s",
         marked ? marked : "none", best);

  qgemv_ctx *ctx;
  EXPECT(open_level("sse9", 0, &ctx) == QGEMV_ERR_INVALID_ARG, "an unknown level must be INVALID_ARG");
  EXPECT(strstr(qgemv_last_error(), "sse9") != NULL, "the message does not name the value: %s", qgemv_last_error());

  unsetenv("QGEMV_CPU_ISA");
  EXPECT_OK(qgemv_open("cpu", &ctx));
  qgemv_device_info info;
  EXPECT_OK(qgemv_ctx_info(ctx, &info));
  EXPECT(strcmp(info.isa, best) == 0, "the default level is %s, the best available is %s", info.isa, best);
  /* The read probe reads with the best level's readers, one stream and two
   * (under qemu the NEON ones, which nothing else here runs): a positive,
   * finite rate over 1 MiB; the rate itself is the benchmark's business. */
  double gbs = -1.0;
  EXPECT_OK(qgemv_measure_read_bandwidth(ctx, (size_t)1 << 20, &gbs));
  EXPECT(isfinite(gbs) && gbs > 0.0, "read bandwidth %g GB/s", gbs);
  qgemv_close(ctx);
}
END_TEST

/* avx512amx makes Q2_0's integer sums on AMX tiles where avx512vnni makes
 * them with vpdpbusd: the same integers and the same fold, so the same
 * bits (q2_amx.c), for every m (m = 17 takes two passes of 16 activation
 * rows), x dtype and norm. Skipped where either level is missing. */
START_TEST(test_amx_bits) {
  qgemv_ctx *vnni = open_or_skip("avx512vnni", 1);
  if (vnni == NULL) return;
  qgemv_ctx *amx = open_or_skip("avx512amx", 1);
  if (amx == NULL) {
    qgemv_close(vnni);
    return;
  }
  for (int f = 0; f < qgemv_format_count(); f++) {
    if (format_of(f) != QGEMV_Q2_0) continue;
    const int64_t n = 257, k = k_of(f, tu_quick() ? 1 : 2);
    problem p;
    problem_make(f, n, k, 900u + (unsigned)f, &p);
    qgemv_weight *wv, *wa;
    EXPECT_OK(qgemv_weight_upload(vnni, &p.w.desc, &wv));
    EXPECT_OK(qgemv_weight_upload(amx, &p.w.desc, &wa));
    for (int combo = 0; combo < 4; combo++) {
      const qgemv_dtype t = combo & 1 ? QGEMV_BF16 : QGEMV_F32;
      void *x = tu_convert(p.x, (size_t)(MMAX * k), t);
      qgemv_tensor *gv = NULL, *ga = NULL;
      if (combo & 2) {
        EXPECT_OK(qgemv_tensor_new(vnni, QGEMV_F32, 1, k, &gv));
        EXPECT_OK(qgemv_tensor_write(gv, p.gamma, (size_t)k * sizeof(float)));
        EXPECT_OK(qgemv_tensor_new(amx, QGEMV_F32, 1, k, &ga));
        EXPECT_OK(qgemv_tensor_write(ga, p.gamma, (size_t)k * sizeof(float)));
      }
      for (int64_t m = 1; m <= MMAX; m += 8) {
        tu_guarded yv = tu_guarded_new((size_t)(m * n) * sizeof(float));
        tu_guarded ya = tu_guarded_new((size_t)(m * n) * sizeof(float));
        run(vnni, wv, n, k, m, t, x, gv, QGEMV_F32, &yv);
        run(amx, wa, n, k, m, t, x, ga, QGEMV_F32, &ya);
        EXPECT(memcmp(yv.mem, ya.mem, yv.bytes) == 0, "%s x=%s norm=%s m=%lld: avx512amx and avx512vnni differ",
               format_name(f), dtype_name(t), combo & 2 ? "on" : "off", (long long)m);
        tu_guarded_free(&yv);
        tu_guarded_free(&ya);
      }
      qgemv_tensor_free(gv);
      qgemv_tensor_free(ga);
      free(x);
    }
    qgemv_weight_free(wv);
    qgemv_weight_free(wa);
    problem_free(&p);
  }
  qgemv_close(vnni);
  qgemv_close(amx);
}
END_TEST

static Suite *levels_suite(void) {
  Suite *s = suite_create("cpu_levels");
  TCase *contract = tcase_create("contract");
  tcase_set_timeout(contract, 600);
  tcase_add_loop_test(contract, test_contract, 0, qgemv_cpu_level_count() * qgemv_format_count());
  suite_add_tcase(s, contract);
  TCase *threads = tcase_create("threads");
  tcase_set_timeout(threads, 300);
  tcase_add_loop_test(threads, test_threads, 0, qgemv_cpu_level_count());
  suite_add_tcase(s, threads);
  TCase *bits = tcase_create("same_bits");
  tcase_set_timeout(bits, 300);
  tcase_add_test(bits, test_amx_bits);
  suite_add_tcase(s, bits);
  TCase *selection = tcase_create("selection");
  tcase_add_test(selection, test_lists);
  tcase_add_test(selection, test_selection);
  suite_add_tcase(s, selection);
  return s;
}

int main(void) {
  if (!tu_env_levels_valid()) return EXIT_FAILURE;
  SRunner *sr = srunner_create(levels_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
