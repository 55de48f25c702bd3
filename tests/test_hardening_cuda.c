/*
 * Device memory exhaustion on CUDA (issue 6, item 5), through the public
 * API only. SKIPs (77) where qgemv_backend_probe("cuda") fails.
 *
 * 1. A tensor larger than the card's memory: QGEMV_ERR_NO_MEMORY.
 * 2. A weight larger than the card's memory: NO_MEMORY. Upload validates
 *    every host block first, so the host descriptor is an anonymous
 *    MAP_NORESERVE mapping only ever read (zero pages: valid Q2_0 blocks
 *    with d = 0), asking for transparent huge pages so reading 140+ GB
 *    takes few page faults; skipped if the host cannot map that much
 *    address space.
 * 3. The card filled with tensors (halving the request each time one
 *    fails, down to 1 MiB), then a modest weight: NO_MEMORY; a matvec on a
 *    weight uploaded before still runs (matvec allocates nothing), and after
 *    the filler is freed the upload succeeds and results match.
 * 4. QGEMV_CUDA_PLAN, the plan's tuning override: a malformed one refuses
 *    the open (INVALID_ARG, naming the variable and what is wrong), one
 *    that cannot run a call refuses that matvec (UNSUPPORTED) and nothing
 *    else, and one that runs meets the contract on the real kernels.
 * After every refusal the context must keep working: the same matvec gives
 * the same bits as before.
 *
 * CUDA does not survive fork, so the suite runs with CK_NOFORK and touches
 * the device only inside the tests.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "expect.h"
#include "testutil.h"

enum { SN = 256, SK = 1024 };

/* A small weight and x on the context, and y as first computed. */
typedef struct probe_set {
  tu_weight hw;
  qgemv_weight *w;
  qgemv_tensor *x, *y;
  float y0[SN];
} probe_set;

static void probe_setup(qgemv_ctx *ctx, probe_set *p) {
  rng r = {.s = 101};
  tu_weight_make(&r, DIST_NORMAL, QGEMV_Q2_0, 128, SN, SK, &p->hw);
  float x[SK];
  fill_random(&r, DIST_NORMAL, x, SK);
  EXPECT_OK(qgemv_weight_upload(ctx, &p->hw.desc, &p->w));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, SK, &p->x));
  EXPECT_OK(qgemv_tensor_write(p->x, x, sizeof x));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, SN, &p->y));
  EXPECT_OK(qgemv_matvec(ctx, p->w, p->x, p->y, NULL));
  EXPECT_OK(qgemv_tensor_read(p->y, p->y0, sizeof p->y0));
  char where[160];
  double worst = tu_check_contract(&p->hw.desc, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0.0f, QGEMV_F32, p->y0, where,
                                   sizeof where);
  EXPECT(worst <= 1.0, "the probe matvec misses the contract: %s", where);
}

static void expect_same(qgemv_ctx *ctx, probe_set *p, const char *when) {
  float y[SN];
  qgemv_status s = qgemv_matvec(ctx, p->w, p->x, p->y, NULL);
  EXPECT(s == QGEMV_OK, "%s: matvec: %s (%s)", when, qgemv_status_str(s), qgemv_last_error());
  EXPECT_OK(qgemv_sync(ctx));
  EXPECT_OK(qgemv_tensor_read(p->y, y, sizeof y));
  EXPECT(memcmp(y, p->y0, sizeof y) == 0, "%s: the context gives other results", when);
}

static void expect_no_memory(qgemv_status got, const char *what) {
  EXPECT(got == QGEMV_ERR_NO_MEMORY, "%s: %s, expected QGEMV_ERR_NO_MEMORY (%s)", what, qgemv_status_str(got),
         qgemv_last_error());
  EXPECT(qgemv_last_error()[0] != '\0', "%s: no message", what);
}

static uint64_t device_memory(qgemv_ctx *ctx) {
  qgemv_device_info info;
  EXPECT_OK(qgemv_ctx_info(ctx, &info));
  EXPECT(info.memory_bytes > 0, "qgemv_ctx_info reports no device memory");
  printf("hardening cuda: %s, %.1f GiB\n", info.name, (double)info.memory_bytes / (1 << 30));
  return info.memory_bytes;
}

START_TEST(tensor_beyond_device) {
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open("cuda", &ctx));
  probe_set p;
  probe_setup(ctx, &p);
  uint64_t mem = device_memory(ctx);
  qgemv_tensor *t = (qgemv_tensor *)&t;
  int64_t rows = (int64_t)(mem / 4 + ((uint64_t)1 << 28)); /* 1 GiB more than the card */
  expect_no_memory(qgemv_tensor_new(ctx, QGEMV_F32, rows, 1, &t), "a tensor larger than the card");
  EXPECT(t == NULL, "a failed tensor_new left *out set");
  expect_same(ctx, &p, "after the tensor refusal");
  qgemv_close(ctx);
  tu_weight_free(&p.hw);
}
END_TEST

