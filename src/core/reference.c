#include "reference.h"

#include <math.h>
#include <stdlib.h>

#include "convert.h"
#include "error.h"
#include "formats.h"

double qg_load_elem(qgemv_dtype t, const void *p, size_t i) {
  if (t == QGEMV_F32) return ((const float *)p)[i];
  return qg_bf16_to_f32(((const uint16_t *)p)[i]);
}

void qg_ref_normalize(int64_t m, int64_t k, qgemv_dtype x_dtype, const void *x,
                      qgemv_dtype gamma_dtype, const void *gamma, float eps, double *xn) {
  for (int64_t r = 0; r < m; r++) {
    size_t base = (size_t)r * (size_t)k;
    double scale = 1.0;
    if (gamma != NULL) {
      double ss = 0.0;
      for (int64_t j = 0; j < k; j++) {
        double v = qg_load_elem(x_dtype, x, base + (size_t)j);
        ss += v * v;
      }
      scale = 1.0 / sqrt(ss / (double)k + (double)eps);
    }
    for (int64_t j = 0; j < k; j++) {
      double v = qg_load_elem(x_dtype, x, base + (size_t)j);
      xn[base + (size_t)j] = gamma ? v * scale * qg_load_elem(gamma_dtype, gamma, (size_t)j) : v;
    }
  }
}

double qg_ref_dot(const qgemv_weight_desc *w, qg_layout_id id, int64_t i, const double *xr, double *bound) {
  const int32_t group = qg_layouts[id].group;
  int64_t per_row = w->k / group;
  double wv[QG_BLOCK_MAX], acc = 0.0, sq = 0.0;
  for (int64_t b = 0; b < per_row; b++) {
    qg_decode_block_f64(w, id, i, b, wv);
    for (int32_t j = 0; j < group; j++) {
      double p = wv[j] * xr[b * group + j];
      acc += p;
      sq += p * p;
    }
  }
  if (bound) *bound = sqrt(sq);
  return acc;
}

qgemv_status qgemv_reference_matvec(const qgemv_weight_desc *w, int64_t m, qgemv_dtype x_dtype,
                                    const void *x, qgemv_dtype gamma_dtype, const void *gamma,
                                    float eps, double *y, double *bound) {
  qg_shape sh;
  qgemv_status s = qg_check_desc(w, &sh);
  if (s != QGEMV_OK) return s;
  size_t xcount, ycount;
  if (m <= 0) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_reference_matvec: m=%lld must be >= 1", (long long)m);
  if (!qg_mul_size(m, w->k, &xcount) || !qg_mul_size(m, w->n, &ycount) || xcount > SIZE_MAX / sizeof(double))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_reference_matvec: m=%lld is too large", (long long)m);
  if ((x_dtype != QGEMV_F32 && x_dtype != QGEMV_BF16) || (gamma && gamma_dtype != QGEMV_F32 && gamma_dtype != QGEMV_BF16))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_reference_matvec: dtypes must be QGEMV_F32 or QGEMV_BF16");
  if (x == NULL || y == NULL)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_reference_matvec: %s is NULL", x ? "y" : "x");
  if (gamma && !(eps > 0.0f && isfinite(eps)))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_reference_matvec: eps=%g must be finite and > 0", (double)eps);
  double *xn = malloc(xcount * sizeof(double));
  if (xn == NULL) return qg_fail(QGEMV_ERR_NO_MEMORY, "qgemv_reference_matvec: no memory for %zu activations", xcount);
  qg_ref_normalize(m, w->k, x_dtype, x, gamma_dtype, gamma, eps, xn);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < w->n; i++)
    for (int64_t r = 0; r < m; r++) {
      size_t at = (size_t)r * (size_t)w->n + (size_t)i;
      y[at] = qg_ref_dot(w, sh.id, i, xn + (size_t)r * (size_t)w->k, bound ? &bound[at] : NULL);
    }
  free(xn);
  return QGEMV_OK;
}
