/*
 * Loading code safely (issue 6, item 6; issue 10; DESIGN.md s.6).
 *
 * Discovery takes every qgemv-NAME.so in each directory of
 * $QGEMV_PLUGIN_PATH, in order, then in the install directory; the first
 * file of a name wins and the built-in cpu comes first of all. The loader
 * must check a module's ABI before calling anything in it, and report every
 * refusal with the path. Each case here runs in a fresh child process
 * (discovery runs once per process), forked whether or not Check forks:
 * the child sets its environment before its first qgemv call, makes the
 * calls, and sends what it saw to the parent.
 *
 * The refused modules are real shared objects built with this suite
 * (tests/fakemod/fakemod.c): one reporting ABI 999, one whose vtable says
 * 999, one returning no description, one whose description has no vtable,
 * one without the entry symbol. Their vtable functions abort, so a loader
 * that calls into a module before checking its ABI crashes the child and
 * fails the case. Other files (not an ELF object, empty, a directory,
 * wrong names) are made in a temporary directory.
 *
 * The modules that load (tests/fakemod/fakedev.c) have auto priorities 20
 * (fakehi, faketwin), 10 (fakelo) and 0 (fakemanual), and see as many
 * devices as $QGEMV_TEST_DEVICES_<name> says; one named cpu aborts when
 * loaded, and copies of it under other names prove that a file is never
 * opened.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"
#include "qgemv.h"

#ifndef HARD_BUILDDIR
#error "HARD_BUILDDIR (the build tree, where tests/fakemod-*/.libs are) must be defined"
#endif

/* ---- a scratch directory -------------------------------------------------- */

static char scratch[256];

static void scratch_setup(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(scratch, sizeof scratch, "%s/qgemv-loader-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  ck_assert_msg(mkdtemp(scratch) != NULL, "mkdtemp: %s", strerror(errno));
}

/* Removes the scratch tree (two levels deep at most, as made here). */
static void remove_tree(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void scratch_teardown(void) {
  if (scratch[0]) remove_tree(scratch);
  scratch[0] = '\0';
}

/* scratch/<rel>, made as a directory */
static const char *subdir(const char *rel, char *buf, size_t size) {
  snprintf(buf, size, "%s/%s", scratch, rel);
  ck_assert_msg(mkdir(buf, 0755) == 0, "mkdir %s: %s", buf, strerror(errno));
  return buf;
}

static void write_file(const char *path, const void *bytes, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  ck_assert_msg(fd >= 0, "create %s: %s", path, strerror(errno));
  ck_assert_msg(n == 0 || write(fd, bytes, n) == (ssize_t)n, "write %s", path);
  close(fd);
}

static void copy_file(const char *from, const char *to) {
  FILE *f = fopen(from, "rb");
  ck_assert_msg(f != NULL, "open %s: %s (were the fake modules built?)", from, strerror(errno));
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  ck_assert_msg(n > 0 && n < sizeof buf && feof(f), "read %s", from);
  fclose(f);
  write_file(to, buf, n);
}

/* The built fake module of one kind: its directory and file. */
static const char *fake_dir(const char *kind, char *buf, size_t size) {
  snprintf(buf, size, "%s/tests/fakemod-%s/.libs", HARD_BUILDDIR, kind);
  return buf;
}

/* ---- one case in a fresh process ----------------------------------------- */

/* Runs fn in a child with QGEMV_PLUGIN_PATH=path (unset when NULL) and the
 * "NAME=VALUE" strings of env (NULL-terminated, may be NULL) set; fn fills
 * `size` bytes at out, which come back to the parent. */
static void in_child(const char *path, char *const *env, void (*fn)(void *out, const void *arg), const void *arg,
                     void *out, size_t size) {
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    if (path)
      setenv("QGEMV_PLUGIN_PATH", path, 1);
    else
      unsetenv("QGEMV_PLUGIN_PATH");
    for (char *const *e = env; e && *e; e++) putenv(*e);
    memset(out, 0, size);
    fn(out, arg);
    _exit(write(fds[1], out, size) == (ssize_t)size ? 0 : 3);
  }
  close(fds[1]);
  memset(out, 0, size);
  ssize_t got = read(fds[0], out, size);
  close(fds[0]);
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == (ssize_t)size,
         "the child with QGEMV_PLUGIN_PATH=%.200s died (status 0x%x): the loader crashed, called into a module "
         "before checking its ABI, or opened a file it must pass over",
         path ? path : "(unset)", status);
}