START_TEST(weight_beyond_device) {
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open("cuda", &ctx));
  probe_set p;
  probe_setup(ctx, &p);
  uint64_t mem = device_memory(ctx);
  const int64_t k = 65536; /* 512 blocks of 34 bytes per row */
  const size_t row = (size_t)(k / 128) * 34;
  const int64_t n = (int64_t)((mem + ((uint64_t)1 << 30)) / row + 1);
  const size_t bytes = (size_t)n * row;
  void *zeros = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (zeros == MAP_FAILED) {
    printf("hardening cuda: cannot map %zu bytes of host address space; weight case skipped\n", bytes);
  } else {
    madvise(zeros, bytes, MADV_HUGEPAGE); /* a hint only: read faults then map the huge zero page */
    qgemv_weight_desc d = {.format = QGEMV_Q2_0, .n = n, .k = k, .group = 128, .data = zeros};
    qgemv_weight *w = (qgemv_weight *)&w;
    expect_no_memory(qgemv_weight_upload(ctx, &d, &w), "a weight larger than the card");
    EXPECT(w == NULL, "a failed upload left *out set");
    munmap(zeros, bytes);
    printf("hardening cuda: a %.1f GiB Q2_0 weight: NO_MEMORY\n", (double)bytes / (1 << 30));
  }
  expect_same(ctx, &p, "after the weight refusal");
  qgemv_close(ctx);
  tu_weight_free(&p.hw);
}
END_TEST

START_TEST(device_filled) {
  qgemv_ctx *ctx;
  EXPECT_OK(qgemv_open("cuda", &ctx));
  probe_set p;
  probe_setup(ctx, &p);
  uint64_t mem = device_memory(ctx);
  /* fill: 4 GiB tensors, halving the size on each refusal down to 1 MiB */
  enum { MAXFILL = 4096 };
  qgemv_tensor **fill = calloc(MAXFILL, sizeof *fill);
  ck_assert_ptr_nonnull(fill);
  int nfill = 0;
  uint64_t filled = 0;
  for (int64_t rows = (int64_t)1 << 30; rows >= ((int64_t)1 << 18) && nfill < MAXFILL;) {
    qgemv_status s = qgemv_tensor_new(ctx, QGEMV_F32, rows, 1, &fill[nfill]);
    if (s == QGEMV_OK) {
      nfill++;
      filled += (uint64_t)rows * 4;
    } else {
      expect_no_memory(s, "filling the card");
      rows /= 2;
    }
  }
  printf("hardening cuda: filled %.2f GiB of %.2f GiB in %d tensors\n", (double)filled / (1 << 30),
         (double)mem / (1 << 30), nfill);
  /* a 4 MiB weight no longer fits */
  rng r = {.s = 102};
  tu_weight big;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_Q2_0, 128, 2048, 8192, &big);
  qgemv_weight *w = (qgemv_weight *)&w;
  expect_no_memory(qgemv_weight_upload(ctx, &big.desc, &w), "a weight on a full card");
  EXPECT(w == NULL, "a failed upload left *out set");
  expect_same(ctx, &p, "with the card full"); /* matvec allocates nothing */
  for (int i = 0; i < nfill; i++) qgemv_tensor_free(fill[i]);
  free(fill);
  EXPECT_OK(qgemv_weight_upload(ctx, &big.desc, &w));
  qgemv_weight_free(w);
  expect_same(ctx, &p, "after the filler was freed");
  tu_weight_free(&big);
  qgemv_close(ctx);
  tu_weight_free(&p.hw);
}
END_TEST

START_TEST(plan_override) {
  qgemv_ctx *ctx = NULL;
  setenv("QGEMV_CUDA_PLAN", "ks=3", 1);
  qgemv_status s = qgemv_open("cuda", &ctx);
  EXPECT(s == QGEMV_ERR_INVALID_ARG, "QGEMV_CUDA_PLAN=ks=3: open gave %s", qgemv_status_str(s));
  EXPECT(strstr(qgemv_last_error(), "QGEMV_CUDA_PLAN") && strstr(qgemv_last_error(), "power of two"),
         "the refusal does not say what to fix: %s", qgemv_last_error());
  EXPECT(ctx == NULL, "a refused open left a context");

  /* The probe weight has k = 1024: two chunks per row, so no 16 k-slices. */
  setenv("QGEMV_CUDA_PLAN", "ks=2,t=1,b=warp,w=4", 1);
  EXPECT_OK(qgemv_open("cuda", &ctx));
  probe_set p;
  probe_setup(ctx, &p); /* checks the contract */
  qgemv_close(ctx);
  setenv("QGEMV_CUDA_PLAN", "ks=16", 1);
  EXPECT_OK(qgemv_open("cuda", &ctx));
  qgemv_weight *w;
  qgemv_tensor *x, *y;
  EXPECT_OK(qgemv_weight_upload(ctx, &p.hw.desc, &w));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, SK, &x));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, SN, &y));
  s = qgemv_matvec(ctx, w, x, y, NULL);
  EXPECT(s == QGEMV_ERR_UNSUPPORTED, "ks=16 on two chunks: matvec gave %s", qgemv_status_str(s));
  EXPECT(strstr(qgemv_last_error(), "QGEMV_CUDA_PLAN=ks=16 does not fit"), "message: %s", qgemv_last_error());
  EXPECT_OK(qgemv_sync(ctx));
  qgemv_tensor_free(x);
  qgemv_tensor_free(y);
  qgemv_weight_free(w);
  qgemv_close(ctx);
  unsetenv("QGEMV_CUDA_PLAN");
  tu_weight_free(&p.hw);
}
END_TEST

int main(void) {
  int devices = 0;
  if (qgemv_backend_probe("cuda", &devices) != QGEMV_OK) {
    printf("SKIP: no usable CUDA backend here: %s\n", qgemv_last_error());
    return TU_SKIP;
  }
  Suite *s = suite_create("hardening_cuda");
  TCase *tc = tcase_create("device memory");
  tcase_add_test(tc, tensor_beyond_device);
  tcase_add_test(tc, weight_beyond_device);
  tcase_add_test(tc, device_filled);
  tcase_add_test(tc, plan_override);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK); /* CUDA does not survive fork */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
