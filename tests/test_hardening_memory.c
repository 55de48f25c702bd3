/*
 * Host memory exhaustion (issue 6, item 5): a weight too large for the
 * memory the process may use returns QGEMV_ERR_NO_MEMORY, and the context
 * stays usable.
 *
 * The approach, and why it is honest:
 * - "Memory" is the address space the process is allowed, RLIMIT_AS: the
 *   limit `ulimit -v` and batch schedulers put on a job. The test lowers
 *   its soft limit to what the process already uses plus a small margin,
 *   and restores it afterwards (a soft limit may be raised back up to the
 *   hard one), so the backend's own allocation for the weight fails the
 *   way it would in a job that has used up its memory.
 * - Upload validates the host weight first, reading every block's scale,
 *   so the descriptor must point at readable memory of the full size. That
 *   memory is an anonymous MAP_NORESERVE mapping that is only ever read:
 *   untouched anonymous pages read as zeros (a valid Q2_0 block, or an NF4
 *   scale of 0) from the shared zero page, so a 1 GiB weight costs no
 *   memory. The mapping is made before the limit is lowered.
 * - The same limit makes a matvec whose activation workspace cannot grow
 *   fail with NO_MEMORY, writing nothing to y.
 * After each refusal the context must still upload, run and give the same
 * bits as before.
 */
#define _GNU_SOURCE
#include <check.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "expect.h"
#include "testutil.h"

/* ASan's allocator aborts on a failed allocation unless told to return
 * NULL as the C library's does. */
const char *__asan_default_options(void);
__attribute__((used)) const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static bool quick;

/* ---- the limit ------------------------------------------------------------ */

static struct rlimit saved_limit;

static size_t address_space_used(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0;
  if (f == NULL || fscanf(f, "%ld", &pages) != 1) pages = 0;
  if (f) fclose(f);
  return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Allows `margin` bytes beyond what the process has mapped now. */
static void limit_memory(size_t margin) {
  ck_assert_int_eq(getrlimit(RLIMIT_AS, &saved_limit), 0);
  struct rlimit lim = saved_limit;
  lim.rlim_cur = (rlim_t)(address_space_used() + margin);
  if (saved_limit.rlim_max != RLIM_INFINITY && lim.rlim_cur > saved_limit.rlim_max) lim.rlim_cur = saved_limit.rlim_max;
  ck_assert_msg(setrlimit(RLIMIT_AS, &lim) == 0, "cannot lower RLIMIT_AS");
}

static void unlimit_memory(void) { ck_assert_int_eq(setrlimit(RLIMIT_AS, &saved_limit), 0); }

/* Readable zeros of `bytes`, costing no memory while only read. */
static void *zero_region(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ck_assert_msg(p != MAP_FAILED, "cannot map %zu bytes of address space", bytes);
  return p;
}

/* ---- a small working set the context must keep serving ------------------ */

enum { SN = 32, SK = 256 };

typedef struct small {
  tu_weight hw;
  qgemv_weight *w;
  qgemv_tensor *x, *y;
  float y0[SN]; /* y before any exhaustion */
} small;

static void small_setup(qgemv_ctx *ctx, small *s) {
  rng r = {.s = 91};
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, SN, SK, &s->hw);
  float x[SK];
  fill_random(&r, DIST_NORMAL, x, SK);
  EXPECT_OK(qgemv_weight_upload(ctx, &s->hw.desc, &s->w));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, SK, &s->x));
  EXPECT_OK(qgemv_tensor_write(s->x, x, sizeof x));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, SN, &s->y));
  EXPECT_OK(qgemv_matvec(ctx, s->w, s->x, s->y, NULL)); /* also starts any thread pool */
  EXPECT_OK(qgemv_tensor_read(s->y, s->y0, sizeof s->y0));
}

/* The context still uploads a new weight and computes the same bits. */
static void expect_usable(qgemv_ctx *ctx, small *s, const char *when) {
  float y[SN];
  qgemv_weight *w2;
  qgemv_status st = qgemv_weight_upload(ctx, &s->hw.desc, &w2);
  EXPECT(st == QGEMV_OK, "%s: upload of a small weight failed: %s (%s)", when, qgemv_status_str(st),
         qgemv_last_error());
  EXPECT_OK(qgemv_matvec(ctx, w2, s->x, s->y, NULL));
  EXPECT_OK(qgemv_tensor_read(s->y, y, sizeof y));
  EXPECT(memcmp(y, s->y0, sizeof y) == 0, "%s: a new upload of the same weight gives other results", when);
  EXPECT_OK(qgemv_matvec(ctx, s->w, s->x, s->y, NULL));
  EXPECT_OK(qgemv_tensor_read(s->y, y, sizeof y));
  EXPECT(memcmp(y, s->y0, sizeof y) == 0, "%s: the old weight gives other results", when);
  qgemv_weight_free(w2);
}

static void expect_no_memory(qgemv_status got, const char *what) {
  const char *m = qgemv_last_error();
  EXPECT(got == QGEMV_ERR_NO_MEMORY, "%s: %s, expected QGEMV_ERR_NO_MEMORY (%s)", what, qgemv_status_str(got), m);
  EXPECT(strstr(m, "memory") != NULL || strstr(m, "allocate") != NULL, "%s: message \"%s\" does not say why",
         what, m);
}