typedef struct outcome {
  int probe, open_cuda, open_auto;
  char message[1024], cuda_message[1024], auto_backend[16];
} outcome;

/* Probes "cuda", opens "cuda" and "auto". */
static void cuda_calls(void *out, const void *unused) {
  (void)unused;
  outcome *o = out;
  int devices = 0;
  o->probe = qgemv_backend_probe("cuda", &devices);
  snprintf(o->message, sizeof o->message, "%s", qgemv_last_error());
  qgemv_ctx *ctx = NULL;
  o->open_cuda = qgemv_open("cuda", &ctx);
  snprintf(o->cuda_message, sizeof o->cuda_message, "%s", qgemv_last_error());
  qgemv_close(ctx);
  ctx = NULL;
  o->open_auto = qgemv_open("auto", &ctx);
  if (ctx) snprintf(o->auto_backend, sizeof o->auto_backend, "%s", qgemv_ctx_backend(ctx));
  qgemv_close(ctx);
}

static outcome run_fresh(const char *path) {
  outcome o;
  in_child(path, NULL, cuda_calls, NULL, &o, sizeof o);
  return o;
}

/* The module at `path` was refused with `want`, the message naming the
 * file and containing `why`; "cuda" fails the same way and "auto" quietly
 * takes the CPU. */
static void expect_refused(const outcome *o, qgemv_status want, const char *file, const char *why, const char *what) {
  EXPECT(o->probe == want, "%s: probe gave %s, expected %s (%s)", what, qgemv_status_str(o->probe),
         qgemv_status_str(want), o->message);
  EXPECT(file == NULL || strstr(o->message, file) != NULL, "%s: message \"%s\" does not name %s", what, o->message,
         file);
  EXPECT(why == NULL || strstr(o->message, why) != NULL, "%s: message \"%s\" does not say \"%s\"", what, o->message,
         why);
  /* "built for ABI 1 but this libqgemv needs ABI 1" would tell the user
   * nothing: a refusal for the ABI must name two different numbers */
  const char *built = strstr(o->message, "ABI ");
  const char *needs = built ? strstr(built + 4, "ABI ") : NULL;
  if (built && needs)
    EXPECT(strtoul(built + 4, NULL, 10) != strtoul(needs + 4, NULL, 10),
           "%s: the refusal \"%s\" names the same ABI twice: it does not say what is wrong", what, o->message);
  EXPECT(o->open_cuda == want && strcmp(o->cuda_message, o->message) == 0,
         "%s: qgemv_open(\"cuda\") gave %s (%s), not the probe's refusal", what, qgemv_status_str(o->open_cuda),
         o->cuda_message);
  EXPECT(o->open_auto == QGEMV_OK && strcmp(o->auto_backend, "cpu") == 0,
         "%s: qgemv_open(\"auto\") gave %s on \"%s\" instead of falling back to the CPU", what,
         qgemv_status_str(o->open_auto), o->auto_backend);
}

/* ---- the cases ----------------------------------------------------------- */

static const struct {
  const char *kind;
  qgemv_status want;
  const char *why;
} fakes[] = {
    {"abi", QGEMV_ERR_ABI, "ABI 999"},
    {"vtable", QGEMV_ERR_ABI, "999"}, /* the number the module's vtable carries */
    {"null", QGEMV_ERR_ABI, "ABI"},
    {"noentry", QGEMV_ERR_NO_BACKEND, "qgemv_module_entry"},
};

