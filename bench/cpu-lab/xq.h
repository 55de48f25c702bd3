/* Activations as block fixed point, for integer dot products (lab).
 *
 * A row x[k] (f32, the values the float path uses) is cut into blocks of g
 * (the weight's block). Block b holds x_j = sum_t q_tj 2^(e_tb), terms t =
 * 0..T_b-1, each q_tj an integer of at most 2^30 in magnitude stored as D
 * signed base-256 digits (D = 4: q = d0 + 256 d1 + 65536 d2 + 2^24 d3,
 * d in [-128, 127]; D = 3 keeps |q| <= 2^22). Term 0 covers the block with
 * its largest element; term t + 1 represents what term t left over.
 *
 * The error of the representation, delta_j = x_j - sum_t q_tj 2^e_tb, is
 * bounded for every weight row w by Cauchy-Schwarz:
 *   |sum_j w_j delta_j| = |sum_j (w_j x_j)(delta_j / x_j)|
 *                      <= sqrt(sum_j (w_j x_j)^2) sqrt(sum_j (delta_j/x_j)^2)
 *                       = R * sqrt(P),
 * with P computed here exactly from the data (delta_j = 0 where x_j = 0,
 * which every term represents exactly). Blocks get further terms, largest
 * P_b first, until P <= tau^2: then the integer path's error from x is at
 * most tau R for every weight matrix. f32 inputs always get there: a term's
 * grid is 2^30 times finer than the last, and once it is as fine as every
 * element's ulp (at most 11 terms: f32 spans 2^-149 .. 2^128) the block is
 * exact. */
#ifndef LAB_XQ_H
#define LAB_XQ_H

#include <stdint.h>

#define XQ_MAX_TERMS 12

typedef struct xq_extra {
  int32_t block; /* block index */
  int16_t exp;   /* the term's scale 2^exp */
  int32_t dsum[4]; /* sum over the block of each digit plane */
  int8_t *digits;  /* 4g bytes, laid out as xq_row.digits */
} xq_extra;

typedef struct xq_row {
  int64_t k;
  int g, nb, ndigits; /* ndigits: 4, or 3 (digit 3 all zero) */
  /* term 0: digit p of element j at digits[16 (j / 4) + 4 p + j % 4], so
   * the 4 digits of 4 consecutive elements in one plane are one dword and
   * the 4 planes of those elements one 16-byte line */
  int8_t *digits;
  int32_t *dsum;     /* [nb][4]: term 0's digit sums per block */
  int16_t *exp;      /* [nb]: term 0's scale exponent */
  uint8_t *nterms;   /* [nb] */
  int32_t *first_extra; /* [nb]: index into extra of the block's term 1 */
  int nextra, cap_extra;
  xq_extra *extra;
  double p;          /* sum of (delta_j / x_j)^2 after all terms */
} xq_row;

/* tau: the bound on the relative error from x (5e-4 in the design). */
int xq_quantize(const float *x, int64_t k, int g, int ndigits, double tau, xq_row *out);
void xq_free(xq_row *r);

#endif
