/*
 * Backend selection (spec and environment) and module loading.
 *
 * The module loader's result is cached per process, so every test must run
 * in a fresh process: main() forces Check's fork mode. Temporary plugin
 * directories are made once in the parent (an unchecked fixture) and
 * removed after all tests.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#define EXPECT_OK(call)                                                                                     \
  do {                                                                                                      \
    qgemv_status s_ = (call);                                                                               \
    if (s_ != QGEMV_OK) ck_abort_msg("line %d: %s: %s (%s)", __LINE__, #call, qgemv_status_str(s_),        \
                                     qgemv_last_error());                                                   \
  } while (0)

/* The last error is non-empty and contains needle (NULL: anything). */
static void expect_message(int line, const char *call, const char *needle) {
  const char *m = qgemv_last_error();
  if (m[0] == '\0' || (needle != NULL && strstr(m, needle) == NULL))
    ck_abort_msg("line %d: %s: message \"%s\" does not name \"%s\"", line, call, m, needle ? needle : "");
}

/* call returns `want` and its message contains `needle`. */
#define EXPECT_ERR(want, needle, call)                                                                      \
  do {                                                                                                      \
    qgemv_status s_ = (call);                                                                               \
    if (s_ != (want))                                                                                       \
      ck_abort_msg("line %d: %s returned %s, expected %s (%s)", __LINE__, #call, qgemv_status_str(s_),     \
                   qgemv_status_str(want), qgemv_last_error());                                             \
    expect_message(__LINE__, #call, needle);                                                                \
  } while (0)

/* ---- temporary plugin directories --------------------------------------- */

static char empty_dir[256];  /* holds nothing */
static char junk_dir[256];   /* holds a qgemv-cuda.so that is not an ELF file */
static char foreign_dir[256]; /* holds a real shared object without the entry */
static char junk_path[320], foreign_path[320];

static void make_dir(char *out, size_t size) {
  const char *tmp = getenv("TMPDIR");
  snprintf(out, size, "%s/qgemv-sel-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  ck_assert_msg(mkdtemp(out) != NULL, "mkdtemp %s failed", out);
}

static void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  ck_assert_msg(in && out, "cannot copy %s to %s", from, to);
  char buf[1 << 16];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, in)) > 0) ck_assert(fwrite(buf, 1, got, out) == got);
  fclose(in);
  fclose(out);
}