START_TEST(fake_modules_refused) {
  char dir[512], file[600];
  fake_dir(fakes[_i].kind, dir, sizeof dir);
  snprintf(file, sizeof file, "%s/qgemv-cuda.so", dir);
  outcome o = run_fresh(dir);
  expect_refused(&o, fakes[_i].want, file, fakes[_i].why, fakes[_i].kind);
}
END_TEST

/* Files called qgemv-cuda.so that are not loadable objects. */
START_TEST(not_a_module) {
  scratch_setup();
  char d[400], f[480];
  static const char text[] = "#!/bin/sh\necho this is not a shared object\n";
  static const unsigned char elf_junk[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0xde, 0xad, 0xbe, 0xef};

  snprintf(f, sizeof f, "%s/qgemv-cuda.so", subdir("text", d, sizeof d));
  write_file(f, text, sizeof text - 1);
  outcome o = run_fresh(d);
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, f, "could not be loaded", "a text file");

  snprintf(f, sizeof f, "%s/qgemv-cuda.so", subdir("empty", d, sizeof d));
  write_file(f, "", 0);
  o = run_fresh(d);
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, f, "could not be loaded", "an empty file");

  snprintf(f, sizeof f, "%s/qgemv-cuda.so", subdir("elfjunk", d, sizeof d));
  write_file(f, elf_junk, sizeof elf_junk);
  o = run_fresh(d);
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, f, "could not be loaded", "a truncated ELF header");

  snprintf(f, sizeof f, "%s/qgemv-cuda.so", subdir("dir", d, sizeof d));
  ck_assert_int_eq(mkdir(f, 0755), 0);
  o = run_fresh(d);
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, f, "could not be loaded", "a directory named qgemv-cuda.so");

  /* a symlink loop cannot be opened: refused or passed over, never a crash */
  snprintf(f, sizeof f, "%s/qgemv-cuda.so", subdir("loop", d, sizeof d));
  ck_assert_int_eq(symlink(f, f), 0);
  o = run_fresh(d);
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, NULL, NULL, "a symlink loop");
  scratch_teardown();
}
END_TEST

/* Only the exact name loads: the ABI-999 module under other names must be
 * passed over ("not found"), never loaded (which would say "ABI 999"). */
START_TEST(only_exact_name) {
  scratch_setup();
  char abi[512], src[600], d[400], f[480];
  snprintf(src, sizeof src, "%s/qgemv-cuda.so", fake_dir("abi", abi, sizeof abi));
  static const char *const names[] = {"libqgemv-cuda.so", "qgemv-cuda.so.1", "qgemv-cuda.so.bak", "qgemv_cuda.so",
                                      "QGEMV-CUDA.SO",    "qgemv-cuda",      "qgemv-cuda.so~",    "cuda.so",
                                      " qgemv-cuda.so",   "qgemv-cuda.so "};
  subdir("names", d, sizeof d);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(f, sizeof f, "%s/%s", d, names[i]);
    copy_file(src, f);
  }
  char expected[480];
  snprintf(expected, sizeof expected, "%s/qgemv-cuda.so", d);
  outcome o = run_fresh(d);
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, expected, "not found", "modules under other names");
  EXPECT(strstr(o.message, "999") == NULL, "a module under another name was loaded: %s", o.message);
  scratch_teardown();
}
END_TEST

/* The path is searched in order, the first qgemv-cuda.so found decides
 * (a refusal is not skipped over), and empty or overlong entries are
 * passed over without harm. */
