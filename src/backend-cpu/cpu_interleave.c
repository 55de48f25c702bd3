/* Resident layouts with rows interleaved in groups (cpu_interleave.h). */
#include "cpu_interleave.h"

#include <string.h>

void qg_interleave_q2(const qgemv_weight_desc *d, int lanes, int64_t r0, int64_t r1, uint8_t *out) {
  const int g = d->group;
  const int64_t nb = d->k / g;
  const size_t blk = qg_interleave_q2_block(g);
  const uint8_t *src = d->data;
  for (int64_t gr = r0; gr < r1; gr += lanes) {
    const int rows = r1 - gr < lanes ? (int)(r1 - gr) : lanes; /* the last group may be narrower */
    for (int64_t b = 0; b < nb; b++, out += (size_t)rows * blk) {
      memset(out, 0, (size_t)rows * blk);
      uint8_t *codes = out + 2 * rows;
      for (int r = 0; r < rows; r++) {
        const uint8_t *p = src + ((size_t)(gr + r) * (size_t)nb + (size_t)b) * blk;
        memcpy(out + 2 * r, p, 2);
        for (int j = 0; j < g; j++) {
          int code = (p[2 + j / 4] >> (2 * (j % 4))) & 3;
          int v = j / 16, f = (j % 16) / 4, t = j % 4;
          codes[(size_t)v * 4u * (size_t)rows + 4u * (size_t)r + (size_t)t] |= (uint8_t)(code << (2 * f));
        }
      }
    }
  }
}

void qg_interleave_nf4(const qgemv_weight_desc *d, int lanes, int64_t r0, int64_t r1, uint8_t *out) {
  const int64_t nb = d->k / 64;
  const uint8_t *src = d->data;
  for (int64_t gr = r0; gr < r1; gr += lanes) {
    const int rows = r1 - gr < lanes ? (int)(r1 - gr) : lanes;
    for (int64_t b = 0; b < nb; b++, out += (size_t)rows * QG_INTERLEAVE_NF4_BLOCK) {
      memset(out, 0, (size_t)rows * QG_INTERLEAVE_NF4_BLOCK);
      uint8_t *codes = out + 4 * rows;
      for (int r = 0; r < rows; r++) {
        memcpy(out + 4 * r, &d->scales[(size_t)(gr + r) * (size_t)nb + (size_t)b], 4);
        const uint8_t *p = src + (size_t)(gr + r) * (size_t)(d->k / 2) + (size_t)b * 32u;
        for (int j = 0; j < 64; j++) {
          int code = (p[j / 2] >> (4 * (j % 2))) & 15;
          int v = j / 8, t = j % 8;
          codes[(size_t)v * 4u * (size_t)rows + 4u * (size_t)r + (size_t)(t / 2)] |= (uint8_t)(code << (4 * (t % 2)));
        }
      }
    }
  }
}
