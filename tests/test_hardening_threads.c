/*
 * Concurrency and resource cycles (issue 6, item 4).
 *
 * 1. Concurrent first use of backend discovery: in fresh processes, many
 *    threads released at once call qgemv_backend_probe("cuda") and
 *    qgemv_open("auto"); all must get the same status, message and backend.
 * 2. 8 threads, each with its own "cpu" context (QGEMV_NUM_THREADS=1, so 8
 *    fit on a small machine), run thousands of small matvecs over several
 *    weights and dtype mixes; every result must be bit-identical to the one
 *    computed first by a single thread.
 * 3. 10,000 open/close cycles (plain, and closing with weights and tensors
 *    still alive) and 100,000 upload/free cycles leave the resident set
 *    flat: within 1 MB after a warm-up that lets the allocator settle.
 *
 * QGEMV_TEST_QUICK=1 (make check-valgrind) cuts the counts. Under valgrind
 * the resident set is valgrind's own (shadow memory, its queue of freed
 * blocks), so there the cycles run for the leak checker and the RSS delta
 * is printed, not asserted.
 */
#define _GNU_SOURCE
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"
#include "testutil.h"

/* ASan's quarantine holds freed blocks (256 MB by default) before reuse,
 * which would read as growth of the resident set over 100,000 cycles; with
 * it off the allocator reuses memory as the C library's does, and LSan
 * still reports leaks at exit. */
const char *__asan_default_options(void);
__attribute__((used)) const char *__asan_default_options(void) {
  return "quarantine_size_mb=0:thread_local_quarantine_size_kb=0";
}

static bool quick;

static bool under_valgrind(void) {
  const char *p = getenv("LD_PRELOAD");
  return p != NULL && strstr(p, "vgpreload") != NULL;
}

/* ---- 1. concurrent first use of the loader ------------------------------ */

enum { RACERS = 16 };

typedef struct racer {
  pthread_barrier_t *start;
  qgemv_status probe, open;
  int devices;
  char message[1024], backend[16];
} racer;

static void *race(void *arg) {
  racer *r = arg;
  pthread_barrier_wait(r->start);
  r->probe = qgemv_backend_probe("cuda", &r->devices);
  snprintf(r->message, sizeof r->message, "%s", r->probe == QGEMV_OK ? "" : qgemv_last_error());
  qgemv_ctx *ctx = NULL;
  r->open = qgemv_open("auto", &ctx);
  if (r->open == QGEMV_OK) {
    snprintf(r->backend, sizeof r->backend, "%s", qgemv_ctx_backend(ctx));
    qgemv_close(ctx);
  }
  return NULL;
}

/* One fresh process's race; returns 0 when every thread agreed. */
static int race_once(void) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, RACERS);
  racer rs[RACERS];
  pthread_t th[RACERS];
  memset(rs, 0, sizeof rs);
  for (int i = 0; i < RACERS; i++) {
    rs[i].start = &start;
    if (pthread_create(&th[i], NULL, race, &rs[i]) != 0) return 2;
  }
  for (int i = 0; i < RACERS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&start);
  for (int i = 1; i < RACERS; i++) {
    if (rs[i].probe != rs[0].probe || rs[i].devices != rs[0].devices || strcmp(rs[i].message, rs[0].message) ||
        rs[i].open != rs[0].open || strcmp(rs[i].backend, rs[0].backend)) {
      fprintf(stderr, "racer %d: probe %s (%s) devices %d, open %s %s; racer 0: probe %s (%s) devices %d, open %s %s\n",
              i, qgemv_status_str(rs[i].probe), rs[i].message, rs[i].devices, qgemv_status_str(rs[i].open),
              rs[i].backend, qgemv_status_str(rs[0].probe), rs[0].message, rs[0].devices,
              qgemv_status_str(rs[0].open), rs[0].backend);
      return 1;
    }
  }
  if (rs[0].open != QGEMV_OK || (rs[0].probe != QGEMV_OK && rs[0].message[0] == '\0')) {
    fprintf(stderr, "auto did not open (%s) or a failed probe said nothing\n", qgemv_status_str(rs[0].open));
    return 1;
  }
  /* a later call sees what the race settled */
  int d = 0;
  qgemv_status again = qgemv_backend_probe("cuda", &d);
  if (again != rs[0].probe || (again != QGEMV_OK && strcmp(qgemv_last_error(), rs[0].message))) return 3;
  return 0;
}

