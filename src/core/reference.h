/* The oracle (DESIGN.md s.5): exact weights, double products, sums, RMSNorm. */
#ifndef QG_REFERENCE_H
#define QG_REFERENCE_H

#include "layouts.h"

/* x[m, k] -> xn[m, k] in double, RMSNorm applied when gamma != NULL. */
void qg_ref_normalize(int64_t m, int64_t k, qgemv_dtype x_dtype, const void *x,
                      qgemv_dtype gamma_dtype, const void *gamma, float eps, double *xn);
/* Row i of W (layout id) dotted with xr[k] in double; *bound (optional)
 * gets sqrt(sum (w * xr)^2). The weight must be validated. */
double qg_ref_dot(const qgemv_weight_desc *w, qg_layout_id id, int64_t i, const double *xr, double *bound);
/* Element i of a tensor of dtype t, as a double. */
double qg_load_elem(qgemv_dtype t, const void *p, size_t i);

#endif
