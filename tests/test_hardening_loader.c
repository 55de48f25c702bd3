/*
 * Loading code safely (issue 6, item 6; DESIGN.md s.6).
 *
 * The loader looks for the exact file name qgemv-cuda.so in each directory
 * of $QGEMV_PLUGIN_PATH, in order, then in the install directory; it must
 * check the module's ABI before calling anything in it, and report every
 * refusal with the path. Each case here runs in a fresh child process
 * (the loader runs once per process), forked whether or not Check forks:
 * the child sets QGEMV_PLUGIN_PATH before its first qgemv call, probes
 * "cuda", opens "cuda" and "auto", and sends what it saw to the parent.
 *
 * The refused modules are real shared objects built with this suite
 * (tests/fakemod/fakemod.c): one reporting ABI 999, one whose vtable says
 * 999, one returning no vtable, one without the entry symbol. Their vtable
 * functions abort, so a loader that calls into a module before checking its
 * ABI crashes the child and fails the case. Other files (not an ELF
 * object, empty, a directory, wrong names) are made in a temporary
 * directory.
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

typedef struct outcome {
  int probe, open_cuda, open_auto;
  char message[1024], cuda_message[1024], auto_backend[16];
} outcome;

/* In a child: QGEMV_PLUGIN_PATH=path (unset when NULL), then the calls. */
static outcome run_fresh(const char *path) {
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    outcome o;
    memset(&o, 0, sizeof o);
    if (path)
      setenv("QGEMV_PLUGIN_PATH", path, 1);
    else
      unsetenv("QGEMV_PLUGIN_PATH");
    int devices = 0;
    o.probe = qgemv_backend_probe("cuda", &devices);
    snprintf(o.message, sizeof o.message, "%s", qgemv_last_error());
    qgemv_ctx *ctx = NULL;
    o.open_cuda = qgemv_open("cuda", &ctx);
    snprintf(o.cuda_message, sizeof o.cuda_message, "%s", qgemv_last_error());
    qgemv_close(ctx);
    ctx = NULL;
    o.open_auto = qgemv_open("auto", &ctx);
    if (ctx) snprintf(o.auto_backend, sizeof o.auto_backend, "%s", qgemv_ctx_backend(ctx));
    qgemv_close(ctx);
    _exit(write(fds[1], &o, sizeof o) == (ssize_t)sizeof o ? 0 : 3);
  }
  close(fds[1]);
  outcome o;
  memset(&o, 0, sizeof o);
  ssize_t got = read(fds[0], &o, sizeof o);
  close(fds[0]);
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == (ssize_t)sizeof o,
         "the child probing QGEMV_PLUGIN_PATH=%.200s died (status 0x%x): the loader crashed or called into a "
         "module before checking its ABI",
         path ? path : "(unset)", status);
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

int main(void) {
  Suite *s = suite_create("hardening_loader");
  TCase *tc = tcase_create("loader");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, fake_modules_refused, 0, (int)(sizeof fakes / sizeof fakes[0]));
  tcase_add_test(tc, not_a_module);
  tcase_add_test(tc, only_exact_name);
  tcase_add_test(tc, search_order);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