/* The loader runs once per process, so each race needs a new process: fork
 * one per round (whether or not Check forks), before any other qgemv call. */
START_TEST(concurrent_first_use) {
  int rounds = quick ? 2 : 20;
  for (int i = 0; i < rounds; i++) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) _exit(race_once());
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "round %d: %d threads racing on first use disagreed or crashed (status 0x%x)", i, RACERS, status);
  }
  printf("hardening threads: %d fresh processes x %d threads raced on first use of the loader\n", rounds, RACERS);
}
END_TEST

/* ---- 2. many contexts on many threads ----------------------------------- */

enum { TN = 64, TK = 512, NWEIGHTS = 3, NJOBS = 12, WORKERS = 8 };

/* A job: weight, x dtype, y dtype, m, and whether fused RMSNorm runs. */
typedef struct job {
  int weight, m;
  qgemv_dtype xt, yt;
  bool norm;
} job;

static tu_weight weights[NWEIGHTS];
static job jobs[NJOBS];
static void *xs[2];       /* [3, TK] in f32 and bf16 */
static float gamma_f[TK];
static unsigned char expected[NJOBS][3 * TN * 4];

/* A context's copy of everything the jobs need. */
typedef struct station {
  qgemv_ctx *ctx;
  qgemv_weight *w[NWEIGHTS];
  qgemv_tensor *x[2][3], *y[2][3], *gamma; /* [dtype][m-1] */
} station;

static qgemv_status station_open(station *st) {
  qgemv_status s;
  memset(st, 0, sizeof *st);
  if ((s = qgemv_open("cpu", &st->ctx)) != QGEMV_OK) return s;
  for (int i = 0; i < NWEIGHTS; i++)
    if ((s = qgemv_weight_upload(st->ctx, &weights[i].desc, &st->w[i])) != QGEMV_OK) return s;
  for (int t = 0; t < 2; t++)
    for (int m = 1; m <= 3; m++) {
      size_t e = tu_dtype_size((qgemv_dtype)t);
      if ((s = qgemv_tensor_new(st->ctx, (qgemv_dtype)t, m, TK, &st->x[t][m - 1])) != QGEMV_OK ||
          (s = qgemv_tensor_write(st->x[t][m - 1], xs[t], (size_t)m * TK * e)) != QGEMV_OK ||
          (s = qgemv_tensor_new(st->ctx, (qgemv_dtype)t, m, TN, &st->y[t][m - 1])) != QGEMV_OK)
        return s;
    }
  if ((s = qgemv_tensor_new(st->ctx, QGEMV_F32, 1, TK, &st->gamma)) != QGEMV_OK) return s;
  return qgemv_tensor_write(st->gamma, gamma_f, sizeof gamma_f);
}

static qgemv_status run_job(station *st, int j, void *out) {
  const job *jb = &jobs[j];
  qgemv_tensor *y = st->y[jb->yt][jb->m - 1];
  qgemv_rmsnorm norm = {.gamma = st->gamma, .eps = 1e-5f};
  qgemv_status s = qgemv_matvec(st->ctx, st->w[jb->weight], st->x[jb->xt][jb->m - 1], y, jb->norm ? &norm : NULL);
  if (s == QGEMV_OK) s = qgemv_tensor_read(y, out, (size_t)jb->m * TN * tu_dtype_size(jb->yt));
  return s;
}