START_TEST(search_order) {
  scratch_setup();
  char abi[512], noentry[512], empty[400], path[1600], fa[600], fn[600];
  fake_dir("abi", abi, sizeof abi);
  fake_dir("noentry", noentry, sizeof noentry);
  snprintf(fa, sizeof fa, "%s/qgemv-cuda.so", abi);
  snprintf(fn, sizeof fn, "%s/qgemv-cuda.so", noentry);
  subdir("empty", empty, sizeof empty);

  snprintf(path, sizeof path, "%s:%s:%s", empty, abi, noentry);
  outcome o = run_fresh(path);
  expect_refused(&o, QGEMV_ERR_ABI, fa, "ABI 999", "empty:abi:noentry");

  snprintf(path, sizeof path, "%s:%s", noentry, abi);
  o = run_fresh(path);
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, fn, "qgemv_module_entry", "noentry:abi");

  snprintf(path, sizeof path, "::%s::", abi);
  o = run_fresh(path);
  expect_refused(&o, QGEMV_ERR_ABI, fa, "ABI 999", "empty entries around abi");

  o = run_fresh("");
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, NULL, "not found", "an empty QGEMV_PLUGIN_PATH");
  o = run_fresh(":::");
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, NULL, "not found", "QGEMV_PLUGIN_PATH of colons");

  /* an entry longer than any path, then the module */
  size_t huge = 70000;
  char *longp = malloc(huge + sizeof abi + 2);
  ck_assert_ptr_nonnull(longp);
  memset(longp, 'a', huge);
  longp[0] = '/';
  snprintf(longp + huge, sizeof abi + 2, ":%s", abi);
  o = run_fresh(longp);
  expect_refused(&o, QGEMV_ERR_ABI, fa, "ABI 999", "a 70000-byte entry before abi");

  free(longp);

  /* thousands of missing directories: the message is cut, not overflowed */
  enum { MISSING = 5000, EACH = 24 };
  char *many = malloc(MISSING * EACH);
  ck_assert_ptr_nonnull(many);
  size_t at = 0;
  for (int i = 0; i < MISSING; i++) at += (size_t)snprintf(many + at, EACH, "/nonexistent/%d:", i);
  many[at - 1] = '\0';
  o = run_fresh(many);
  expect_refused(&o, QGEMV_ERR_NO_BACKEND, "/nonexistent/0/qgemv-cuda.so", "not found", "5000 missing directories");
  free(many);
  scratch_teardown();
}
END_TEST

/* ---- discovery and auto's choice, with modules that load ------------------ */

typedef struct scene {
  char names[256]; /* qgemv_backend_name(0 ..), comma-separated */
  int open_auto;
  char auto_backend[16];
  char after_auto[1024]; /* the last error after auto: still the marker */
  int probe, devices;    /* of the probed name */
  char probe_message[1024];
  int open_named;
  char named_backend[16], named_isa[16], named_device[128];
} scene;

/* Lists the backends, opens "auto", then probes and opens `name`. */
static void scene_calls(void *out, const void *arg) {
  scene *o = out;
  const char *name = arg;
  for (int i = 0; i < qgemv_backend_count(); i++) {
    const char *n = qgemv_backend_name(i);
    size_t used = strlen(o->names);
    snprintf(o->names + used, sizeof o->names - used, "%s%s", i ? "," : "", n ? n : "(null)");
  }
  int marker_devices;
  qgemv_backend_probe("zz-marker", &marker_devices); /* a last error that auto must keep */
  qgemv_ctx *ctx = NULL;
  o->open_auto = qgemv_open("auto", &ctx);
  snprintf(o->after_auto, sizeof o->after_auto, "%s", qgemv_last_error());
  if (ctx) snprintf(o->auto_backend, sizeof o->auto_backend, "%s", qgemv_ctx_backend(ctx));
  qgemv_close(ctx);
  o->probe = qgemv_backend_probe(name, &o->devices);
  snprintf(o->probe_message, sizeof o->probe_message, "%s", qgemv_last_error());
  ctx = NULL;
  o->open_named = qgemv_open(name, &ctx);
  qgemv_device_info info;
  if (ctx && qgemv_ctx_info(ctx, &info) == QGEMV_OK) {
    snprintf(o->named_backend, sizeof o->named_backend, "%s", info.backend);
    snprintf(o->named_isa, sizeof o->named_isa, "%s", info.isa);
    snprintf(o->named_device, sizeof o->named_device, "%s", info.name);
  }
  qgemv_close(ctx);
}

/* Devices the fake modules see in the child. */
typedef struct devices {
  int hi, lo, twin, manual;
} devices;

