/* Parsing of QGEMV_CUDA_PLAN (plan_tune.h). */
#include "plan_tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "share_layout.h"

static bool power_of_two_upto(long v, long max) {
  return v >= 1 && v <= max && (v & (v - 1)) == 0;
}

/* One "key=value" of len bytes at s. */
static bool parse_item(const char *s, size_t len, qgc_plan_tune *t, char *err, size_t errsize) {
  const char *eq = memchr(s, '=', len);
  if (eq == NULL || eq == s || eq + 1 == s + len) {
    snprintf(err, errsize, "'%.*s' is not key=value", (int)len, s);
    return false;
  }
  const size_t klen = (size_t)(eq - s), vlen = len - klen - 1;
  const char *v = eq + 1;
  char num[16] = "";
  if (vlen < sizeof num) memcpy(num, v, vlen), num[vlen] = '\0';
  char *end = NULL;
  const long n = num[0] ? strtol(num, &end, 10) : 0;
  const bool is_num = num[0] && end && *end == '\0';
#define KEY(name) (klen == sizeof(name) - 1 && memcmp(s, name, klen) == 0)
  if (KEY("b")) {
    if (vlen == 3 && memcmp(v, "cta", 3) == 0) return t->b = QGC_B_CTA, true;
    if (vlen == 4 && memcmp(v, "warp", 4) == 0) return t->b = QGC_B_WARP, true;
    snprintf(err, errsize, "b=%.*s: b is cta or warp", (int)vlen, v);
    return false;
  }
  if (KEY("x")) {
    if (vlen == 6 && memcmp(v, "direct", 6) == 0) return t->x = QGC_X_DIRECT, true;
    if (vlen == 3 && memcmp(v, "int", 3) == 0) return t->x = QGC_X_INT, true;
    if (vlen == 4 && memcmp(v, "auto", 4) == 0) return t->x = QGC_X_AUTO, true;
    snprintf(err, errsize, "x=%.*s: x is direct, int or auto", (int)vlen, v);
    return false;
  }
  if (KEY("norm")) {
    if (vlen == 2 && memcmp(v, "dg", 2) == 0) return t->norm = QGC_NORM_DG, true;
    if (vlen == 2 && memcmp(v, "b2", 2) == 0) return t->norm = QGC_NORM_B2, true;
    snprintf(err, errsize, "norm=%.*s: norm is dg (gamma in A) or b2 (x gamma as two bf16 terms)", (int)vlen, v);
    return false;
  }
  if (KEY("st")) {
    if (is_num && (n == QGC_SHARE_THREADS_MIN || n == QGC_SHARE_THREADS_MAX)) return t->st = (int)n, true;
    snprintf(err, errsize, "st=%.*s: st is %d or %d (threads a CTA of the share form)", (int)vlen, v,
             QGC_SHARE_THREADS_MIN, QGC_SHARE_THREADS_MAX);
    return false;
  }
  int *field = KEY("ks") ? &t->ks : KEY("t") ? &t->t : KEY("w") ? &t->w : KEY("phases") ? &t->phases : NULL;
  const long max = KEY("ks") ? 16 : KEY("w") ? QGC_TUNE_MAX_WARPS : KEY("t") ? 2 : 1024;
  const bool pow2 = KEY("ks"); /* w: any count, so that W / KS row groups can fit the SMs evenly */
#undef KEY
  if (field == NULL) {
    snprintf(err, errsize, "unknown key '%.*s' (the keys are ks, t, b, w, phases, x, st, norm)", (int)klen, s);
    return false;
  }
  if (!is_num || (pow2 ? !power_of_two_upto(n, max) : n < 1 || n > max)) {
    snprintf(err, errsize, "%.*s=%.*s: expected %s from 1 to %ld", (int)klen, s, (int)vlen, v,
             pow2 ? "a power of two" : "a whole number", max);
    return false;
  }
  *field = (int)n;
  return true;
}

bool qgc_plan_tune_parse(const char *text, qgc_plan_tune *t, char *err, size_t errsize) {
  *t = (qgc_plan_tune){0};
  if (text == NULL) return true;
  for (const char *s = text; *s;) {
    const char *comma = strchr(s, ',');
    const size_t len = comma ? (size_t)(comma - s) : strlen(s);
    if (!parse_item(s, len, t, err, errsize)) return false;
    s += len + (comma != NULL);
  }
  if (t->w && t->ks && t->w < t->ks) {
    snprintf(err, errsize, "w=%d is fewer warps than ks=%d slices", t->w, t->ks);
    return false;
  }
  if (t->phases > 1 && t->b == QGC_B_WARP) {
    snprintf(err, errsize, "phases=%d needs b=cta (B per warp has no phases)", t->phases);
    return false;
  }
  return true;
}

void qgc_plan_tune_format(const qgc_plan_tune *t, char *buf, size_t size) {
  const struct {
    const char *key;
    int v;
  } f[] = {{"ks", t->ks}, {"t", t->t}, {"w", t->w}, {"phases", t->phases}, {"st", t->st}};
  size_t used = 0;
  buf[0] = '\0';
  if (t->b) used += (size_t)snprintf(buf, size, "b=%s", t->b == QGC_B_CTA ? "cta" : "warp");
  if (t->x && used < size)
    used += (size_t)snprintf(buf + used, size - used, "%sx=%s", used ? "," : "",
                             t->x == QGC_X_INT ? "int" : t->x == QGC_X_AUTO ? "auto" : "direct");
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (f[i].v && used < size) used += (size_t)snprintf(buf + used, size - used, "%s%s=%d", used ? "," : "", f[i].key, f[i].v);
  if (t->norm && used < size)
    used += (size_t)snprintf(buf + used, size - used, "%snorm=%s", used ? "," : "",
                             t->norm == QGC_NORM_B2 ? "b2" : "dg");
}