typedef struct worker {
  int id, calls, mismatches, first_bad_job;
  qgemv_status status;
  char message[1024];
} worker;

static void *work(void *arg) {
  worker *wk = arg;
  station st;
  unsigned char out[3 * TN * 4];
  wk->first_bad_job = -1;
  wk->status = station_open(&st);
  for (int c = 0; c < wk->calls && wk->status == QGEMV_OK; c++) {
    int j = (c + wk->id * 5) % NJOBS; /* each thread its own order */
    wk->status = run_job(&st, j, out);
    if (wk->status == QGEMV_OK &&
        memcmp(out, expected[j], (size_t)jobs[j].m * TN * tu_dtype_size(jobs[j].yt)) != 0 &&
        wk->mismatches++ == 0)
      wk->first_bad_job = j;
  }
  if (wk->status != QGEMV_OK) snprintf(wk->message, sizeof wk->message, "%s", qgemv_last_error());
  qgemv_close(st.ctx);
  return NULL;
}

START_TEST(threads_bit_identical) {
  rng r = {.s = 81};
  const struct {
    qgemv_format f;
    int32_t g;
    dist_kind d;
  } wdefs[NWEIGHTS] = {{QGEMV_NF4, 64, DIST_NORMAL}, {QGEMV_Q2_0, 64, DIST_HEAVY}, {QGEMV_Q2_0, 128, DIST_LARGE}};
  for (int i = 0; i < NWEIGHTS; i++) tu_weight_make(&r, wdefs[i].d, wdefs[i].f, wdefs[i].g, TN, TK, &weights[i]);
  float xf[3 * TK];
  fill_random(&r, DIST_NORMAL, xf, 3 * TK);
  fill_random(&r, DIST_NORMAL, gamma_f, TK);
  xs[0] = tu_convert(xf, 3 * TK, QGEMV_F32);
  xs[1] = tu_convert(xf, 3 * TK, QGEMV_BF16);
  for (int j = 0; j < NJOBS; j++)
    jobs[j] = (job){.weight = j % NWEIGHTS, .m = 1 + j % 3, .xt = (qgemv_dtype)(j / 3 % 2),
                    .yt = (qgemv_dtype)(j / 6 % 2), .norm = j % 4 == 1};

  /* the single-thread answers */
  station one;
  EXPECT_OK(station_open(&one));
  for (int j = 0; j < NJOBS; j++) EXPECT_OK(run_job(&one, j, expected[j]));
  qgemv_close(one.ctx);

  int calls = quick ? 60 : 4000;
  worker wk[WORKERS];
  pthread_t th[WORKERS];
  for (int i = 0; i < WORKERS; i++) {
    wk[i] = (worker){.id = i, .calls = calls};
    ck_assert_int_eq(pthread_create(&th[i], NULL, work, &wk[i]), 0);
  }
  for (int i = 0; i < WORKERS; i++) pthread_join(th[i], NULL);
  long total = 0;
  for (int i = 0; i < WORKERS; i++) {
    EXPECT(wk[i].status == QGEMV_OK, "thread %d: %s (%s)", i, qgemv_status_str(wk[i].status), wk[i].message);
    EXPECT(wk[i].mismatches == 0, "thread %d: %d of %d results differ from one thread's (first: job %d)", i,
           wk[i].mismatches, calls, wk[i].first_bad_job);
    total += calls;
  }
  printf("hardening threads: %d threads x %d matvecs = %ld, all bit-identical to one thread\n", WORKERS, calls,
         total);
  for (int i = 0; i < NWEIGHTS; i++) tu_weight_free(&weights[i]);
  free(xs[0]);
  free(xs[1]);
}
END_TEST

/* ---- 3. resident set over cycles ---------------------------------------- */

static long resident_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (f == NULL) return -1;
  if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* Runs `cycle` warm times, then measured times; the resident set may grow
 * by at most 1 MB over the measured ones. */
