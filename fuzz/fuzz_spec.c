/*
 * fuzz_spec: backend spec strings and the environment that selects a
 * backend (QGEMV_BACKEND, QGEMV_DEVICE, QGEMV_CPU_ISA, QGEMV_NUM_THREADS,
 * QGEMV_CPU_BIND) through qgemv_open / qgemv_close and qgemv_backend_probe.
 *
 * Input: a flags byte (bit 0: spec given, else NULL; bits 1-5: which
 * variables are set; bit 6: query the context's info), then up to six
 * NUL-separated strings: the spec, then the five values.
 *
 * Checked: no crash or leak; a failure leaves *out NULL with a message of
 * bounded length, and a status from the documented set; a success gives a
 * usable context (backend named, device index, info); the same call twice
 * gives the same status and message (nothing is half-parsed into state);
 * and where the header is explicit, the outcome: a spec outside
 * "auto" | NAME | NAME:N, NAME a backend qgemv_backend_name lists, is an
 * error, and plain "cpu" with no variables set succeeds. Discovery of the
 * modules runs once per process; that is fine here.
 */
#include <stdbool.h>

#include "fuzz_common.h"

enum { NVARS = 5 };
static const char *const vars[NVARS] = {"QGEMV_BACKEND", "QGEMV_DEVICE", "QGEMV_CPU_ISA", "QGEMV_NUM_THREADS",
                                        "QGEMV_CPU_BIND"};

static bool known_status(qgemv_status s) { return s <= QGEMV_OK && s >= QGEMV_ERR_ABI; }

static bool all_digits(const char *s) {
  if (*s == '\0') return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return false;
  return true;
}

/* Whether the first len bytes of s are a listed backend's name. */
static bool listed(const char *s, size_t len) {
  for (int i = 0; i < qgemv_backend_count(); i++) {
    const char *name = qgemv_backend_name(i);
    if (strlen(name) == len && !strncmp(s, name, len)) return true;
  }
  return false;
}

/* The grammar of qgemv.h: auto, or a listed backend with an optional
 * device index (the CPU's "cpu:0" included). */
static bool in_grammar(const char *spec) {
  if (!strcmp(spec, "auto")) return true;
  const char *colon = strchr(spec, ':');
  if (colon && !all_digits(colon + 1)) return false;
  return listed(spec, colon ? (size_t)(colon - spec) : strlen(spec));
}

static qgemv_status open_once(const char *spec, char *msg, size_t size, bool check_ctx) {
  qgemv_ctx *ctx = (qgemv_ctx *)&ctx;
  qgemv_status s = qgemv_open(spec, &ctx);
  FZ_CHECK(known_status(s), "qgemv_open returned %d, not a qgemv_status", (int)s);
  if (s != QGEMV_OK) {
    const char *m = qgemv_last_error();
    size_t len = strnlen(m, 4096);
    FZ_CHECK(ctx == NULL, "a failed qgemv_open left *out set");
    FZ_CHECK(len > 0 && len < 1024, "a failed qgemv_open left a message of %zu bytes", len);
    snprintf(msg, size, "%s", m);
    return s;
  }
  FZ_CHECK(ctx != NULL, "qgemv_open succeeded without a context");
  const char *be = qgemv_ctx_backend(ctx);
  FZ_CHECK(be && listed(be, strlen(be)), "backend name %s", be ? be : "(null)");
  FZ_CHECK(qgemv_ctx_device(ctx) >= 0, "device index %d", qgemv_ctx_device(ctx));
  if (check_ctx) {
    qgemv_device_info info;
    FZ_CHECK(qgemv_ctx_info(ctx, &info) == QGEMV_OK, "ctx_info of a fresh context");
    FZ_CHECK(memchr(info.name, '\0', sizeof info.name) && memchr(info.isa, '\0', sizeof info.isa),
             "unterminated strings in qgemv_device_info");
  }
  snprintf(msg, size, "%s", be);
  qgemv_close(ctx);
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = bytes[0];
  /* split the rest into NUL-terminated strings (copies, so that ASan sees
   * any read past each one's end) */
  char *str[NVARS + 1] = {0};
  const uint8_t *p = bytes + 1, *end = bytes + size;
  for (int i = 0; i < NVARS + 1; i++) {
    const uint8_t *nul = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
    size_t len = p < end ? (nul ? (size_t)(nul - p) : (size_t)(end - p)) : 0;
    str[i] = fz_alloc(len + 1);
    if (len) memcpy(str[i], p, len);
    str[i][len] = '\0';
    p += len + (nul ? 1 : 0);
    if (p > end) p = end;
  }
  /* putenv with buffers of our own: setenv would keep a copy of every
   * value ever set (glibc never frees them), growing without bound over
   * millions of inputs */
  static char env[NVARS][64 + 8192];
  for (int i = 0; i < NVARS; i++) {
    unsetenv(vars[i]);
    if (flags & (2 << i)) {
      snprintf(env[i], sizeof env[i], "%s=%.8191s", vars[i], str[i + 1]);
      putenv(env[i]);
    }
  }
  const char *spec = (flags & 1) ? str[0] : NULL;

  char first[1024], second[1024];
  qgemv_status s1 = open_once(spec, first, sizeof first, flags & 0x40);
  qgemv_status s2 = open_once(spec, second, sizeof second, false);
  FZ_CHECK(s1 == s2 && !strcmp(first, second), "the same open twice: %s (%s) then %s (%s)", qgemv_status_str(s1),
           first, qgemv_status_str(s2), second);

  /* what the header pins down */
  const char *effective = spec ? spec : (getenv("QGEMV_BACKEND") && *getenv("QGEMV_BACKEND") ? getenv("QGEMV_BACKEND") : "auto");
  if (!in_grammar(effective))
    FZ_CHECK(s1 != QGEMV_OK, "spec '%.64s' is outside the grammar but opened %s", effective, first);
  if (spec && !strcmp(spec, "cpu") && !(flags & 0x3e))
    FZ_CHECK(s1 == QGEMV_OK && !strcmp(first, "cpu"), "\"cpu\" with a clean environment: %s (%s)",
             qgemv_status_str(s1), first);

  /* probing a backend by any name */
  int devices = -7;
  qgemv_status ps = qgemv_backend_probe(str[0], &devices);
  FZ_CHECK(known_status(ps), "probe returned %d", (int)ps);
  if (ps == QGEMV_OK)
    FZ_CHECK(devices > 0 && listed(str[0], strlen(str[0])), "probe '%.64s' OK with %d devices", str[0], devices);
  else
    FZ_CHECK(qgemv_last_error()[0] != '\0', "a failed probe without a message");

  for (int i = 0; i < NVARS + 1; i++) free(str[i]);
  return 0;
}
