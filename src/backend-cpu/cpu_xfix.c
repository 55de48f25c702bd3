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

/* Leaves of the row's tournament tree: the blocks, padded to a power of
 * two. */
static int64_t tree_leaves(int64_t nb) {
  int64_t n = 1;
  while (n < nb) n *= 2;
  return n;
}

/* The pieces of one row's workspace. digits .. pb: the row as the kernels
 * read it (cpu_xfix.h); res: each block's residuals after its terms so far
 * (a further term continues from them); the further terms in the order they
 * were chosen (slot_*), before finish groups them by block; the tree over
 * the blocks' P shares (sum and largest). */
typedef struct row_ws {
  int8_t *digits;
  qg_xfix_block *blocks;
  qg_xfix_term *extra;
  int8_t *extra_digits;
  double *pb;
  float *res;
  qg_xfix_term *slot_term;
  int8_t *slot_digits;
  int64_t *slot_block;
  double *tsum;
  int64_t *tmax;
} row_ws;

/* Walks (or, with ws = NULL, measures) one row's workspace. */
static size_t row_layout(int64_t k, int g, void *ws, row_ws *r) {
  const int64_t nb = k / g, cap = extra_cap(nb), nt = 2 * tree_leaves(nb);
  const size_t sizes[11] = {4u * (size_t)k,
                            (size_t)nb * sizeof(qg_xfix_block),
                            (size_t)cap * sizeof(qg_xfix_term),
                            (size_t)cap * 4u * (size_t)g,
                            (size_t)nb * sizeof(double),
                            (size_t)k * sizeof(float),
                            (size_t)cap * sizeof(qg_xfix_term),
                            (size_t)cap * 4u * (size_t)g,
                            (size_t)cap * sizeof(int64_t),
                            (size_t)nt * sizeof(double),
                            (size_t)nt * sizeof(int64_t)};
  void *at[11];
  size_t off = 0;
  for (int i = 0; i < 11; i++) {
    at[i] = ws ? (char *)ws + off : NULL;
    off += round64(sizes[i]);
  }
  if (r) {
    r->digits = at[0], r->blocks = at[1], r->extra = at[2], r->extra_digits = at[3], r->pb = at[4];
    r->res = at[5], r->slot_term = at[6], r->slot_digits = at[7], r->slot_block = at[8];
    r->tsum = at[9], r->tmax = at[10];
  }
  return off;
}

size_t qg_xfix_row_bytes(int64_t k, int g) { return row_layout(k, g, NULL, NULL); }

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

/* Node i of the tree (leaves at n + b): the sum of its leaves' shares, in
 * the tree's fixed order, and the leaf with the largest share (the lowest
 * index among equals). Both depend on the shares alone, not on the order
 * of the updates that made them. */
static void tree_pull(const row_ws *r, int64_t i) {
  const int64_t a = 2 * i, b = 2 * i + 1;
  r->tsum[i] = r->tsum[a] + r->tsum[b];
  const int64_t la = r->tmax[a], lb = r->tmax[b]; /* -1: padding */
  r->tmax[i] = lb >= 0 && (la < 0 || r->pb[lb] > r->pb[la]) ? lb : la; /* la < lb: ties keep la */
}

static void tree_build(const row_ws *r, int64_t nb) {
  const int64_t n = tree_leaves(nb);
  for (int64_t b = 0; b < n; b++) {
    r->tsum[n + b] = b < nb ? r->pb[b] : 0.0;
    r->tmax[n + b] = b < nb ? b : -1;
  }
  for (int64_t i = n - 1; i >= 1; i--) tree_pull(r, i);
}

static void tree_set(const row_ws *r, int64_t nb, int64_t b, double p) {
  const int64_t n = tree_leaves(nb);
  r->pb[b] = p;
  r->tsum[n + b] = p;
  for (int64_t i = (n + b) / 2; i >= 1; i /= 2) tree_pull(r, i);
}

void qg_xfix_first(const float *x, int64_t k, int g, void *ws, qg_xfix_term_fn term, int64_t b0, int64_t b1) {
  row_ws r;
  row_layout(k, g, ws, &r);
  for (int64_t b = b0; b < b1; b++) {
    qg_xfix_block *bl = &r.blocks[b];
    memset(bl, 0, sizeof *bl);
    float *res = r.res + b * g;
    memcpy(res, x + b * g, (size_t)g * sizeof *res);
    double p = term(x + b * g, res, g, QG_XFIX_BITS0, r.digits + 4 * b * g, &bl->t0);
    bl->terms = p >= 0.0; /* else the exact path, IEEE semantics */
    r.pb[b] = p >= 0.0 ? p : 0.0;
  }
}

qg_xfix_row qg_xfix_finish(const float *x, int64_t k, int g, void *ws, qg_xfix_term_fn term) {
  const int64_t nb = k / g, cap = extra_cap(nb);
  row_ws r;
  row_layout(k, g, ws, &r);
  qg_xfix_block *blocks = r.blocks;
  /* Further terms, the block with the largest share of P first (the lowest
   * index among equals), until P <= tau^2 with the margin for the rounding
   * of the shares and of their sum. Each continues from the block's
   * residuals (the term function is deterministic: a term computed from
   * scratch would be the same) and goes to the next slot. */
  const double limit = QG_XFIX_TAU * QG_XFIX_TAU / (1.0 + 2 * QG_XFIX_MARGIN);
  int64_t used = 0;
  tree_build(&r, nb);
  while (r.tsum[1] > limit) {
    const int64_t worst = r.tmax[1];
    qg_xfix_block *bl = &blocks[worst];
    if (used == cap || bl->terms == MAX_TERMS) {
      bl->terms = 0; /* to the exact path (its slots are dropped below) */
      tree_set(&r, nb, worst, 0.0);
      continue;
    }
    bl->terms++;
    r.slot_block[used] = worst;
    const double p = term(x + worst * g, r.res + worst * g, g, QG_XFIX_BITS_MORE,
                          r.slot_digits + (size_t)used * 4u * (size_t)g, &r.slot_term[used]);
    used++;
    tree_set(&r, nb, worst, p);
  }

  /* The further terms grouped by block in order, each block's in the order
   * it got them. first counts up as a block's slots are placed. */
  int n = 0;
  for (int64_t b = 0; b < nb; b++) {
    blocks[b].first = n;
    if (blocks[b].terms > 1) n += blocks[b].terms - 1;
  }
  for (int64_t s = 0; s < used; s++) {
    qg_xfix_block *bl = &blocks[r.slot_block[s]];
    if (bl->terms < 2) continue; /* its block went to the exact path */
    const int at = bl->first++;
    r.extra[at] = r.slot_term[s];
    memcpy(r.extra_digits + (size_t)at * 4u * (size_t)g, r.slot_digits + (size_t)s * 4u * (size_t)g, 4u * (size_t)g);
  }
  for (int64_t b = 0; b < nb; b++)
    if (blocks[b].terms > 1) blocks[b].first -= blocks[b].terms - 1;
  return (qg_xfix_row){
      .digits = r.digits, .blocks = blocks, .extra = r.extra, .extra_digits = r.extra_digits, .nextra = n};
}

qg_xfix_row qg_xfix_quantize(const float *x, int64_t k, int g, void *ws, qg_xfix_term_fn term) {
  qg_xfix_first(x, k, g, ws, term, 0, k / g);
  return qg_xfix_finish(x, k, g, ws, term);
}
