/* Host-side repack of packed rows into the CUDA module's resident layout
 * (layout.h). Plain C: the module and the CPU-side layout test share it. */
#include <string.h>

#include "layout.h"

/* NF4 row: within each full 64-byte segment, lane t's 16 bytes are the
 * bytes of k [16t, 16t+16) of block 0 and then of block 1. */
void qgc_repack_nf4_row(int64_t k, const uint8_t *src, uint8_t *dst) {
  const int64_t nfull = k / 128;
  for (int64_t seg = 0; seg < nfull; seg++) {
    const uint8_t *s = src + seg * 64;
    uint8_t *d = dst + seg * 64;
    for (int t = 0; t < 4; t++) {
      memcpy(d + 16 * t, s + 8 * t, 8);
      memcpy(d + 16 * t + 8, s + 32 + 8 * t, 8);
    }
  }
  if (k % 128) memcpy(dst + nfull * 64, src + nfull * 64, 32); /* tail: as packed */
}

/* Q2_0 word of (64-block blk, lane t): codes of k = 64 blk + 16 t + 4 s + j
 * (s, j = 0..3), pair i = 2 s + j / 2 at bit 2 i (j even) or 16 + 2 i. */
static uint32_t q2_word(const uint8_t *codes, int64_t blk, int t) {
  uint32_t w = 0;
  for (int s = 0; s < 4; s++) {
    const uint32_t byte = codes[blk * 16 + 4 * t + s]; /* k 64 blk + 16 t + 4 s .. +3 */
    for (int j = 0; j < 4; j++) {
      const uint32_t c = (byte >> (2 * j)) & 3u;
      const int i = 2 * s + j / 2;
      w |= c << ((j & 1) ? 16 + 2 * i : 2 * i);
    }
  }
  return w;
}

/* Q2_0 row: split the [d][codes] blocks into codes (k/4 bytes, packed order,
 * in `tmp`) and d's (into row_scales), then write the resident words. */
void qgc_repack_q2_row(int64_t k, int32_t group, const uint8_t *src, uint8_t *tmp, uint16_t *row_scales,
                       uint8_t *dst) {
  const int64_t ngroups = k / group;
  const size_t cb = (size_t)group / 4;
  for (int64_t b = 0; b < ngroups; b++) {
    const uint8_t *blk = src + b * (int64_t)(2 + cb);
    row_scales[b] = (uint16_t)(blk[0] | (blk[1] << 8));
    memcpy(tmp + b * (int64_t)cb, blk + 2, cb);
  }
  const int64_t nblk = k / 64, nfull = k / 256;
  for (int64_t blk = 0; blk < nblk; blk++) {
    const int64_t seg = blk / 4;
    const int b = (int)(blk % 4);
    for (int t = 0; t < 4; t++) {
      const int64_t word = seg < nfull ? seg * 16 + 4 * t + b : nfull * 16 + 4 * b + t;
      const uint32_t w = q2_word(tmp, blk, t);
      memcpy(dst + word * 4, &w, 4);
    }
  }
}

void qgc_layout_shape(qgc_layout *L, const qgemv_weight_desc *d, qg_layout_id id) {
  L->id = id;
  L->n = d->n;
  L->k = d->k;
  L->group = d->group;
  L->row_bytes = qgc_row_bytes(id, d->k);
  /* The core bounded n * k already (the host data exists); these fit. */
  L->bytes = (size_t)d->n * ((size_t)L->row_bytes + (size_t)(d->k / d->group) * (size_t)qgc_scale_size(id));
}

void qgc_repack_rows(const qgemv_weight_desc *d, qg_layout_id f, int64_t r0, int64_t rows, uint8_t *codes,
                     char *scales, uint8_t *tmp, uint16_t *row_scales) {
  const int32_t group = d->group;
  const int64_t k = d->k, row_bytes = qgc_row_bytes(f, k);
  const int64_t scales_per_row = k / group;
  const size_t src_row = f == QG_LAYOUT_NF4 ? (size_t)(k / 2) : (size_t)(k / group) * (2 + (size_t)group / 4);
  const size_t ss = (size_t)qgc_scale_size(f), spseg = (size_t)qgc_seg_scales(f, group);
  const int64_t nfull = k / qgc_seg_k(f), tail = scales_per_row - nfull * (int64_t)spseg;
  for (int64_t r = 0; r < rows; r++) {
    const uint8_t *src = (const uint8_t *)d->data + (size_t)(r0 + r) * src_row;
    const char *rs; /* this row's scales in packed order */
    if (f == QG_LAYOUT_NF4) {
      qgc_repack_nf4_row(k, src, codes + (size_t)r * (size_t)row_bytes);
      rs = (const char *)(d->scales + (size_t)(r0 + r) * (size_t)scales_per_row);
    } else {
      qgc_repack_q2_row(k, group, src, tmp, row_scales, codes + (size_t)r * (size_t)row_bytes);
      rs = (const char *)row_scales;
    }
    for (int64_t seg = 0; seg < nfull; seg++)
      memcpy(scales + ((size_t)seg * (size_t)rows + (size_t)r) * spseg * ss, rs + (size_t)seg * spseg * ss,
             spseg * ss);
    if (tail)
      memcpy(scales + ((size_t)nfull * (size_t)rows * spseg + (size_t)r * (size_t)tail) * ss,
             rs + (size_t)nfull * spseg * ss, (size_t)tail * ss);
  }
}