static scene run_scene(const char *path, devices d, const char *name) {
  static char env[4][64];
  snprintf(env[0], sizeof env[0], "QGEMV_TEST_DEVICES_fakehi=%d", d.hi);
  snprintf(env[1], sizeof env[1], "QGEMV_TEST_DEVICES_fakelo=%d", d.lo);
  snprintf(env[2], sizeof env[2], "QGEMV_TEST_DEVICES_faketwin=%d", d.twin);
  snprintf(env[3], sizeof env[3], "QGEMV_TEST_DEVICES_fakemanual=%d", d.manual);
  char *vars[] = {env[0], env[1], env[2], env[3], NULL};
  scene o;
  in_child(path, vars, scene_calls, name, &o, sizeof o);
  return o;
}

static const char *fakedev_dir(const char *kind, char *buf, size_t size) {
  snprintf(buf, size, "%s/tests/fakedev-%s/.libs", HARD_BUILDDIR, kind);
  return buf;
}

/* auto opened `want`, quietly (the marker is still the last error). */
static void expect_auto(const scene *o, const char *want, const char *what) {
  EXPECT(o->open_auto == QGEMV_OK && strcmp(o->auto_backend, want) == 0,
         "%s: auto gave %s on \"%s\", expected %s (backends %s)", what, qgemv_status_str(o->open_auto),
         o->auto_backend, want, o->names);
  EXPECT(strstr(o->after_auto, "zz-marker") != NULL, "%s: auto replaced the caller's last error with \"%s\"", what,
         o->after_auto);
}

/* The probed and opened module is `name` and sees `devices`. */
static void expect_usable(const scene *o, const char *name, int devices, const char *what) {
  EXPECT(o->probe == QGEMV_OK && o->devices == devices, "%s: probe %s gave %s, %d devices (%s)", what, name,
         qgemv_status_str(o->probe), o->devices, o->probe_message);
  char device[128];
  snprintf(device, sizeof device, "fake device of %s", name);
  EXPECT(o->open_named == QGEMV_OK && strcmp(o->named_backend, name) == 0 && strcmp(o->named_device, device) == 0,
         "%s: open %s gave %s on \"%s\", device \"%s\"", what, name, qgemv_status_str(o->open_named),
         o->named_backend, o->named_device);
}

/* auto takes the highest-priority module that sees a device, whatever the
 * search order; passes over one that sees none; else the CPU. */
START_TEST(auto_by_priority) {
  char hi[512], lo[512], path[1100];
  fakedev_dir("hi", hi, sizeof hi);
  fakedev_dir("lo", lo, sizeof lo);
  snprintf(path, sizeof path, "%s:%s", lo, hi);

  scene o = run_scene(path, (devices){.hi = 1, .lo = 1}, "fakehi");
  EXPECT(strcmp(o.names, "cpu,fakelo,fakehi") == 0, "backends, cpu then search order: %s", o.names);
  expect_auto(&o, "fakehi", "both see a device");
  expect_usable(&o, "fakehi", 1, "both see a device");

  o = run_scene(path, (devices){.hi = 0, .lo = 2}, "fakehi");
  expect_auto(&o, "fakelo", "fakehi sees no device");
  EXPECT(o.probe == QGEMV_ERR_NO_DEVICE && strstr(o.probe_message, "QGEMV_TEST_DEVICES_fakehi") != NULL,
         "probe of a module without devices: %s (%s)", qgemv_status_str(o.probe), o.probe_message);

  o = run_scene(path, (devices){0}, "fakelo");
  expect_auto(&o, "cpu", "neither sees a device");
  EXPECT(o.probe == QGEMV_ERR_NO_DEVICE, "probe fakelo: %s (%s)", qgemv_status_str(o.probe), o.probe_message);
}
END_TEST

/* Equal priorities: the first found wins. Priority 0: by name only. A
 * refused module, whatever priority it claims, is passed over by auto, and
 * the probe still says why. */
