/* Portable level: f32 arithmetic, each block decoded once for all m rows,
 * its scale applied once to the block's sum rather than to every element. */
#include "../core/formats.h"
#include "cpu.h"

static bool always(void) { return true; }

/* Unscaled values of block b of row i (LUT entries, or code - 1); returns
 * the block's scale. */
static float decode_unscaled(const qgemv_weight_desc *d, int64_t i, int64_t b, float *wv) {
  int32_t g = d->group;
  int64_t per_row = d->k / g;
  if (d->format == QGEMV_NF4) {
    const uint8_t *p = (const uint8_t *)d->data + (size_t)i * (size_t)(d->k / 2) + (size_t)b * (size_t)(g / 2);
    for (int32_t j = 0; j < g / 2; j++) {
      wv[2 * j] = qg_nf4_lut[p[j] & 0xf];
      wv[2 * j + 1] = qg_nf4_lut[p[j] >> 4];
    }
    return d->scales[(size_t)i * (size_t)per_row + (size_t)b];
  }
  const uint8_t *blk = (const uint8_t *)d->data + ((size_t)i * (size_t)per_row + (size_t)b) * qg_q2_block_bytes(g);
  for (int32_t j = 0; j < g; j++) wv[j] = (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1);
  return qgemv_f16_to_f32((uint16_t)(blk[0] | (blk[1] << 8)));
}

static void scalar_rows(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  const qgemv_weight_desc *d = &job->w->desc;
  int32_t g = d->group;
  int64_t per_row = d->k / g;
  enum { MT = 16 }; /* activation rows per pass over the weight row */
  float wv[128], acc[MT];
  for (int64_t i = row0; i < row1; i++) {
    for (int64_t r0 = 0; r0 < job->m; r0 += MT) {
      int64_t mt = job->m - r0 < MT ? job->m - r0 : MT;
      for (int64_t r = 0; r < mt; r++) acc[r] = 0.0f;
      for (int64_t b = 0; b < per_row; b++) {
        float scale = decode_unscaled(d, i, b, wv);
        for (int64_t r = 0; r < mt; r++) {
          const float *xr = job->xn + (size_t)(r0 + r) * (size_t)d->k + (size_t)b * (size_t)g;
          float s = 0.0f;
          for (int32_t j = 0; j < g; j++) s += wv[j] * xr[j];
          acc[r] += s * scale;
        }
      }
      for (int64_t r = 0; r < mt; r++) qg_cpu_store(job, r0 + r, i, acc[r]);
    }
  }
}

const qg_cpu_level qg_cpu_level_scalar = {
    .name = "scalar", .wants_double = false, .available = always, .nf4_rows = scalar_rows, .q2_rows = scalar_rows,
};
