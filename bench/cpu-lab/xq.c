/* Activations as block fixed point (xq.h). O(k) per row plus a few passes
 * over the blocks that need a second term: once per call, against the
 * matvec's O(n k). */
#include "xq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Balanced base-256 digits of q, |q| <= 2^30. */
static void split_digits(int64_t q, int8_t d[4]) {
  for (int p = 0; p < 4; p++) {
    int64_t r = ((q % 256) + 256) % 256; /* 0..255 */
    if (r >= 128) r -= 256;
    d[p] = (int8_t)r;
    q = (q - r) / 256;
  }
}

/* One term over the block's residuals res[0..g): stores digits (layout of
 * xq_row.digits) and their sums, replaces res by what is left, and returns
 * the exponent. All exact in double: res values are f32 grid values times
 * powers of two, |res / 2^e| <= 2^30. */
static int16_t one_term(double *res, int g, int digits, int8_t *out, int32_t dsum[4]) {
  double m = 0.0;
  for (int j = 0; j < g; j++) m = fmax(m, fabs(res[j]));
  int e2 = 0;
  if (m > 0.0) frexp(m, &e2); /* m < 2^e2 */
  int16_t e = (int16_t)(e2 - (digits == 4 ? 30 : 22));
  memset(dsum, 0, 4 * sizeof *dsum);
  for (int j = 0; j < g; j++) {
    double s = ldexp(res[j], -e);
    double q = nearbyint(s);
    res[j] = ldexp(s - q, e);
    int8_t d[4];
    split_digits((int64_t)q, d);
    for (int p = 0; p < 4; p++) {
      out[16 * (j / 4) + 4 * p + j % 4] = d[p];
      dsum[p] += d[p];
    }
  }
  return e;
}

static double block_p(const float *x, const double *res, int g) {
  double p = 0.0;
  for (int j = 0; j < g; j++)
    if (res[j] != 0.0) {
      double r = res[j] / (double)x[j];
      p += r * r;
    }
  return p;
}

int xq_quantize(const float *x, int64_t k, int g, int digits, double tau, xq_row *o) {
  memset(o, 0, sizeof *o);
  o->k = k;
  o->g = g;
  o->nb = (int)(k / g);
  o->ndigits = digits;
  o->digits = aligned_alloc(64, 4 * (size_t)k + 64);
  o->dsum = calloc((size_t)o->nb * 4, sizeof *o->dsum);
  o->exp = calloc((size_t)o->nb, sizeof *o->exp);
  o->nterms = calloc((size_t)o->nb, 1);
  o->first_extra = calloc((size_t)o->nb, sizeof *o->first_extra);
  double *res = malloc((size_t)k * sizeof *res), *pb = malloc((size_t)o->nb * sizeof *pb);
  if (!res || !pb || !o->dsum) return -1;
  for (int64_t j = 0; j < k; j++) res[j] = (double)x[j];
  double total = 0.0;
  for (int b = 0; b < o->nb; b++) {
    size_t at = (size_t)b * (size_t)g;
    o->exp[b] = one_term(res + at, g, digits, o->digits + 4 * at, o->dsum + 4 * b);
    o->nterms[b] = 1;
    o->first_extra[b] = -1;
    pb[b] = block_p(x + at, res + at, g);
    total += pb[b];
  }
  /* Further terms, largest P_b first, until the bound holds (with a margin
   * for the rounding of the sum itself). */
  const double limit = tau * tau * (1.0 - 1e-9);
  while (total > limit) {
    int worst = 0;
    for (int b = 1; b < o->nb; b++)
      if (pb[b] > pb[worst]) worst = b;
    if (o->nterms[worst] >= XQ_MAX_TERMS) return -2; /* impossible for f32 x */
    if (o->nextra == o->cap_extra) {
      o->cap_extra = o->cap_extra ? 2 * o->cap_extra : 16;
      o->extra = realloc(o->extra, (size_t)o->cap_extra * sizeof *o->extra);
    }
    xq_extra *e = &o->extra[o->nextra];
    size_t at = (size_t)worst * (size_t)g;
    e->block = worst;
    e->digits = malloc((size_t)4 * (size_t)g);
    e->exp = one_term(res + at, g, digits, e->digits, e->dsum);
    o->nextra++;
    o->nterms[worst]++;
    total -= pb[worst];
    pb[worst] = block_p(x + at, res + at, g);
    total += pb[worst];
  }
  o->p = total;
  /* Extra terms grouped by block, in the order they were made (a stable
   * sort), so that a block's terms 1.. are consecutive from first_extra. */
  xq_extra *sorted = malloc((size_t)(o->nextra ? o->nextra : 1) * sizeof *sorted);
  int used = 0;
  for (int b = 0; b < o->nb; b++)
    for (int i = 0; i < o->nextra; i++)
      if (o->extra[i].block == b) {
        if (o->first_extra[b] < 0) o->first_extra[b] = used;
        sorted[used++] = o->extra[i];
      }
  free(o->extra);
  o->extra = sorted;
  free(res);
  free(pb);
  return 0;
}

void xq_free(xq_row *r) {
  free(r->digits);
  for (int i = 0; i < r->nextra; i++) free(r->extra[i].digits);
  free(r->extra);
  free(r->dsum);
  free(r->exp);
  free(r->nterms);
  free(r->first_extra);
  memset(r, 0, sizeof *r);
}