START_TEST(auto_ties_manual_refused) {
  char hi[512], twin[512], manual[512], lo[512], abi[512], path[2200];
  fakedev_dir("hi", hi, sizeof hi);
  fakedev_dir("twin", twin, sizeof twin);
  fakedev_dir("manual", manual, sizeof manual);
  fakedev_dir("lo", lo, sizeof lo);
  fake_dir("abi", abi, sizeof abi);

  snprintf(path, sizeof path, "%s:%s", twin, hi);
  scene o = run_scene(path, (devices){.hi = 1, .twin = 1}, "fakehi");
  expect_auto(&o, "faketwin", "a tie, faketwin first");
  snprintf(path, sizeof path, "%s:%s", hi, twin);
  o = run_scene(path, (devices){.hi = 1, .twin = 1}, "fakehi");
  expect_auto(&o, "fakehi", "a tie, fakehi first");

  snprintf(path, sizeof path, "%s:%s", manual, lo);
  o = run_scene(path, (devices){.manual = 1}, "fakemanual");
  expect_auto(&o, "cpu", "only a priority-0 module sees a device");
  expect_usable(&o, "fakemanual", 1, "a priority-0 module asked for by name");

  /* the ABI-999 module claims priority 1000 */
  snprintf(path, sizeof path, "%s:%s", abi, lo);
  o = run_scene(path, (devices){.lo = 1}, "cuda");
  expect_auto(&o, "fakelo", "a refused module ahead of fakelo");
  EXPECT(strcmp(o.names, "cpu,cuda,fakelo") == 0, "a refused module is still listed: %s", o.names);
  EXPECT(o.probe == QGEMV_ERR_ABI && strstr(o.probe_message, "ABI 999") != NULL,
         "the refusal auto passed over is not visible to the probe: %s (%s)", qgemv_status_str(o.probe),
         o.probe_message);
}
END_TEST

/* Names: the built-in cpu comes before every directory and "auto" is no
 * backend, so files qgemv-cpu.so and qgemv-auto.so are never opened (the
 * trap module aborts if loaded); of two files of one name the first in the
 * search order wins and the later one is never opened, even when the first
 * is refused; a module whose table names another backend is refused; files
 * whose NAME is not a backend name are passed over. */
START_TEST(name_clashes) {
  scratch_setup();
  char trap[512], hi[512], abi[512], src[600], shadow[400], broken[400], odd[400], f[480], path[2200];
  fakedev_dir("trap", trap, sizeof trap);
  fakedev_dir("hi", hi, sizeof hi);
  fake_dir("abi", abi, sizeof abi);

  /* shadow/: the trap as qgemv-auto.so and as a later qgemv-fakehi.so */
  snprintf(src, sizeof src, "%s/qgemv-cpu.so", trap);
  subdir("shadow", shadow, sizeof shadow);
  snprintf(f, sizeof f, "%s/qgemv-auto.so", shadow);
  copy_file(src, f);
  snprintf(f, sizeof f, "%s/qgemv-fakehi.so", shadow);
  copy_file(src, f);
  snprintf(path, sizeof path, "%s:%s:%s", trap, hi, shadow);
  scene o = run_scene(path, (devices){.hi = 1}, "cpu");
  EXPECT(strcmp(o.names, "cpu,fakehi") == 0, "backends with shadowed files: %s", o.names);
  expect_auto(&o, "fakehi", "shadowed files around fakehi");
  EXPECT(o.probe == QGEMV_OK && o.devices == 1 && o.open_named == QGEMV_OK && strcmp(o.named_backend, "cpu") == 0 &&
             o.named_isa[0] != '\0',
         "cpu beside a qgemv-cpu.so is not the built-in backend: %s, isa \"%s\" (%s)", qgemv_status_str(o.probe),
         o.named_isa, o.probe_message);

  /* broken/: the ABI-999 module as qgemv-fakehi.so, ahead of the real one */
  snprintf(src, sizeof src, "%s/qgemv-cuda.so", abi);
  subdir("broken", broken, sizeof broken);
  snprintf(f, sizeof f, "%s/qgemv-fakehi.so", broken);
  copy_file(src, f);
  snprintf(path, sizeof path, "%s:%s", broken, hi);
  o = run_scene(path, (devices){.hi = 1}, "fakehi");
  EXPECT(o.probe == QGEMV_ERR_ABI && strstr(o.probe_message, f) != NULL,
         "the first qgemv-fakehi.so, refused, did not decide: %s (%s)", qgemv_status_str(o.probe), o.probe_message);
  expect_auto(&o, "cpu", "the only fakehi that counts is refused");

  /* odd/: fakehi under another valid name, and the trap under names that
   * are no backend name */
  snprintf(src, sizeof src, "%s/qgemv-fakehi.so", hi);
  subdir("odd", odd, sizeof odd);
  snprintf(f, sizeof f, "%s/qgemv-other.so", odd);
  copy_file(src, f);
  snprintf(src, sizeof src, "%s/qgemv-cpu.so", trap);
  static const char *const not_names[] = {"qgemv-.so",      "qgemv-Fake.so",   "qgemv-fake-x.so",
                                          "qgemv-1fake.so", "qgemv-fake x.so", "qgemv-abcdefghijklmnop.so"};
  for (size_t i = 0; i < sizeof not_names / sizeof not_names[0]; i++) {
    snprintf(f, sizeof f, "%s/%s", odd, not_names[i]);
    copy_file(src, f);
  }
  o = run_scene(odd, (devices){.hi = 1}, "other");
  EXPECT(strcmp(o.names, "cpu,other") == 0, "backends in odd/: %s", o.names);
  EXPECT(o.probe == QGEMV_ERR_NO_BACKEND && strstr(o.probe_message, "qgemv-other.so") != NULL &&
             strstr(o.probe_message, "'fakehi'") != NULL,
         "a module named fakehi in qgemv-other.so: %s (%s)", qgemv_status_str(o.probe), o.probe_message);
  expect_auto(&o, "cpu", "only a misnamed module");
  scratch_teardown();
}
END_TEST

