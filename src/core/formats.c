/* NF4 and Q2_0: sizes, validation, quantize and dequantize (DESIGN.md s.4). */
#include "formats.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "convert.h"
#include "error.h"

const float qg_nf4_lut[16] = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

const float *qgemv_nf4_table(void) { return qg_nf4_lut; }

bool qg_mul_size(int64_t a, int64_t b, size_t *out) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || (uint64_t)r > SIZE_MAX) return false;
  *out = (size_t)r;
  return true;
}

static const char *format_name(qgemv_format f) { return f == QGEMV_NF4 ? "NF4" : "Q2_0"; }

qgemv_status qg_check_shape(qgemv_format format, int64_t n, int64_t k, int32_t group,
                            int32_t *group_out, size_t *data_bytes, size_t *scale_count) {
  if (format != QGEMV_NF4 && format != QGEMV_Q2_0)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "format %d is not a qgemv_format (QGEMV_NF4 or QGEMV_Q2_0)",
                   (int)format);
  if (n <= 0 || k <= 0)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s weight shape n=%lld k=%lld: both must be > 0",
                   format_name(format), (long long)n, (long long)k);
  int32_t g;
  if (format == QGEMV_NF4) {
    if (group != 0 && group != QGEMV_NF4_BLOCK)
      return qg_fail(QGEMV_ERR_INVALID_ARG, "NF4 group=%d: NF4 blocks are 64 wide (pass 64 or 0)",
                     (int)group);
    g = QGEMV_NF4_BLOCK;
  } else {
    if (group != 64 && group != 128)
      return qg_fail(QGEMV_ERR_INVALID_ARG, "Q2_0 group=%d: the group must be 64 or 128", (int)group);
    g = group;
  }
  if (k % g != 0)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "k=%lld is not a multiple of the %s block %d",
                   (long long)k, format_name(format), (int)g);
  size_t blocks, bytes, per_block = format == QGEMV_NF4 ? (size_t)g / 2 : qg_q2_block_bytes(g);
  if (!qg_mul_size(n, k / g, &blocks) || !qg_mul_size((int64_t)blocks, (int64_t)per_block, &bytes))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s weight n=%lld k=%lld is too large: its size overflows",
                   format_name(format), (long long)n, (long long)k);
  if (format == QGEMV_NF4 && blocks > SIZE_MAX / sizeof(float))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "NF4 weight n=%lld k=%lld: its scale array overflows",
                   (long long)n, (long long)k);
  if (group_out) *group_out = g;
  if (data_bytes) *data_bytes = bytes;
  if (scale_count) *scale_count = format == QGEMV_NF4 ? blocks : 0;
  return QGEMV_OK;
}

size_t qgemv_data_bytes(qgemv_format format, int64_t n, int64_t k, int32_t group) {
  size_t bytes;
  if (qg_check_shape(format, n, k, group, NULL, &bytes, NULL) != QGEMV_OK) return 0;
  return bytes;
}

size_t qgemv_scale_count(qgemv_format format, int64_t n, int64_t k, int32_t group) {
  size_t count;
  if (qg_check_shape(format, n, k, group, NULL, NULL, &count) != QGEMV_OK) return 0;
  return count;
}

static const uint8_t *q2_block(const qgemv_weight_desc *d, int32_t g, int64_t r, int64_t b) {
  int64_t per_row = d->k / g;
  return (const uint8_t *)d->data + ((size_t)r * (size_t)per_row + (size_t)b) * qg_q2_block_bytes(g);
}

static uint16_t q2_scale_bits(const uint8_t *blk) { return (uint16_t)(blk[0] | (blk[1] << 8)); }

