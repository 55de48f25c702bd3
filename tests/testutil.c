#include "testutil.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

qgemv_format_info tu_format(int i) {
  qgemv_format_info info;
  qgemv_status s = qgemv_format_get(i, &info);
  ck_assert_msg(s == QGEMV_OK, "qgemv_format_get(%d): %s", i, qgemv_last_error());
  return info;
}

int64_t tu_whole_blocks(int i, int64_t k) {
  const int64_t g = tu_format(i).group;
  return (k + g - 1) / g * g;
}

/* The word separators of the lists in QGEMV_TEST_LEVELS and _REQUIRE. */
static const char list_seps[] = " ,";

bool tu_quick(void) {
  const char *q = getenv("QGEMV_TEST_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

bool tu_env_lists(const char *var, const char *word) {
  const size_t len = strlen(word);
  for (const char *p = getenv(var); p && *p;) {
    p += strspn(p, list_seps);
    const size_t n = strcspn(p, list_seps);
    if (n > 0 && n == len && strncmp(p, word, n) == 0) return true;
    p += n;
  }
  return false;
}

static bool is_level(const char *word, size_t n) {
  for (int i = 0; i < qgemv_cpu_level_count(); i++) {
    qgemv_cpu_level_info l;
    if (qgemv_cpu_level_get(i, &l) == QGEMV_OK && strlen(l.name) == n && strncmp(l.name, word, n) == 0)
      return true;
  }
  return false;
}

bool tu_env_levels_valid(void) {
  static const char *const vars[] = {"QGEMV_TEST_LEVELS", "QGEMV_TEST_REQUIRE"};
  const char *only = getenv("QGEMV_TEST_LEVELS");
  bool ok = true;
  for (int v = 0; v < 2; v++)
    for (const char *p = getenv(vars[v]); p && *p;) {
      p += strspn(p, list_seps);
      const size_t n = strcspn(p, list_seps);
      if (n == 0) break;
      char word[32];
      snprintf(word, sizeof word, "%.*s", (int)n, p);
      if (!is_level(p, n)) {
        fprintf(stderr, "%s: '%s' is not a CPU level (qgemv info lists them)\n", vars[v], word);
        ok = false;
      } else if (v == 1 && only && *only && !tu_env_lists("QGEMV_TEST_LEVELS", word)) {
        fprintf(stderr, "QGEMV_TEST_REQUIRE: %s is required but QGEMV_TEST_LEVELS leaves it out\n", word);
        ok = false;
      }
      p += n;
    }
  return ok;
}

void tu_weight_make(rng *r, dist_kind d, qgemv_format f, int32_t group, int64_t n, int64_t k, tu_weight *out) {
  size_t bytes = qgemv_data_bytes(f, n, k, group), nscales = qgemv_scale_count(f, n, k, group);
  ck_assert_msg(bytes > 0, "qgemv_data_bytes: %s", qgemv_last_error());
  float *w = malloc((size_t)n * (size_t)k * sizeof(float));
  ck_assert_ptr_nonnull(w);
  fill_random(r, d, w, (size_t)n * (size_t)k);
  out->data = malloc(bytes);
  out->scales = nscales ? malloc(nscales * sizeof(float)) : NULL;
  ck_assert_ptr_nonnull(out->data);
  qgemv_status s = qgemv_quantize(f, n, k, group, w, out->data, out->scales);
  ck_assert_msg(s == QGEMV_OK, "qgemv_quantize: %s", qgemv_last_error());
  free(w);
  out->desc = (qgemv_weight_desc){.format = f, .n = n, .k = k, .group = group, .data = out->data, .scales = out->scales};
}

void tu_weight_free(tu_weight *w) {
  free(w->data);
  free(w->scales);
  w->data = NULL;
  w->scales = NULL;
}

size_t tu_dtype_size(qgemv_dtype t) { return t == QGEMV_F32 ? 4 : 2; }

void *tu_convert(const float *src, size_t count, qgemv_dtype t) {
  void *p = malloc(count * tu_dtype_size(t));
  ck_assert_ptr_nonnull(p);
  for (size_t i = 0; i < count; i++) {
    if (t == QGEMV_F32)
      ((float *)p)[i] = src[i];
    else
      ((uint16_t *)p)[i] = qgemv_f32_to_bf16(src[i]);
  }
  return p;
}

double tu_elem(qgemv_dtype t, const void *p, size_t i) {
  return t == QGEMV_F32 ? (double)((const float *)p)[i] : (double)qgemv_bf16_to_f32(((const uint16_t *)p)[i]);
}

static unsigned char guard_byte(size_t i) { return (unsigned char)(0xa5 ^ (i * 7)); }

tu_guarded tu_guarded_new(size_t bytes) {
  tu_guarded g = {.mem = malloc(bytes + TU_GUARD_BYTES), .bytes = bytes};
  ck_assert_ptr_nonnull(g.mem);
  tu_poison(&g);
  return g;
}

void tu_poison(tu_guarded *g) {
  memset(g->mem, 0xff, g->bytes);
  for (size_t i = 0; i < TU_GUARD_BYTES; i++) g->mem[g->bytes + i] = guard_byte(i);
}

bool tu_guard_intact(const tu_guarded *g) {
  for (size_t i = 0; i < TU_GUARD_BYTES; i++)
    if (g->mem[g->bytes + i] != guard_byte(i)) return false;
  return true;
}

void tu_guarded_free(tu_guarded *g) {
  free(g->mem);
  g->mem = NULL;
}

double tu_contract_allowed(double ref, double bound, bool y_bf16) {
  return 1e-3 * bound + (y_bf16 ? ldexp(fabs(ref), -8) : 0.0);
}

double tu_contract_ratio(double y, double ref, double bound, bool y_bf16) {
  const double err = fabs(y - ref), allowed = tu_contract_allowed(ref, bound, y_bf16);
  if (isnan(ref)) return isnan(y) ? 0.0 : INFINITY;
  if (isnan(err)) return INFINITY;
  return allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
}

double tu_check_contract(const qgemv_weight_desc *w, int64_t m, qgemv_dtype x_dtype, const void *x,
                         qgemv_dtype gamma_dtype, const void *gamma, float eps, qgemv_dtype y_dtype,
                         const void *y, char *where, size_t where_size) {
  size_t count = (size_t)m * (size_t)w->n;
  double *ref = malloc(count * sizeof(double)), *bound = malloc(count * sizeof(double));
  ck_assert_ptr_nonnull(ref);
  ck_assert_ptr_nonnull(bound);
  qgemv_status s = qgemv_reference_matvec(w, m, x_dtype, x, gamma_dtype, gamma, eps, ref, bound);
  ck_assert_msg(s == QGEMV_OK, "qgemv_reference_matvec: %s", qgemv_last_error());
  double worst = 0.0;
  if (where && where_size) where[0] = '\0';
  for (size_t i = 0; i < count; i++) {
    const double v = tu_elem(y_dtype, y, i);
    const double ratio = tu_contract_ratio(v, ref[i], bound[i], y_dtype == QGEMV_BF16);
    if (ratio > worst || (i == 0 && where)) {
      if (ratio > worst) worst = ratio;
      if (where)
        snprintf(where, where_size, "row %zu col %zu: got %.9g, oracle %.9g, allowed +-%.3g", i / (size_t)w->n,
                 i % (size_t)w->n, v, ref[i], tu_contract_allowed(ref[i], bound[i], y_dtype == QGEMV_BF16));
    }
  }
  free(ref);
  free(bound);
  return worst;
}