/* An unknown name: NO_BACKEND listing what was found, refused modules too;
 * for a name a module could have, where its file was looked for. */
START_TEST(unknown_lists_found) {
  char hi[512], lo[512], abi[512], path[1700];
  fakedev_dir("hi", hi, sizeof hi);
  fakedev_dir("lo", lo, sizeof lo);
  fake_dir("abi", abi, sizeof abi);
  snprintf(path, sizeof path, "%s:%s:%s", hi, lo, abi);
  scene o = run_scene(path, (devices){0}, "nosuch");
  EXPECT(o.probe == QGEMV_ERR_NO_BACKEND && o.open_named == QGEMV_ERR_NO_BACKEND,
         "probe and open of nosuch: %s, %s", qgemv_status_str(o.probe), qgemv_status_str(o.open_named));
  EXPECT(strstr(o.probe_message, "unknown backend 'nosuch': available: cpu, fakehi, fakelo, cuda") != NULL,
         "the message does not list what was found: %s", o.probe_message);
  char searched[600];
  snprintf(searched, sizeof searched, "%s/qgemv-nosuch.so", lo);
  EXPECT(strstr(o.probe_message, searched) != NULL, "the message does not say where it looked: %s",
         o.probe_message);
  o = run_scene(path, (devices){0}, "No-Such");
  EXPECT(o.probe == QGEMV_ERR_NO_BACKEND &&
             strstr(o.probe_message, "unknown backend 'No-Such': available: cpu, fakehi, fakelo, cuda") != NULL,
         "a name no module can have: %s (%s)", qgemv_status_str(o.probe), o.probe_message);
}
END_TEST

int main(void) {
  Suite *s = suite_create("hardening_loader");
  TCase *tc = tcase_create("loader");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, fake_modules_refused, 0, (int)(sizeof fakes / sizeof fakes[0]));
  tcase_add_test(tc, not_a_module);
  tcase_add_test(tc, only_exact_name);
  tcase_add_test(tc, search_order);
  tcase_add_test(tc, auto_by_priority);
  tcase_add_test(tc, auto_ties_manual_refused);
  tcase_add_test(tc, name_clashes);
  tcase_add_test(tc, unknown_lists_found);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