qgemv_status qg_check_desc(const qgemv_weight_desc *d, int32_t *group_out) {
  if (d == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "weight descriptor is NULL");
  int32_t g;
  size_t bytes, nscales;
  qgemv_status s = qg_check_shape(d->format, d->n, d->k, d->group, &g, &bytes, &nscales);
  if (s != QGEMV_OK) return s;
  if (d->data == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "weight descriptor: data is NULL");
  int64_t per_row = d->k / g;
  if (d->format == QGEMV_NF4) {
    if (d->scales == NULL)
      return qg_fail(QGEMV_ERR_INVALID_ARG, "NF4 weight descriptor: scales is NULL (NF4 needs n*k/64 f32 scales)");
    for (size_t i = 0; i < nscales; i++)
      if (!isfinite(d->scales[i]))
        return qg_fail(QGEMV_ERR_BAD_DATA, "NF4 scale of row %lld block %lld is %s: scales must be finite",
                       (long long)(i / (size_t)per_row), (long long)(i % (size_t)per_row),
                       isnan(d->scales[i]) ? "NaN" : "infinite");
  } else {
    if (d->scales != NULL)
      return qg_fail(QGEMV_ERR_INVALID_ARG,
                     "Q2_0 weight descriptor: scales must be NULL (Q2_0 keeps an fp16 scale inside each block)");
    for (int64_t r = 0; r < d->n; r++)
      for (int64_t b = 0; b < per_row; b++)
        if ((q2_scale_bits(q2_block(d, g, r, b)) & 0x7c00u) == 0x7c00u)
          return qg_fail(QGEMV_ERR_BAD_DATA, "Q2_0 scale of row %lld block %lld is %s: scales must be finite",
                         (long long)r, (long long)b,
                         (q2_scale_bits(q2_block(d, g, r, b)) & 0x3ffu) ? "NaN" : "infinite");
  }
  if (group_out) *group_out = g;
  return QGEMV_OK;
}