static void dirs_setup(void) {
  make_dir(empty_dir, sizeof empty_dir);
  make_dir(junk_dir, sizeof junk_dir);
  make_dir(foreign_dir, sizeof foreign_dir);
  snprintf(junk_path, sizeof junk_path, "%s/qgemv-cuda.so", junk_dir);
  snprintf(foreign_path, sizeof foreign_path, "%s/qgemv-cuda.so", foreign_dir);
  FILE *f = fopen(junk_path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("this is not a shared object\n", f);
  fclose(f);
  /* any real shared object will do: the one that holds cos() (libm) */
  Dl_info info;
  ck_assert_msg(dladdr((void *)&cos, &info) && info.dli_fname, "dladdr(cos) failed");
  copy_file(info.dli_fname, foreign_path);
}

static void dirs_teardown(void) {
  unlink(junk_path);
  unlink(foreign_path);
  rmdir(junk_dir);
  rmdir(foreign_dir);
  rmdir(empty_dir);
}

/* A clean selection environment with the given plugin path. */
static void env_reset(const char *plugin_path) {
  unsetenv("QGEMV_BACKEND");
  unsetenv("QGEMV_DEVICE");
  unsetenv("QGEMV_CPU_ISA");
  unsetenv("QGEMV_NUM_THREADS");
  unsetenv("QGEMV_CPU_BIND");
  setenv("QGEMV_PLUGIN_PATH", plugin_path, 1);
}

/* Opens spec, which must succeed on the named backend; closes it. */
static void expect_opens(const char *spec, const char *backend) {
  qgemv_ctx *ctx = NULL;
  qgemv_status s = qgemv_open(spec, &ctx);
  ck_assert_msg(s == QGEMV_OK, "open(%s): %s (%s)", spec ? spec : "NULL", qgemv_status_str(s), qgemv_last_error());
  ck_assert_str_eq(qgemv_ctx_backend(ctx), backend);
  qgemv_close(ctx);
}

/* The CUDA backend was not usable with `dir` as the plugin path: either no
 * module (NO_BACKEND naming the module file and the searched directory),
 * or an installed one and no device (NO_DEVICE saying so). */
static void expect_cuda_unusable(qgemv_status s, const char *dir) {
  const char *m = qgemv_last_error();
  if (s == QGEMV_ERR_NO_BACKEND) {
    ck_assert_msg(strstr(m, "qgemv-cuda.so") != NULL, "message does not name the module: %s", m);
    ck_assert_msg(strstr(m, dir) != NULL, "message does not name the searched %s: %s", dir, m);
  } else {
    ck_assert_msg(s == QGEMV_ERR_NO_DEVICE, "cuda: %s (%s)", qgemv_status_str(s), m);
    ck_assert_msg(strstr(m, "device") || strstr(m, "driver") || strstr(m, "GPU"), "no reason given: %s", m);
  }
}

/* ---- specs -------------------------------------------------------------- */

START_TEST(spec_cpu) {
  env_reset(empty_dir);
  expect_opens("cpu", "cpu");
  expect_opens("cpu:0", "cpu");
  qgemv_ctx *ctx = NULL;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  ck_assert_int_eq(qgemv_ctx_device(ctx), 0);
  qgemv_device_info info;
  EXPECT_OK(qgemv_ctx_info(ctx, &info));
  ck_assert_str_eq(info.backend, "cpu");
  ck_assert(info.isa[0] != '\0' && info.threads >= 1);
  /* Host memory is the kernel's MemTotal, read here from /proc. */
  unsigned long long mem_kb = 0;
  FILE *meminfo = fopen("/proc/meminfo", "r");
  if (meminfo != NULL) {
    if (fscanf(meminfo, "MemTotal: %llu kB", &mem_kb) != 1) mem_kb = 0;
    fclose(meminfo);
  }
  if (mem_kb > 0)
    ck_assert_msg(info.memory_bytes == (uint64_t)mem_kb * 1024u, "memory_bytes %llu, /proc/meminfo MemTotal %llu kB",
                  (unsigned long long)info.memory_bytes, mem_kb);
  else
    ck_assert_msg(info.memory_bytes > 0, "no host memory size");
  qgemv_close(ctx);
  ctx = (qgemv_ctx *)&ctx;
  EXPECT_ERR(QGEMV_ERR_NO_DEVICE, NULL, qgemv_open("cpu:1", &ctx));
  ck_assert_ptr_null(ctx);
}
END_TEST

/* "auto" without a usable GPU is the CPU, quietly: the caller's last
 * error stays as it was. */
START_TEST(spec_auto) {
  env_reset(empty_dir);
  int d;
  qgemv_backend_probe("zz-before-auto", &d);
  qgemv_ctx *ctx = NULL;
  EXPECT_OK(qgemv_open("auto", &ctx));
  const char *be = qgemv_ctx_backend(ctx);
  if (strcmp(be, "cpu") != 0) { /* only where a module is installed and sees a GPU */
    ck_assert_str_eq(be, "cuda");
    ck_assert_int_eq(qgemv_backend_probe("cuda", &d), QGEMV_OK);
  }
  ck_assert_msg(strstr(qgemv_last_error(), "zz-before-auto") != NULL,
                "a successful auto replaced the last error with \"%s\"", qgemv_last_error());
  qgemv_close(ctx);
  /* NULL spec, QGEMV_BACKEND unset or empty: auto */
  expect_opens(NULL, be);
  setenv("QGEMV_BACKEND", "", 1);
  expect_opens(NULL, be);
}
END_TEST

START_TEST(spec_unknown) {
  env_reset(empty_dir);
  qgemv_ctx *ctx = (qgemv_ctx *)&ctx;
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "tpu", qgemv_open("tpu", &ctx));
  ck_assert_ptr_null(ctx);
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "cpux", qgemv_open("cpux", &ctx));
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "opencl", qgemv_open("opencl:0", &ctx));
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "CPU", qgemv_open("CPU", &ctx));
  setenv("QGEMV_BACKEND", "vulkan", 1);
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "vulkan", qgemv_open(NULL, &ctx));
}
END_TEST

