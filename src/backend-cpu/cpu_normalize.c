/* Activations into the kernels' f32 workspace: bf16 widened (exact),
 * RMSNorm applied with its statistics in double, elements moved into the
 * level's x order. Serial and in a fixed order, so the workspace, and with
 * it every result, is the same for any thread count. O(m k) against the
 * matvec's O(n k): with n in the thousands it is a fraction of a percent,
 * which is why it is not worth threads. */
#include <math.h>

#include "cpu.h"

void qg_cpu_xorder_transpose(int lanes, int vecs, qg_cpu_xorder *out) {
  out->period = lanes * vecs;
  for (int j = 0; j < out->period; j++) out->pos[j] = (uint8_t)((j % vecs) * lanes + j / vecs);
}

static inline float elem(qgemv_dtype t, const void *p, size_t i) {
  if (t == QGEMV_F32) return ((const float *)p)[i];
  return qg_bf16_to_f32(((const uint16_t *)p)[i]);
}

/* 1 / sqrt(mean(x^2) + eps) in double; four partial sums in a fixed order
 * break the add chain without making the result depend on anything but x. */
static double rms_scale(qgemv_dtype t, const void *x, size_t base, int64_t k, float eps) {
  double ss[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t j = 0;
  for (; j + 4 <= k; j += 4)
    for (int l = 0; l < 4; l++) {
      double v = elem(t, x, base + (size_t)(j + l));
      ss[l] += v * v;
    }
  for (; j < k; j++) {
    double v = elem(t, x, base + (size_t)j);
    ss[0] += v * v;
  }
  double sum = (ss[0] + ss[1]) + (ss[2] + ss[3]);
  return 1.0 / sqrt(sum / (double)k + (double)eps);
}

void qg_cpu_normalize(const qg_matvec_args *a, const qg_cpu_xorder *order, float *xn) {
  static const qg_cpu_xorder natural = {.period = 1, .pos = {0}};
  if (order == NULL) order = &natural;
  const int p = order->period;
  const int64_t k = a->k;
  for (int64_t r = 0; r < a->m; r++) {
    size_t base = (size_t)r * (size_t)k;
    float *out = xn + base;
    if (a->gamma == NULL) {
      for (int64_t j0 = 0; j0 < k; j0 += p)
        for (int q = 0; q < p; q++) out[j0 + order->pos[q]] = elem(a->x_dtype, a->x, base + (size_t)(j0 + q));
      continue;
    }
    double scale = rms_scale(a->x_dtype, a->x, base, k, a->eps);
    for (int64_t j0 = 0; j0 < k; j0 += p)
      for (int q = 0; q < p; q++) {
        size_t j = (size_t)(j0 + q);
        double v = elem(a->x_dtype, a->x, base + j) * scale * (double)elem(a->gamma_dtype, a->gamma, j);
        out[j0 + order->pos[q]] = (float)v;
      }
  }
}
