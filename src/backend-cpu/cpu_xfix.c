/* Activations in block fixed point (cpu_xfix.h): the term selection, and
 * the portable term. Term 0 of each block depends on that block alone;
 * the further terms are chosen serially in a fixed order; so the
 * representation is a function of x alone. */
#include "cpu_xfix.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* Terms one block may have. Each further term's grid is at least 2^6
 * times finer than the last (cpu_xfix.h), so 13 reach 2^-94 of the
 * block's largest: a block that needs more (a range of f32 that wide
 * inside it) goes to the exact path, which adds nothing to P. */
#define MAX_TERMS 13

static size_t round64(size_t n) { return (n + 63u) & ~(size_t)63u; }

/* Room for extra terms per row: half the blocks, and 4. */
static int64_t extra_cap(int64_t nb) { return nb / 2 + 4; }

size_t qg_xfix_row_bytes(int64_t k, int g) {
  int64_t nb = k / g, cap = extra_cap(nb);
  return round64(4u * (size_t)k) + round64((size_t)nb * sizeof(qg_xfix_block)) +
         round64((size_t)cap * sizeof(qg_xfix_term)) + round64((size_t)cap * 4u * (size_t)g) +
         round64((size_t)nb * sizeof(double));
}

double qg_xfix_term_portable(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t) {
  float max = 0.0f;
  for (int j = 0; j < g; j++) {
    if (!isfinite(res[j])) return -1.0;
    max = fmaxf(max, fabsf(res[j]));
  }
  int e = 0;
  if (max > 0.0f) {
    frexpf(max, &e); /* max < 2^e */
    e -= bits;      /* |q| <= 2^bits: three digits or one (cpu_xfix.h) */
  }
  t->scale = ldexp(1.0, e);
  memset(t->dsum, 0, sizeof t->dsum);
  double p = 0.0;
  for (int j = 0; j < g; j++) {
    /* exact: |res 2^-e| <= 2^bits; a value that underflows rounds to 0 */
    const float s = ldexpf(res[j], -e), q = rintf(s);
    /* exact (cpu_xfix.h); as (s - q) 2^e, since q 2^e alone overflows
     * where an element within half a step of 2^128 rounds up to it */
    if (q != 0.0f) res[j] = ldexpf(s - q, e);
    if (res[j] != 0.0f) {
      double r = (double)res[j] / (double)x[j];
      p += r * r;
    }
    int32_t v = (int32_t)q;
    for (int d = 0; d < 4; d++) {
      int32_t low = (int32_t)(((uint32_t)v & 0xffu) ^ 0x80u) - 0x80; /* the low byte, signed */
      out[16 * (j / 4) + 4 * d + j % 4] = (int8_t)low;
      t->dsum[d] += low;
      v = (v - low) / 256; /* exact */
    }
  }
  return p;
}

/* The block's first `terms` terms from scratch (the term function is
 * deterministic, so a term recomputed is the term stored); the last one's
 * digits go to out and its scale and sums to *last. Returns the block's P
 * share after them, < 0 for a non-finite x. */
static double block_terms(qg_xfix_term_fn term, const float *x, int g, int terms, int8_t *out, qg_xfix_term *last) {
  float res[QG_XFIX_BLOCK_MAX];
  int8_t scratch[4 * QG_XFIX_BLOCK_MAX];
  memcpy(res, x, (size_t)g * sizeof *res);
  double p = 0.0;
  for (int i = 0; i < terms && p >= 0.0; i++)
    p = term(x, res, g, i ? QG_XFIX_BITS_MORE : QG_XFIX_BITS0, i == terms - 1 ? out : scratch, last);
  return p;
}

static double sum_p(const double *pb, int64_t nb) {
  double total = 0.0;
  for (int64_t b = 0; b < nb; b++) total += pb[b];
  return total;
}

/* The pieces of one row's workspace (qg_xfix_row_bytes). */
typedef struct row_ws {
  int8_t *digits;
  qg_xfix_block *blocks;
  qg_xfix_term *extra;
  int8_t *extra_digits;
  double *pb; /* each block's share of P */
} row_ws;

static row_ws row_pieces(int64_t k, int g, void *ws) {
  const int64_t nb = k / g, cap = extra_cap(nb);
  uint8_t *p = ws;
  row_ws r;
  r.digits = (int8_t *)p;
  p += round64(4u * (size_t)k);
  r.blocks = (qg_xfix_block *)p;
  p += round64((size_t)nb * sizeof *r.blocks);
  r.extra = (qg_xfix_term *)p;
  p += round64((size_t)cap * sizeof *r.extra);
  r.extra_digits = (int8_t *)p;
  p += round64((size_t)cap * 4u * (size_t)g);
  r.pb = (double *)p;
  return r;
}

void qg_xfix_first(const float *x, int64_t k, int g, void *ws, qg_xfix_term_fn term, int64_t b0, int64_t b1) {
  const row_ws r = row_pieces(k, g, ws);
  for (int64_t b = b0; b < b1; b++) {
    qg_xfix_block *bl = &r.blocks[b];
    memset(bl, 0, sizeof *bl);
    r.pb[b] = block_terms(term, x + b * g, g, 1, r.digits + 4 * b * g, &bl->t0);
    bl->terms = r.pb[b] >= 0.0; /* else the exact path, IEEE semantics */
    if (r.pb[b] < 0.0) r.pb[b] = 0.0;
  }
}

qg_xfix_row qg_xfix_finish(const float *x, int64_t k, int g, void *ws, qg_xfix_term_fn term) {
  const int64_t nb = k / g, cap = extra_cap(nb);
  const row_ws r = row_pieces(k, g, ws);
  qg_xfix_block *blocks = r.blocks;
  double *pb = r.pb;
  /* Further terms, the block with the largest share of P first (the lowest
   * index among equals), until P <= tau^2 with the margin for the rounding
   * of pb and of the sum. Rare: the sum is recomputed each time. */
  const double limit = QG_XFIX_TAU * QG_XFIX_TAU / (1.0 + 2 * QG_XFIX_MARGIN);
  int64_t used = 0;
  while (sum_p(pb, nb) > limit) {
    int64_t worst = 0;
    for (int64_t b = 1; b < nb; b++)
      if (pb[b] > pb[worst]) worst = b;
    qg_xfix_block *bl = &blocks[worst];
    if (used == cap || bl->terms == MAX_TERMS) {
      bl->terms = 0; /* to the exact path */
      pb[worst] = 0.0;
      continue;
    }
    bl->terms++;
    used++;
    qg_xfix_term unused;
    int8_t scratch[4 * QG_XFIX_BLOCK_MAX];
    pb[worst] = block_terms(term, x + worst * g, g, bl->terms, scratch, &unused);
  }

  /* The extra terms, grouped by block in order. */
  int n = 0;
  for (int64_t b = 0; b < nb; b++) {
    blocks[b].first = n;
    for (int t = 2; t <= blocks[b].terms; t++, n++)
      block_terms(term, x + b * g, g, t, r.extra_digits + (size_t)n * 4u * (size_t)g, &r.extra[n]);
  }
  return (qg_xfix_row){
      .digits = r.digits, .blocks = blocks, .extra = r.extra, .extra_digits = r.extra_digits, .nextra = n};
}

qg_xfix_row qg_xfix_quantize(const float *x, int64_t k, int g, void *ws, qg_xfix_term_fn term) {
  qg_xfix_first(x, k, g, ws, term, 0, k / g);
  return qg_xfix_finish(x, k, g, ws, term);
}
