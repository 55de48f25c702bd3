/* Command-line parsing shared by the subcommands (see opts.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

void opt_init(opt_iter *it, const char *cmd, int argc, char **argv) {
  memset(it, 0, sizeof *it);
  it->cmd = cmd;
  it->argc = argc;
  it->argv = argv;
  it->i = 0; /* argv[0] is the subcommand itself */
}

bool opt_next(opt_iter *it) {
  if (++it->i >= it->argc) return false;
  const char *a = it->argv[it->i];
  const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
  size_t len = eq ? (size_t)(eq - a) : strlen(a);
  if (len >= sizeof it->name) len = sizeof it->name - 1; /* still unknown, still named */
  memcpy(it->name, a, len);
  it->name[len] = '\0';
  it->inline_value = eq ? eq + 1 : NULL;
  return true;
}

bool opt_is(const opt_iter *it, const char *name) { return strcmp(it->name, name) == 0; }

bool opt_flag(opt_iter *it) {
  if (it->inline_value == NULL) return true;
  fprintf(stderr, "qgemv %s: %s takes no value (got '%s')\n", it->cmd, it->name, it->inline_value);
  return false;
}

const char *opt_value(opt_iter *it) {
  if (it->inline_value) return it->inline_value;
  if (it->i + 1 < it->argc) return it->argv[++it->i];
  fprintf(stderr, "qgemv %s: %s needs a value (qgemv %s --help)\n", it->cmd, it->name, it->cmd);
  return NULL;
}

const char *opt_optional_value(opt_iter *it) {
  if (it->inline_value) return it->inline_value;
  if (it->i + 1 < it->argc) {
    const char *next = it->argv[it->i + 1];
    if (next[0] != '-' || strcmp(next, "-") == 0) return it->argv[++it->i];
  }
  return NULL;
}

int opt_bad_value(const opt_iter *it, const char *value, const char *fmt, ...) {
  fprintf(stderr, "qgemv %s: %s '%s': ", it->cmd, it->name, value);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return EXIT_USAGE;
}

int opt_unknown(const opt_iter *it) {
  const char *a = it->argv[it->i];
  if (a[0] == '-')
    fprintf(stderr, "qgemv %s: unknown option '%s' (qgemv %s --help lists them)\n", it->cmd, it->name, it->cmd);
  else
    fprintf(stderr, "qgemv %s: unexpected argument '%s': this command takes options only (qgemv %s --help)\n",
            it->cmd, a, it->cmd);
  return EXIT_USAGE;
}

bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  /* strtoll skips leading blanks and accepts '+': only plain digits here */
  if (end == s || *end != '\0' || errno != 0 || isspace((unsigned char)s[0]) || s[0] == '+' || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
  char *end;
  if (s[0] < '0' || s[0] > '9') return false; /* strtoull would accept "-1" */
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end != '\0' || errno != 0 || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool parse_double(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno != 0 || isspace((unsigned char)s[0]) || !isfinite(v) || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

bool parse_size(const char *s, uint64_t *out) {
  char digits[32];
  size_t len = strlen(s);
  if (len == 0 || len >= sizeof digits) return false;
  memcpy(digits, s, len + 1);
  unsigned shift = 0;
  const char *units = "KMGT";
  const char *u = strchr(units, digits[len - 1] & ~0x20); /* K or k, ... */
  if (u) {
    shift = 10u * (unsigned)(u - units + 1);
    digits[len - 1] = '\0';
  }
  uint64_t v;
  if (!parse_u64(digits, 0, UINT64_MAX >> shift, &v)) return false;
  *out = v << shift;
  return true;
}

int split_list(const char *s, char items[][32], int max) {
  int count = 0;
  for (const char *p = s;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0 || len >= 32 || count >= max) return -1;
    memcpy(items[count], p, len);
    items[count++][len] = '\0';
    if (!comma) return count;
    p = comma + 1;
  }
}