/* An unknown name is NO_BACKEND however long it is (the parser's name
 * buffer is an implementation detail). */
START_TEST(spec_unknown_long_name) {
  env_reset(empty_dir);
  qgemv_ctx *ctx = NULL;
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "thread-only-backend", qgemv_open("thread-only-backend", &ctx));
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "intel-level-zero", qgemv_open("intel-level-zero:0", &ctx));
  int devices;
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "thread-only-backend", qgemv_backend_probe("thread-only-backend", &devices));
}
END_TEST

START_TEST(spec_cuda_without_module) {
  env_reset(empty_dir);
  qgemv_ctx *ctx = (qgemv_ctx *)&ctx;
  qgemv_status s = qgemv_open("cuda", &ctx);
  if (s == QGEMV_OK) { /* an installed module and a GPU: nothing to test */
    qgemv_close(ctx);
    return;
  }
  ck_assert_ptr_null(ctx);
  expect_cuda_unusable(s, empty_dir);
  /* the cached refusal is reported again, for cuda:0 and the probe */
  expect_cuda_unusable(qgemv_open("cuda:0", &ctx), empty_dir);
  int devices = -1;
  expect_cuda_unusable(qgemv_backend_probe("cuda", &devices), empty_dir);
  /* a refused cuda does not stop auto or cpu */
  expect_opens("auto", "cpu");
  expect_opens("cpu", "cpu");
}
END_TEST

/* Device indexes: malformed ones are INVALID_ARG before any loading. */
START_TEST(spec_bad_device) {
  env_reset(empty_dir);
  qgemv_ctx *ctx = NULL;
  static const char *const specs[] = {"cuda:x", "cuda:", "cuda:-1", "cuda:1:2", "cuda:99999999999", "cpu:x",
                                      "cpu:0x1", ":0"};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    qgemv_status s = qgemv_open(specs[i], &ctx);
    ck_assert_msg(s == QGEMV_ERR_INVALID_ARG, "open(%s): %s (%s)", specs[i], qgemv_status_str(s),
                  qgemv_last_error());
    ck_assert_msg(qgemv_last_error()[0] != '\0', "open(%s): no message", specs[i]);
  }
  static const char *const devs[] = {"x", "-1", "1x", " 1", "0.5"};
  for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
    setenv("QGEMV_DEVICE", devs[i], 1);
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, "QGEMV_DEVICE", qgemv_open("cuda", &ctx));
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, "QGEMV_DEVICE", qgemv_open(NULL, &ctx));
  }
  /* QGEMV_DEVICE names a GPU: the one-device CPU backend ignores it, so a
   * job script that sets it per rank still runs on CPU-only nodes. */
  setenv("QGEMV_DEVICE", "x", 1);
  expect_opens("cpu", "cpu");
  setenv("QGEMV_DEVICE", "3", 1);
  expect_opens("cpu", "cpu");
  setenv("QGEMV_DEVICE", "0", 1);
  expect_opens("cpu", "cpu");
  setenv("QGEMV_DEVICE", "", 1);
  expect_opens("cpu", "cpu");
}
END_TEST

/* ---- environment -------------------------------------------------------- */