/* ---- tests ---------------------------------------------------------------- */

START_TEST(weight_beyond_limit) {
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  small s;
  small_setup(ctx, &s);
  const size_t bytes = quick ? ((size_t)256 << 20) : ((size_t)1 << 30);
  const int64_t k = 4096;
  unsigned char *zeros = zero_region(bytes);
  /* Q2_0 g=128: 34 bytes per 128 weights; NF4: k/2 data bytes and k/16 of
   * scales per row, the scales right after the data */
  qgemv_weight_desc q2 = {.format = QGEMV_Q2_0, .n = (int64_t)(bytes / 1088), .k = k, .group = 128, .data = zeros};
  int64_t nf4_rows = (int64_t)(bytes / (size_t)(k / 2 + k / 16));
  qgemv_weight_desc nf4 = {.format = QGEMV_NF4, .n = nf4_rows, .k = k, .group = 64, .data = zeros,
                           .scales = (const float *)(const void *)(zeros + (size_t)nf4_rows * (size_t)(k / 2))};
  const qgemv_weight_desc *descs[2] = {&q2, &nf4};

  limit_memory((size_t)64 << 20);
  for (int i = 0; i < 2; i++) {
    char what[96];
    snprintf(what, sizeof what, "upload of a %zu MiB %s weight under the limit", qgemv_data_bytes(descs[i]->format,
             descs[i]->n, k, descs[i]->group) >> 20, i ? "NF4" : "Q2_0");
    qgemv_weight *w = (qgemv_weight *)&w;
    expect_no_memory(qgemv_weight_upload(ctx, descs[i], &w), what);
    EXPECT(w == NULL, "%s left *out set", what);
    expect_usable(ctx, &s, what); /* even while memory is still short */
  }
  qgemv_tensor *t = (qgemv_tensor *)&t;
  expect_no_memory(qgemv_tensor_new(ctx, QGEMV_F32, (int64_t)(bytes / 4), 1, &t), "tensor_new under the limit");
  EXPECT(t == NULL, "tensor_new under the limit left *out set");
  unlimit_memory();
  expect_usable(ctx, &s, "after the limit was lifted");
  munmap(zeros, bytes);
  tu_weight_free(&s.hw);
  qgemv_close(ctx);
  printf("hardening memory: %zu MiB Q2_0 and NF4 weights under RLIMIT_AS: NO_MEMORY, context usable\n", bytes >> 20);
}
END_TEST

/* A matvec needs an activation workspace of m*k values; when it cannot
 * grow, the call fails with NO_MEMORY and writes nothing to y. */
START_TEST(workspace_beyond_limit) {
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  small s;
  small_setup(ctx, &s);
  const int64_t m = quick ? 512 : 2048, k = 4096, n = 8; /* x: m*k f32, 8 or 32 MiB */
  rng r = {.s = 92};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_Q2_0, 64, n, k, &hw);
  qgemv_weight *w;
  qgemv_tensor *x, *y;
  EXPECT_OK(qgemv_weight_upload(ctx, &hw.desc, &w));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, m, k, &x));
  float *xh = calloc((size_t)(m * k), sizeof(float));
  ck_assert_ptr_nonnull(xh);
  for (int64_t i = 0; i < m * k; i++) xh[i] = (float)((i * 7) % 13) - 6.0f;
  EXPECT_OK(qgemv_tensor_write(x, xh, (size_t)(m * k) * sizeof(float)));
  free(xh);
  tu_guarded ym = tu_guarded_new((size_t)(m * n) * sizeof(float));
  EXPECT_OK(qgemv_tensor_wrap(ctx, QGEMV_F32, m, n, ym.mem, &y));

  limit_memory((size_t)2 << 20);
  qgemv_status st = qgemv_matvec(ctx, w, x, y, NULL);
  unlimit_memory();
  expect_no_memory(st, "matvec whose workspace cannot grow");
  EXPECT(tu_guard_intact(&ym), "the guard after y was written");
  for (size_t i = 0; i < ym.bytes; i++) EXPECT(ym.mem[i] == 0xff, "a matvec that failed wrote y[%zu]", i / 4);
  expect_usable(ctx, &s, "after the workspace refusal");
  /* with the limit gone the same call runs */
  EXPECT_OK(qgemv_matvec(ctx, w, x, y, NULL));
  EXPECT_OK(qgemv_sync(ctx));
  EXPECT(ym.mem[0] != 0xff || ym.mem[1] != 0xff, "the matvec after the limit did not write y");
  qgemv_close(ctx);
  tu_guarded_free(&ym);
  tu_weight_free(&hw);
  tu_weight_free(&s.hw);
}
END_TEST

int main(void) {
  /* One malloc arena. When the main arena cannot grow under the limit,
   * glibc retries in another thread arena, whose 64 MB reservation already
   * counts as mapped: a workspace that fits there would be served without
   * asking for address space (seen with CK_FORK=no, where the first test's
   * arena outlives it). Under ASan or valgrind, which replace malloc, this
   * is a no-op and not needed. */
  mallopt(M_ARENA_MAX, 1);
  quick = tu_quick();
  Suite *su = suite_create("hardening_memory");
  TCase *tc = tcase_create("host");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, weight_beyond_limit);
  tcase_add_test(tc, workspace_beyond_limit);
  suite_add_tcase(su, tc);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
