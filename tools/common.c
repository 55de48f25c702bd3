#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tool.h"

uint64_t rng_next(rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

double rng_normal(rng *r) {
  double u1 = rng_uniform(r), u2 = rng_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

const char *dist_name(dist_kind d) {
  static const char *const names[] = {"normal", "heavy-tailed", "large", "tiny"};
  return d < DIST_COUNT ? names[d] : "?";
}

void fill_random(rng *r, dist_kind d, float *out, size_t count) {
  for (size_t i = 0; i < count; i++) {
    double v = rng_normal(r);
    switch (d) {
    case DIST_HEAVY: v = v / (fabs(rng_normal(r)) + 0.05); break; /* Cauchy-like tails */
    case DIST_LARGE: v *= 3.0e3; break;
    case DIST_TINY: v *= 1.0e-4; break;
    default: break;
    }
    if (v == 0.0) v = 1e-3;
    out[i] = (float)v;
  }
}

int host_weight_make(rng *r, dist_kind d, qgemv_format f, int32_t group, int64_t n, int64_t k, host_weight *out) {
  memset(out, 0, sizeof *out);
  size_t bytes = qgemv_data_bytes(f, n, k, group);
  size_t nscales = qgemv_scale_count(f, n, k, group);
  float *w = malloc((size_t)n * (size_t)k * sizeof(float));
  out->data = malloc(bytes);
  out->scales = nscales ? malloc(nscales * sizeof(float)) : NULL;
  if (!bytes || !w || !out->data || (nscales && !out->scales)) {
    free(w);
    host_weight_free(out);
    return -1;
  }
  fill_random(r, d, w, (size_t)n * (size_t)k);
  qgemv_status s = qgemv_quantize(f, n, k, group, w, out->data, out->scales);
  free(w);
  if (s != QGEMV_OK) {
    host_weight_free(out);
    return -1;
  }
  out->desc = (qgemv_weight_desc){.format = f, .n = n, .k = k, .group = group, .data = out->data, .scales = out->scales};
  out->bytes = bytes + nscales * sizeof(float);
  return 0;
}

void host_weight_free(host_weight *w) {
  free(w->data);
  free(w->scales);
  w->data = NULL;
  w->scales = NULL;
}

void *to_dtype(const float *src, size_t count, qgemv_dtype t) {
  if (t == QGEMV_F32) {
    float *p = malloc(count * sizeof(float));
    if (p) memcpy(p, src, count * sizeof(float));
    return p;
  }
  uint16_t *p = malloc(count * sizeof(uint16_t));
  if (p)
    for (size_t i = 0; i < count; i++) p[i] = qgemv_f32_to_bf16(src[i]);
  return p;
}

const char *format_label(qgemv_format f, int32_t group) {
  if (f == QGEMV_NF4) return "NF4";
  return group == 64 ? "Q2_0/g64" : "Q2_0/g128";
}

const char *dtype_label(qgemv_dtype t) { return t == QGEMV_F32 ? "f32" : "bf16"; }

double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void report_failure(const char *what, qgemv_status s) {
  fprintf(stderr, "qgemv: %s: %s: %s\n", what, qgemv_status_str(s), qgemv_last_error());
}