START_TEST(env_backend) {
  env_reset(empty_dir);
  setenv("QGEMV_BACKEND", "cpu", 1);
  expect_opens(NULL, "cpu");
  setenv("QGEMV_BACKEND", "cpu:0", 1);
  expect_opens(NULL, "cpu");
  qgemv_ctx *ctx = NULL;
  setenv("QGEMV_BACKEND", "bogus", 1);
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "bogus", qgemv_open(NULL, &ctx));
  expect_opens("cpu", "cpu"); /* an explicit spec wins over the environment */
  setenv("QGEMV_BACKEND", "cuda:x", 1);
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, "cuda:x", qgemv_open(NULL, &ctx));
  setenv("QGEMV_BACKEND", "cuda", 1);
  qgemv_status s = qgemv_open(NULL, &ctx);
  if (s == QGEMV_OK)
    qgemv_close(ctx);
  else
    expect_cuda_unusable(s, empty_dir);
}
END_TEST

START_TEST(env_cpu_isa) {
  env_reset(empty_dir);
  qgemv_ctx *ctx = NULL;
  setenv("QGEMV_CPU_ISA", "bogus", 1);
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, "bogus", qgemv_open("cpu", &ctx));
  EXPECT_ERR(QGEMV_ERR_INVALID_ARG, "bogus", qgemv_open("auto", &ctx));
#if defined(__x86_64__) || defined(__i386__)
  setenv("QGEMV_CPU_ISA", "neon", 1);
  EXPECT_ERR(QGEMV_ERR_UNSUPPORTED, "neon", qgemv_open("cpu", &ctx));
#elif defined(__aarch64__)
  setenv("QGEMV_CPU_ISA", "avx2", 1);
  EXPECT_ERR(QGEMV_ERR_UNSUPPORTED, "avx2", qgemv_open("cpu", &ctx));
#endif
  static const char *const levels[] = {"ref", "scalar"}; /* always present */
  for (int i = 0; i < 2; i++) {
    setenv("QGEMV_CPU_ISA", levels[i], 1);
    EXPECT_OK(qgemv_open("cpu", &ctx));
    qgemv_device_info info;
    EXPECT_OK(qgemv_ctx_info(ctx, &info));
    ck_assert_str_eq(info.isa, levels[i]);
    qgemv_close(ctx);
  }
  setenv("QGEMV_CPU_ISA", "", 1); /* empty: the best level */
  EXPECT_OK(qgemv_open("cpu", &ctx));
  qgemv_device_info info;
  EXPECT_OK(qgemv_ctx_info(ctx, &info));
  ck_assert_msg(strcmp(info.isa, "ref") != 0 && info.isa[0] != '\0', "best level is '%s'", info.isa);
  qgemv_close(ctx);
}
END_TEST

START_TEST(env_num_threads) {
  env_reset(empty_dir);
  qgemv_ctx *ctx = NULL;
  static const char *const bad[] = {"0", "-1", "abc", "2x", "1.5", "99999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("QGEMV_NUM_THREADS", bad[i], 1);
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, "QGEMV_NUM_THREADS", qgemv_open("cpu", &ctx));
  }
  setenv("QGEMV_NUM_THREADS", "3", 1);
  EXPECT_OK(qgemv_open("cpu", &ctx));
  qgemv_device_info info;
  EXPECT_OK(qgemv_ctx_info(ctx, &info));
  ck_assert_int_eq(info.threads, 3);
  qgemv_close(ctx);
  setenv("QGEMV_NUM_THREADS", "", 1); /* empty: the default */
  expect_opens("cpu", "cpu");
}
END_TEST

/* A 64 x 256 NF4 matvec on a fresh "cpu" context (QGEMV_CPU_BIND as set);
 * y and the context's locality string out. */
