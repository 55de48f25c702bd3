/* Host-side repack of packed weights into the CUDA module's resident
 * layout (layout.h). Plain C: the module and the CPU-side layout test
 * share it. */
#include <string.h>

#include "layout.h"

void qgc_layout_shape(qgc_layout *L, const qgemv_weight_desc *d, qg_layout_id id) {
  const int ck = qgc_chunk_k(d->format);
  L->id = id;
  L->format = d->format;
  L->n = d->n;
  L->k = d->k;
  L->group = d->group;
  L->ntiles = d->n / QGC_TILE_ROWS;
  L->nch = (int)((d->k + ck - 1) / ck);
  L->last_blocks = (int)((d->k - (int64_t)(L->nch - 1) * ck) / 64);
  L->tile_bytes = (int64_t)(L->nch - 1) * qgc_chunk_bytes(d->format, d->group, ck / 64) +
                  qgc_chunk_bytes(d->format, d->group, L->last_blocks);
  /* The core bounded n * k already (the host data exists); these fit. */
  L->bytes = (size_t)L->ntiles * (size_t)L->tile_bytes +
             (size_t)(d->n % QGC_TILE_ROWS) * qgc_packed_row_bytes(d->format, d->k, d->group);
}

/* A packed Q2_0 byte (codes j = 0..3 at bits 2j) spread into the word's
 * pairs of its step s = 0: pair i = j / 2 at bit 2i (j even) or 16 + 2i
 * (j odd); step s is that << 4s. */
static uint32_t q2_spread(uint32_t byte) {
  const uint32_t c0 = byte & 3u, c1 = (byte >> 2) & 3u, c2 = (byte >> 4) & 3u, c3 = (byte >> 6) & 3u;
  return (c0 | c2 << 2) | (c1 | c3 << 2) << 16;
}

/* Q2_0 word of (64-block blk, lane t) of a row: codes of k = 64 blk + 16 t
 * + 4 s + j (s, j = 0..3), pair i = 2 s + j / 2 at bit 2 i (j even) or
 * 16 + 2 i (j odd). The 16 codes are 4 consecutive packed bytes of one
 * group. */
static uint32_t q2_word(const uint8_t *row, int32_t group, int64_t blk, int t) {
  const int64_t k0 = 64 * blk + 16 * t;
  const uint8_t *b = row + (k0 / group) * (2 + group / 4) + 2 + (k0 % group) / 4;
  return q2_spread(b[0]) | q2_spread(b[1]) << 4 | q2_spread(b[2]) << 8 | q2_spread(b[3]) << 12;
}

/* The codes of chunk c (its `blocks` 64-blocks) of the tile whose first row
 * is r0, and then its scales. */
static void repack_chunk(const qgemv_weight_desc *d, int64_t r0, int64_t c, int blocks, uint8_t *dst) {
  const qgemv_format f = d->format;
  const int32_t group = d->group;
  const int64_t b0 = c * (qgc_chunk_k(f) / 64); /* first 64-block of the chunk in the row */
  const size_t row_bytes = f == QGEMV_NF4 ? (size_t)(d->k / 2) : (size_t)(d->k / group) * (2 + (size_t)group / 4);
  const uint8_t *data = (const uint8_t *)d->data;
  for (int lane = 0; lane < 32; lane++) {
    const int g = lane >> 2, t = lane & 3;
    const uint8_t *rg = data + (size_t)(r0 + g) * row_bytes, *rh = rg + 8 * row_bytes;
    if (f == QGEMV_NF4) {
      for (int j = 0; j < blocks; j++) {
        uint8_t *o = dst + j * 512 + lane * 16;
        const int64_t off = (b0 + j) * 32 + 8 * t;
        memcpy(o, rg + off, 8);
        memcpy(o + 8, rh + off, 8);
      }
    } else {
      for (int j = 0; 2 * j < blocks; j++) {
        const int64_t b = b0 + 2 * j;
        uint32_t w[4] = {q2_word(rg, group, b, t), q2_word(rh, group, b, t), 0, 0};
        if (2 * j + 1 < blocks) {
          w[2] = q2_word(rg, group, b + 1, t);
          w[3] = q2_word(rh, group, b + 1, t);
          memcpy(dst + j * 512 + lane * 16, w, 16);
        } else { /* the half word of an odd last chunk */
          memcpy(dst + j * 512 + lane * 8, w, 8);
        }
      }
    }
  }
  uint8_t *s = dst + qgc_chunk_code_bytes(f, blocks);
  const int groups = blocks * 64 / group, ss = qgc_scale_size(f);
  for (int r = 0; r < QGC_TILE_ROWS; r++) {
    const int64_t row = r0 + r;
    for (int q = 0; q < groups; q++) {
      const void *src = f == QGEMV_NF4 ? (const void *)(d->scales + (size_t)row * (size_t)(d->k / 64) + (size_t)(b0 + q))
                                       : (const void *)(data + (size_t)row * row_bytes +
                                                        (size_t)(b0 * 64 / group + q) * (2 + (size_t)group / 4));
      memcpy(s + QGC_SCALE_OFFSET(r, q, groups, ss), src, (size_t)ss);
    }
  }
}

void qgc_repack_tiles(const qgc_layout *L, const qgemv_weight_desc *d, int64_t tile0, int64_t count, uint8_t *dst) {
  const int full = qgc_chunk_k(L->format) / 64, ch = qgc_chunk_bytes(L->format, L->group, full);
  for (int64_t i = 0; i < count; i++) {
    uint8_t *t = dst + (size_t)i * (size_t)L->tile_bytes;
    for (int c = 0; c < L->nch; c++)
      repack_chunk(d, (tile0 + i) * QGC_TILE_ROWS, c, c + 1 < L->nch ? full : L->last_blocks, t + (size_t)c * ch);
  }
}

void qgc_repack_tail(const qgc_layout *L, const qgemv_weight_desc *d, uint8_t *dst) {
  const int64_t r0 = L->ntiles * QGC_TILE_ROWS, rows = L->n - r0;
  if (L->format == QGEMV_NF4) { /* codes [rows][k/2], then scales [rows][k/64] */
    const size_t cb = (size_t)(L->k / 2) * (size_t)rows;
    memcpy(dst, (const uint8_t *)d->data + (size_t)r0 * (size_t)(L->k / 2), cb);
    memcpy(dst + cb, d->scales + (size_t)r0 * (size_t)(L->k / 64), (size_t)rows * (size_t)(L->k / 64) * 4);
  } else { /* the rows' blocks as packed */
    const size_t rb = qgc_packed_row_bytes(L->format, L->k, L->group);
    memcpy(dst, (const uint8_t *)d->data + (size_t)r0 * rb, (size_t)rows * rb);
  }
}
