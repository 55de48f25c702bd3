/* Host-side repack into the lookup-table layout (lut_layout.h), and the
 * choice of its launch geometry. Plain C: the module and the CPU-side
 * emulation test (test_cuda_lut) share it. */
#include <string.h>

#include "lut_layout.h"

/* n's multiple for the layout: R 1024's, the shapes the form held before
 * R 512 (a weight of n = 512 x odd would take R 512 alone, not measured) */
#define LUT_N_MULTIPLE (QGC_LUT_WARPS * QGC_LUT_BATCH * 4)

/* n and k within int: the kernel's row and column indices */
int qgc_lut_shape_ok(qgemv_format f, int64_t n, int64_t k) {
  return n > 0 && k > 0 && n <= INT32_MAX && k <= INT32_MAX && n % LUT_N_MULTIPLE == 0 && k % qgc_lut_chunk_k(f) == 0;
}

int qgc_lut_choose(qgemv_format f, int64_t n, int64_t k, int sms, int min_rows, qgc_lut_geom *g) {
  if (!qgc_lut_shape_ok(f, n, k) || sms < 1) return 0;
  const int64_t chunks = k / qgc_lut_chunk_k(f);
  qgc_lut_geom best = {0, 0, 0, 0};
  for (int nb = 8; nb >= 2; nb /= 2) {
    const int rows = QGC_LUT_WARPS * QGC_LUT_BATCH * nb;
    if (rows < min_rows) break;
    if (n % rows) continue;
    const int64_t row_units = n / rows;
    for (int s = 1; s <= QGC_LUT_MAX_SPLIT && s <= chunks; s++) {
      if (chunks % s) continue;
      const int64_t units = row_units * s;
      if (units > sms && s > 1) break; /* past one wave only at S 1 */
      /* one wave beats more; in one wave the most units, past it the
       * fewest (a larger R builds fewer tables a row); a tie keeps the
       * larger R */
      const int fits = units <= sms, best_fits = best.units > 0 && best.units <= sms;
      const int better = best.units == 0 || (fits && !best_fits) ||
                         (fits && best_fits && units > best.units) || (!fits && !best_fits && units < best.units);
      if (better) best = (qgc_lut_geom){nb, rows, s, units};
    }
  }
  *g = best;
  return best.units > 0;
}

int qgc_lut_fills(const qgc_lut_geom *g, int sms) { return g->units * 4 >= (int64_t)sms * 3; }

int qgc_lut_auto(qgemv_format f, const qgc_lut_geom *g, int sms) { return f == QGEMV_NF4 && qgc_lut_fills(g, sms); }

int qgc_lut_l2pf(qgemv_format f, const qgc_lut_geom *g, int64_t k) {
  const int64_t chunks_per_cta = k / qgc_lut_chunk_k(f) / g->ksplit;
  return f == QGEMV_NF4 && chunks_per_cta == 1 ? QGC_LUT_L2PF_BATCHES : 0;
}

int qgc_layout_pref_parse(const char *s, qgc_layout_pref *pref) {
  if (s == NULL || *s == '\0' || strcmp(s, "auto") == 0)
    *pref = QGC_LAYOUT_AUTO;
  else if (strcmp(s, "tiles") == 0)
    *pref = QGC_LAYOUT_TILES;
  else if (strcmp(s, "lut") == 0)
    *pref = QGC_LAYOUT_LUT;
  else if (strcmp(s, "share") == 0)
    *pref = QGC_LAYOUT_SHARE;
  else
    return 0;
  return 1;
}

size_t qgc_lut_code_bytes(qgemv_format f, int64_t n, int64_t k) {
  return (size_t)n * (size_t)k / (f == QGEMV_NF4 ? 2u : 4u);
}

size_t qgc_lut_scale_bytes_total(qgemv_format f, int64_t n, int64_t k, int32_t group) {
  return (size_t)n * (size_t)(k / group) * (size_t)qgc_lut_scale_bytes(f);
}

size_t qgc_lut_work_bytes(int64_t n, int ksplit) { return ((size_t)ksplit * (size_t)n + (size_t)ksplit) * 8u; }

/* A lane's 4 slots of a row are 4 consecutive packed bytes (NF4: 8
 * consecutive k; Q2_0: 16, inside one group since 16 divides it): this
 * returns the first, for the row's chunk c and lane l. */
static const uint8_t *lane_bytes(const qgemv_weight_desc *d, int64_t row, int64_t c, int l) {
  const uint8_t *data = (const uint8_t *)d->data;
  const int64_t k = c * qgc_lut_chunk_k(d->format) + (int64_t)(d->format == QGEMV_NF4 ? 2 : 4) * QGC_LUT_SLOTS * l;
  if (d->format == QGEMV_NF4) return data + row * (d->k / 2) + k / 2;
  const int64_t bb = 2 + d->group / 4, blocks = d->k / d->group;
  return data + (row * blocks + k / d->group) * bb + 2 + (k % d->group) / 4;
}

void qgc_lut_repack_codes(const qgemv_weight_desc *d, int64_t c0, int64_t count, uint8_t *dst) {
  const int64_t groups = d->n / QGC_LUT_GROUP_ROWS;
  for (int64_t c = c0; c < c0 + count; c++)
    for (int64_t g = 0; g < groups; g++)
      for (int l = 0; l < 32; l++)
        for (int r = 0; r < QGC_LUT_GROUP_ROWS; r++, dst += QGC_LUT_SLOTS)
          memcpy(dst, lane_bytes(d, QGC_LUT_GROUP_ROWS * g + r, c, l), QGC_LUT_SLOTS);
}

void qgc_lut_repack_scales(const qgemv_weight_desc *d, int64_t c0, int64_t count, uint8_t *dst) {
  const int ck = qgc_lut_chunk_k(d->format), nblk = qgc_lut_chunk_blocks(d->format, d->group);
  const int sb = qgc_lut_scale_bytes(d->format);
  const int64_t groups = d->n / QGC_LUT_GROUP_ROWS, blocks = d->k / d->group;
  const uint8_t *data = (const uint8_t *)d->data;
  const size_t block_bytes = 2 + (size_t)d->group / 4;
  for (int64_t c = c0; c < c0 + count; c++)
    for (int64_t g = 0; g < groups; g++)
      for (int b = 0; b < nblk; b++)
        for (int r = 0; r < QGC_LUT_GROUP_ROWS; r++) {
          const int64_t row = QGC_LUT_GROUP_ROWS * g + r, blk = (c * ck) / d->group + b;
          const void *src = d->format == QGEMV_NF4 ? (const void *)(d->scales + row * blocks + blk)
                                                   : (const void *)(data + (size_t)(row * blocks + blk) * block_bytes);
          memcpy(dst, src, (size_t)sb);
          dst += sb;
        }
}