/* avx512amx is the default where it is usable, but Linux grants its tile
 * state only if every signal stack of the process can hold the larger
 * frame: with a 4 KiB sigaltstack it refuses. Then QGEMV_CPU_ISA=avx512amx
 * must fail saying why, and the default must open on the next level,
 * avx512vnni. Runs for real where the CPU has AMX (the GPU machine's
 * host); elsewhere, or where the permission is not refused (an emulated
 * build asks nothing), it says so and checks only that the default opens. */
START_TEST(env_cpu_isa_amx_refused) {
  env_reset(empty_dir);
  static char small[4096];
  stack_t ss = {.ss_sp = small, .ss_size = sizeof small, .ss_flags = 0};
  ck_assert_msg(sigaltstack(&ss, NULL) == 0, "sigaltstack failed");
  qgemv_ctx *ctx = NULL;
  setenv("QGEMV_CPU_ISA", "avx512amx", 1);
  qgemv_status s = qgemv_open("cpu", &ctx);
  char why[256];
  snprintf(why, sizeof why, "%s", s == QGEMV_OK ? "opened" : qgemv_last_error());
  const bool refused = s == QGEMV_ERR_UNSUPPORTED && strstr(why, "refused") != NULL;
  if (s == QGEMV_OK) qgemv_close(ctx);
  unsetenv("QGEMV_CPU_ISA");
  EXPECT_OK(qgemv_open("cpu", &ctx));
  qgemv_device_info info;
  EXPECT_OK(qgemv_ctx_info(ctx, &info));
  qgemv_close(ctx);
  if (!refused) {
    fprintf(stderr, "env_cpu_isa_amx_refused: the tile state was not refused here (%s: %s); default %s, the "
            "fallback not exercised\n", qgemv_status_str(s), why, info.isa);
    return;
  }
  ck_assert_msg(strstr(why, "avx512amx") != NULL && strstr(why, "sigaltstack") != NULL,
                "the refusal does not name the level and the cause: %s", why);
  ck_assert_msg(strcmp(info.isa, "avx512vnni") == 0, "refused the tiles, the default opened %s, want avx512vnni",
                info.isa);
}
END_TEST

static void bind_matvec(const tu_weight *w, const float *x, float *y, char *locality, size_t size) {
  qgemv_ctx *ctx = NULL;
  EXPECT_OK(qgemv_open("cpu", &ctx));
  qgemv_device_info info;
  EXPECT_OK(qgemv_ctx_info(ctx, &info));
  snprintf(locality, size, "%s", info.locality);
  qgemv_weight *dw = NULL;
  qgemv_tensor *tx = NULL, *ty = NULL;
  EXPECT_OK(qgemv_weight_upload(ctx, &w->desc, &dw));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, w->desc.k, &tx));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, w->desc.n, &ty));
  EXPECT_OK(qgemv_tensor_write(tx, x, sizeof(float) * (size_t)w->desc.k));
  EXPECT_OK(qgemv_matvec(ctx, dw, tx, ty, NULL));
  EXPECT_OK(qgemv_tensor_read(ty, y, sizeof(float) * (size_t)w->desc.n));
  qgemv_tensor_free(tx);
  qgemv_tensor_free(ty);
  qgemv_weight_free(dw);
  qgemv_close(ctx);
}

/* The CPU set of OpenMP thread 1 of a 2-thread team from this thread: the
 * library's worker, when the runtime reuses its pool (libgomp does). */
static bool worker_cpus(cpu_set_t *out) {
  bool got = false;
#ifdef _OPENMP
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1) got = sched_getaffinity(0, sizeof *out, out) == 0;
  }
#else
  (void)out;
#endif
  return got;
}