void qg_decode_block_f32(const qgemv_weight_desc *d, int32_t g, int64_t r, int64_t b, float *out) {
  if (d->format == QGEMV_NF4) {
    int64_t per_row = d->k / g;
    const uint8_t *p = (const uint8_t *)d->data + (size_t)r * (size_t)(d->k / 2) + (size_t)b * (size_t)(g / 2);
    float scale = d->scales[(size_t)r * (size_t)per_row + (size_t)b];
    for (int j = 0; j < g / 2; j++) {
      out[2 * j] = qg_nf4_lut[p[j] & 0xf] * scale;
      out[2 * j + 1] = qg_nf4_lut[p[j] >> 4] * scale;
    }
  } else {
    const uint8_t *blk = q2_block(d, g, r, b);
    float scale = qg_f16_to_f32(q2_scale_bits(blk));
    for (int j = 0; j < g; j++) out[j] = (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * scale;
  }
}

void qg_decode_block_f64(const qgemv_weight_desc *d, int32_t g, int64_t r, int64_t b, double *out) {
  if (d->format == QGEMV_NF4) {
    int64_t per_row = d->k / g;
    const uint8_t *p = (const uint8_t *)d->data + (size_t)r * (size_t)(d->k / 2) + (size_t)b * (size_t)(g / 2);
    double scale = d->scales[(size_t)r * (size_t)per_row + (size_t)b];
    for (int j = 0; j < g / 2; j++) {
      out[2 * j] = (double)qg_nf4_lut[p[j] & 0xf] * scale;
      out[2 * j + 1] = (double)qg_nf4_lut[p[j] >> 4] * scale;
    }
  } else {
    const uint8_t *blk = q2_block(d, g, r, b);
    double scale = qg_f16_to_f32(q2_scale_bits(blk));
    for (int j = 0; j < g; j++) out[j] = (double)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * scale;
  }
}

/* Nearest NormalFloat code to v in [-1, 1]; a tie goes to the lower code. */
static uint8_t nf4_nearest(float v) {
  uint8_t best = 0;
  double best_dist = fabs((double)v - (double)qg_nf4_lut[0]);
  for (uint8_t c = 1; c < 16; c++) {
    double dist = fabs((double)v - (double)qg_nf4_lut[c]);
    if (dist < best_dist) {
      best_dist = dist;
      best = c;
    }
  }
  return best;
}

static void nf4_quantize_block(const float *w, uint8_t *data, float *scale_out) {
  float amax = 0.0f;
  for (int j = 0; j < QGEMV_NF4_BLOCK; j++) amax = fmaxf(amax, fabsf(w[j]));
  *scale_out = amax;
  float inv = amax > 0.0f ? 1.0f / amax : 0.0f;
  for (int j = 0; j < QGEMV_NF4_BLOCK / 2; j++) {
    uint8_t c[2];
    for (int h = 0; h < 2; h++) {
      float v = w[2 * j + h] * inv;
      /* |w| <= amax puts v in [-1, 1] up to rounding; the clamp also covers
       * a subnormal amax whose reciprocal overflows. */
      if (w[2 * j + h] == 0.0f) v = 0.0f;
      v = fminf(1.0f, fmaxf(-1.0f, v));
      c[h] = nf4_nearest(v);
    }
    data[j] = (uint8_t)(c[0] | (c[1] << 4));
  }
}

static void q2_quantize_block(const float *w, int32_t g, uint8_t *blk) {
  float amax = 0.0f;
  for (int j = 0; j < g; j++) amax = fmaxf(amax, fabsf(w[j]));
  float id = amax > 0.0f ? 1.0f / amax : 0.0f;
  uint16_t d = qg_f32_to_f16(amax);
  blk[0] = (uint8_t)(d & 0xff);
  blk[1] = (uint8_t)(d >> 8);
  memset(blk + 2, 0, (size_t)g / 4);
  for (int j = 0; j < g; j++) {
    float v = w[j] * id;
    if (v != v) v = 0.0f; /* 0 * inf when amax is subnormal */
    float q = roundf(v) + 1.0f;
    q = fminf(3.0f, fmaxf(0.0f, q));
    blk[2 + j / 4] |= (uint8_t)((int)q << (2 * (j % 4)));
  }
}

qgemv_status qgemv_quantize(qgemv_format format, int64_t n, int64_t k, int32_t group, const float *w,
                            void *data, float *scales) {
  int32_t g;
  size_t bytes, nscales;
  qgemv_status s = qg_check_shape(format, n, k, group, &g, &bytes, &nscales);
  if (s != QGEMV_OK) return s;
  if (w == NULL || data == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_quantize: %s is NULL", w ? "data" : "w");
  if (format == QGEMV_NF4 && scales == NULL)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_quantize: NF4 needs a scales array of n*k/64 floats");
  for (int64_t r = 0; r < n; r++)
    for (int64_t c = 0; c < k; c++) {
      float v = w[(size_t)r * (size_t)k + (size_t)c];
      if (!isfinite(v))
        return qg_fail(QGEMV_ERR_BAD_DATA, "weight at row %lld column %lld is not finite; nothing was written",
                       (long long)r, (long long)c);
      /* ggml would store an infinite fp16 scale that no loader accepts. */
      if (format == QGEMV_Q2_0 && fabsf(v) >= 65520.0f)
        return qg_fail(QGEMV_ERR_BAD_DATA,
                       "weight at row %lld column %lld is %g: a Q2_0 block's max |w| must stay below 65520 to fit its "
                       "fp16 scale; nothing was written",
                       (long long)r, (long long)c, (double)v);
    }
  int64_t per_row = k / g;
  for (int64_t r = 0; r < n; r++) {
    for (int64_t b = 0; b < per_row; b++) {
      const float *src = w + (size_t)r * (size_t)k + (size_t)b * (size_t)g;
      size_t blk = (size_t)r * (size_t)per_row + (size_t)b;
      if (format == QGEMV_NF4)
        nf4_quantize_block(src, (uint8_t *)data + blk * (size_t)(g / 2), &scales[blk]);
      else
        q2_quantize_block(src, g, (uint8_t *)data + blk * qg_q2_block_bytes(g));
    }
  }
  return QGEMV_OK;
}

qgemv_status qgemv_dequantize(const qgemv_weight_desc *d, float *w) {
  int32_t g;
  qgemv_status s = qg_check_desc(d, &g);
  if (s != QGEMV_OK) return s;
  if (w == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_dequantize: output w is NULL");
  int64_t per_row = d->k / g;
  for (int64_t r = 0; r < d->n; r++)
    for (int64_t b = 0; b < per_row; b++)
      qg_decode_block_f32(d, g, r, b, w + (size_t)r * (size_t)d->k + (size_t)b * (size_t)g);
  return QGEMV_OK;
}