static void expect_flat(void (*cycle)(long i, void *arg), void *arg, long warm, long measured, const char *what) {
  for (long i = 0; i < warm; i++) cycle(i, arg);
  long before = resident_bytes();
  for (long i = 0; i < measured; i++) cycle(i, arg);
  long after = resident_bytes();
  ck_assert_msg(before > 0 && after > 0, "cannot read /proc/self/statm");
  long delta = after - before;
  printf("hardening threads: %ld %s: resident set %+ld bytes (%ld -> %ld)%s\n", measured, what, delta, before, after,
         under_valgrind() ? " [valgrind: not asserted]" : "");
  if (!under_valgrind())
    EXPECT(delta <= (1L << 20), "%ld %s grew the resident set by %ld bytes (> 1 MB)", measured, what, delta);
}

static void open_close(long i, void *arg) {
  (void)i;
  (void)arg;
  qgemv_ctx *ctx = NULL;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  qgemv_close(ctx);
}

/* Closing a context frees what the caller left on it. */
static void open_use_close(long i, void *arg) {
  const tu_weight *hw = arg;
  qgemv_ctx *ctx = NULL;
  qgemv_weight *w;
  qgemv_tensor *x, *y;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  EXPECT_OK(qgemv_weight_upload(ctx, &hw->desc, &w));
  static const float zeros[4096];
  qgemv_dtype xt = (qgemv_dtype)(i & 1);
  EXPECT_OK(qgemv_tensor_new(ctx, xt, 1, hw->desc.k, &x));
  EXPECT_OK(qgemv_tensor_write(x, zeros, (size_t)hw->desc.k * tu_dtype_size(xt)));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, hw->desc.n, &y));
  if (i % 16 == 0) EXPECT_OK(qgemv_matvec(ctx, w, x, y, NULL)); /* grows the workspace */
  qgemv_close(ctx);
}

START_TEST(open_close_cycles) {
  long n = quick ? 300 : 10000;
  expect_flat(open_close, NULL, n / 10, n, "open/close cycles");
  rng r = {.s = 82};
  tu_weight hw;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, 32, 256, &hw);
  expect_flat(open_use_close, &hw, n / 10, n, "open/upload/tensors/close cycles (objects left to close)");
  tu_weight_free(&hw);
}
END_TEST

typedef struct upload_arg {
  qgemv_ctx *ctx;
  tu_weight *hw[2];
} upload_arg;

static void upload_free(long i, void *arg) {
  upload_arg *a = arg;
  qgemv_weight *w;
  EXPECT_OK(qgemv_weight_upload(a->ctx, &a->hw[i & 1]->desc, &w));
  qgemv_weight_free(w);
}

START_TEST(upload_free_cycles) {
  long n = quick ? 2000 : 100000;
  rng r = {.s = 83};
  tu_weight nf4, q2;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, 16, 256, &nf4);
  tu_weight_make(&r, DIST_NORMAL, QGEMV_Q2_0, 128, 16, 256, &q2);
  upload_arg a = {.hw = {&nf4, &q2}};
  EXPECT_OK(qgemv_open("cpu", &a.ctx));
  expect_flat(upload_free, &a, n / 10, n, "upload/free cycles");
  qgemv_close(a.ctx);
  tu_weight_free(&nf4);
  tu_weight_free(&q2);
}
END_TEST

int main(void) {
  /* one OpenMP thread per context: 8 contexts on a 2-core machine */
  setenv("QGEMV_NUM_THREADS", "1", 1);
  quick = tu_quick();
  Suite *s = suite_create("hardening_threads");
  TCase *tc = tcase_create("threads");
  tcase_set_timeout(tc, 300);
  /* first: no qgemv call may precede the loader race in this process */
  tcase_add_test(tc, concurrent_first_use);
  tcase_add_test(tc, threads_bit_identical);
  tcase_add_test(tc, open_close_cycles);
  tcase_add_test(tc, upload_free_cycles);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