START_TEST(env_cpu_bind) {
  env_reset(empty_dir);
  qgemv_ctx *ctx = NULL;
  static const char *const bad[] = {"None", "core", "0", "spread"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("QGEMV_CPU_BIND", bad[i], 1);
    EXPECT_ERR(QGEMV_ERR_INVALID_ARG, "QGEMV_CPU_BIND", qgemv_open("cpu", &ctx));
  }
  rng r = {.s = 0xb1d};
  tu_weight w;
  tu_weight_make(&r, DIST_NORMAL, QGEMV_NF4, 64, 64, 256, &w);
  float x[256], y_cores[64], y_none[64];
  for (int i = 0; i < 256; i++) x[i] = (float)rng_normal(&r);
  char loc[128];
  setenv("QGEMV_NUM_THREADS", "2", 1);
  setenv("QGEMV_CPU_BIND", "cores", 1);
  bind_matvec(&w, x, y_cores, loc, sizeof loc);
  ck_assert_msg(strstr(loc, "QGEMV_CPU_BIND") == NULL, "cores: \"%s\"", loc);
  cpu_set_t caller, bound, after;
  ck_assert_int_eq(sched_getaffinity(0, sizeof caller, &caller), 0);
  const bool was_bound = worker_cpus(&bound) && CPU_COUNT(&bound) < CPU_COUNT(&caller);

  setenv("QGEMV_CPU_BIND", "none", 1);
  bind_matvec(&w, x, y_none, loc, sizeof loc);
  ck_assert_msg(strstr(loc, "unbound (QGEMV_CPU_BIND=none)") != NULL, "none: \"%s\"", loc);
  ck_assert_msg(memcmp(y_cores, y_none, sizeof y_none) == 0, "y differs between QGEMV_CPU_BIND=cores and none");
  /* The worker the "cores" context bound runs anywhere again. */
  if (was_bound) {
    ck_assert(worker_cpus(&after));
    ck_assert_msg(CPU_EQUAL(&after, &caller), "QGEMV_CPU_BIND=none left the worker on %d of the process's %d CPUs",
                  CPU_COUNT(&after), CPU_COUNT(&caller));
  } else {
    fprintf(stderr, "env_cpu_bind: the worker was not bound narrower than the process (one core, OMP_PROC_BIND, no "
                    "OpenMP, or a runtime that does not reuse its pool): the release is not checked here\n");
  }
  setenv("QGEMV_CPU_BIND", "", 1); /* empty: the default */
  expect_opens("cpu", "cpu");
  tu_weight_free(&w);
}
END_TEST

/* ---- registry, version -------------------------------------------------- */

START_TEST(backend_list_and_probe) {
  env_reset(empty_dir);
  /* The built-in cpu first, then the modules discovery found (here: none
   * in the plugin path; the install directory may hold some), each once,
   * each known to the probe (usable or with its reason, never "unknown"). */
  int count = qgemv_backend_count();
  ck_assert_int_ge(count, 1);
  ck_assert_str_eq(qgemv_backend_name(0), "cpu");
  bool cuda = false;
  for (int i = 0; i < count; i++) {
    const char *name = qgemv_backend_name(i);
    ck_assert_ptr_nonnull(name);
    cuda |= strcmp(name, "cuda") == 0;
    for (int j = 0; j < i; j++) ck_assert_str_ne(name, qgemv_backend_name(j));
    int d = 0;
    if (qgemv_backend_probe(name, &d) != QGEMV_OK)
      ck_assert_msg(strstr(qgemv_last_error(), "unknown backend") == NULL, "listed %s is unknown to the probe: %s",
                    name, qgemv_last_error());
  }
  ck_assert_ptr_null(qgemv_backend_name(-1));
  ck_assert_ptr_null(qgemv_backend_name(count));
  int devices = -1;
  EXPECT_OK(qgemv_backend_probe("cpu", &devices));
  ck_assert_int_eq(devices, 1);
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, "nonesuch", qgemv_backend_probe("nonesuch", &devices));
  qgemv_status s = qgemv_backend_probe("cuda", &devices);
  if (s == QGEMV_OK)
    ck_assert_int_ge(devices, 1);
  else
    expect_cuda_unusable(s, empty_dir);
  /* an unlisted cuda is unknown, and the message lists what is there */
  if (!cuda) ck_assert_msg(strstr(qgemv_last_error(), "unknown backend 'cuda': available: cpu") != NULL,
                           "%s", qgemv_last_error());
}
END_TEST

START_TEST(version) {
  ck_assert_str_eq(qgemv_version(), QGEMV_VERSION_STRING);
  ck_assert_int_eq(qgemv_version_number(), QGEMV_VERSION_NUMBER);
  char expect[32];
  snprintf(expect, sizeof expect, "%d.%d.%d", QGEMV_VERSION_MAJOR, QGEMV_VERSION_MINOR, QGEMV_VERSION_PATCH);
  ck_assert_str_eq(QGEMV_VERSION_STRING, expect);
  ck_assert_ptr_nonnull(qgemv_build_config());
  ck_assert(qgemv_build_config()[0] != '\0');
}
END_TEST

/* ---- broken modules ----------------------------------------------------- */

/* A qgemv-cuda.so that is not a shared object: NO_BACKEND naming its path;
 * auto still quietly takes the CPU. */
START_TEST(module_not_elf) {
  env_reset(junk_dir);
  qgemv_ctx *ctx = (qgemv_ctx *)&ctx;
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, junk_path, qgemv_open("cuda", &ctx));
  ck_assert_ptr_null(ctx);
  int devices;
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, junk_path, qgemv_backend_probe("cuda", &devices));
  expect_opens("auto", "cpu");
}
END_TEST

/* Same, with auto as the first call in the process. */
START_TEST(module_not_elf_auto_first) {
  env_reset(junk_dir);
  expect_opens("auto", "cpu");
  qgemv_ctx *ctx = NULL;
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, junk_path, qgemv_open("cuda", &ctx));
}
END_TEST

/* A real shared object without the module entry symbol: refused, naming
 * its path. */
START_TEST(module_without_entry) {
  env_reset(foreign_dir);
  qgemv_ctx *ctx = NULL;
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, foreign_path, qgemv_open("cuda", &ctx));
  expect_opens("auto", "cpu");
}
END_TEST

/* The first directory of the plugin path that holds the module wins: the
 * junk module behind an empty directory is still found and refused. */
START_TEST(module_search_order) {
  char path[3 * sizeof empty_dir + 8];
  snprintf(path, sizeof path, "%s::%s:%s", empty_dir, junk_dir, foreign_dir);
  env_reset(path);
  qgemv_ctx *ctx = NULL;
  EXPECT_ERR(QGEMV_ERR_NO_BACKEND, junk_path, qgemv_open("cuda", &ctx));
}
END_TEST

static Suite *selection_suite(void) {
  Suite *s = suite_create("selection");
  TCase *spec = tcase_create("spec");
  tcase_set_timeout(spec, 60); /* the 4 s default is tight on a loaded machine */
  tcase_add_unchecked_fixture(spec, dirs_setup, dirs_teardown);
  tcase_add_test(spec, spec_cpu);
  tcase_add_test(spec, spec_auto);
  tcase_add_test(spec, spec_unknown);
  tcase_add_test(spec, spec_unknown_long_name);
  tcase_add_test(spec, spec_cuda_without_module);
  tcase_add_test(spec, spec_bad_device);
  tcase_add_test(spec, env_backend);
  tcase_add_test(spec, env_cpu_isa);
  tcase_add_test(spec, env_num_threads);
  tcase_add_test(spec, env_cpu_bind);
  tcase_add_test(spec, env_cpu_isa_amx_refused);
  tcase_add_test(spec, backend_list_and_probe);
  tcase_add_test(spec, version);
  tcase_add_test(spec, module_not_elf);
  tcase_add_test(spec, module_not_elf_auto_first);
  tcase_add_test(spec, module_without_entry);
  tcase_add_test(spec, module_search_order);
  suite_add_tcase(s, spec);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(selection_suite());
  /* the module loader caches its result per process: one process per test */
  srunner_set_fork_status(sr, CK_FORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
