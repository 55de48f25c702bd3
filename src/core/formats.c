/* Weights of any layout: sizes, validation, quantize and dequantize
 * (DESIGN.md s.4), driven by the layout table; the per-format code is in
 * the table's block codecs. */
#include "formats.h"

#include <math.h>
#include <stdint.h>

#include "convert.h"
#include "error.h"

bool qg_mul_size(int64_t a, int64_t b, size_t *out) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || (uint64_t)r > SIZE_MAX) return false;
  *out = (size_t)r;
  return true;
}

/* Block sizes and counts of a valid (layout, n, k); false on overflow. */
static bool sizes_fit(const qg_layout *L, int64_t n, int64_t k, qg_shape *out) {
  size_t blocks;
  out->blocks_per_row = k / L->group;
  if (!qg_mul_size(n, out->blocks_per_row, &blocks) ||
      !qg_mul_size((int64_t)blocks, L->block_bytes, &out->data_bytes))
    return false;
  out->scale_count = L->scale == QG_SCALE_F32 ? blocks : 0;
  return true;
}

qgemv_status qg_check_shape(qgemv_format format, int64_t n, int64_t k, int32_t group, qg_shape *out) {
  qgemv_status s = qg_check_format(format);
  if (s != QGEMV_OK) return s;
  const char *family = qg_family_name(format);
  if (n <= 0 || k <= 0)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s weight shape n=%lld k=%lld: both must be > 0", family, (long long)n,
                   (long long)k);
  if ((s = qg_layout_find(format, group, &out->id)) != QGEMV_OK) return s;
  const qg_layout *L = &qg_layouts[out->id];
  if (k % L->group != 0)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "k=%lld is not a multiple of the %s block %d", (long long)k, family,
                   (int)L->group);
  if (!sizes_fit(L, n, k, out))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s weight n=%lld k=%lld is too large: its size overflows", family,
                   (long long)n, (long long)k);
  if (out->scale_count > SIZE_MAX / sizeof(float))
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s weight n=%lld k=%lld: its scale array overflows", family, (long long)n,
                   (long long)k);
  return QGEMV_OK;
}

size_t qgemv_data_bytes(qgemv_format format, int64_t n, int64_t k, int32_t group) {
  qg_shape s;
  if (qg_check_shape(format, n, k, group, &s) != QGEMV_OK) return 0;
  return s.data_bytes;
}

size_t qgemv_scale_count(qgemv_format format, int64_t n, int64_t k, int32_t group) {
  qg_shape s;
  if (qg_check_shape(format, n, k, group, &s) != QGEMV_OK) return 0;
  return s.scale_count;
}

static const uint8_t *block_at(const qgemv_weight_desc *d, const qg_layout *L, int64_t r, int64_t b) {
  size_t index = (size_t)r * (size_t)(d->k / L->group) + (size_t)b;
  return (const uint8_t *)d->data + index * (size_t)L->block_bytes;
}

static uint16_t inline_scale_bits(const uint8_t *block) { return (uint16_t)(block[0] | (block[1] << 8)); }

/* Block b of row r's scale as a float, wherever the layout keeps it. */
static float block_scale(const qgemv_weight_desc *d, const qg_layout *L, int64_t r, int64_t b) {
  if (L->scale == QG_SCALE_F32) return d->scales[(size_t)r * (size_t)(d->k / L->group) + (size_t)b];
  return qg_f16_to_f32(inline_scale_bits(block_at(d, L, r, b)));
}

/* Block b of row r's unscaled values. */
static void block_values(const qgemv_weight_desc *d, const qg_layout *L, int64_t r, int64_t b, float *values) {
  const size_t codes = L->scale == QG_SCALE_F16_INLINE ? 2 : 0;
  L->decode(block_at(d, L, r, b) + codes, L->group, values);
}

/* A non-finite scale: BAD_DATA naming its row and block. */
static qgemv_status bad_scale(const qg_layout *L, int64_t r, int64_t b, bool nan) {
  return qg_fail(QGEMV_ERR_BAD_DATA, "%s scale of row %lld block %lld is %s: scales must be finite", L->family,
                 (long long)r, (long long)b, nan ? "NaN" : "infinite");
}

static qgemv_status check_f32_scales(const qgemv_weight_desc *d, const qg_layout *L, const qg_shape *s) {
  if (d->scales == NULL)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s weight descriptor: scales is NULL (%s needs n*k/%d f32 scales)",
                   L->family, L->family, (int)L->group);
  for (size_t i = 0; i < s->scale_count; i++)
    if (!isfinite(d->scales[i]))
      return bad_scale(L, (int64_t)(i / (size_t)s->blocks_per_row), (int64_t)(i % (size_t)s->blocks_per_row),
                       isnan(d->scales[i]));
  return QGEMV_OK;
}

static qgemv_status check_inline_scales(const qgemv_weight_desc *d, const qg_layout *L, const qg_shape *s) {
  if (d->scales != NULL)
    return qg_fail(QGEMV_ERR_INVALID_ARG,
                   "%s weight descriptor: scales must be NULL (%s keeps an fp16 scale inside each block)", L->family,
                   L->family);
  for (int64_t r = 0; r < d->n; r++)
    for (int64_t b = 0; b < s->blocks_per_row; b++) {
      uint16_t bits = inline_scale_bits(block_at(d, L, r, b));
      if ((bits & 0x7c00u) == 0x7c00u) return bad_scale(L, r, b, (bits & 0x3ffu) != 0);
    }
  return QGEMV_OK;
}

qgemv_status qg_check_desc(const qgemv_weight_desc *d, qg_shape *out) {
  if (d == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "weight descriptor is NULL");
  qgemv_status s = qg_check_shape(d->format, d->n, d->k, d->group, out);
  if (s != QGEMV_OK) return s;
  if (d->data == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "weight descriptor: data is NULL");
  const qg_layout *L = &qg_layouts[out->id];
  return L->scale == QG_SCALE_F32 ? check_f32_scales(d, L, out) : check_inline_scales(d, L, out);
}

void qg_decode_block_f32(const qgemv_weight_desc *d, qg_layout_id id, int64_t r, int64_t b, float *out) {
  const qg_layout *L = &qg_layouts[id];
  float scale = block_scale(d, L, r, b);
  block_values(d, L, r, b, out);
  for (int j = 0; j < L->group; j++) out[j] *= scale;
}

void qg_decode_block_f64(const qgemv_weight_desc *d, qg_layout_id id, int64_t r, int64_t b, double *out) {
  const qg_layout *L = &qg_layouts[id];
  float values[QG_BLOCK_MAX];
  double scale = block_scale(d, L, r, b);
  block_values(d, L, r, b, values);
  for (int j = 0; j < L->group; j++) out[j] = (double)values[j] * scale;
}

/* Every weight finite, and below the largest scale an fp16 holds; BAD_DATA
 * naming the first one that is not. */
static qgemv_status check_weights(const qg_layout *L, int64_t n, int64_t k, const float *w) {
  for (int64_t r = 0; r < n; r++)
    for (int64_t c = 0; c < k; c++) {
      float v = w[(size_t)r * (size_t)k + (size_t)c];
      if (!isfinite(v))
        return qg_fail(QGEMV_ERR_BAD_DATA, "weight at row %lld column %lld is not finite; nothing was written",
                       (long long)r, (long long)c);
      /* ggml would store an infinite fp16 scale that no loader accepts. */
      if (L->scale == QG_SCALE_F16_INLINE && fabsf(v) >= 65520.0f)
        return qg_fail(QGEMV_ERR_BAD_DATA,
                       "weight at row %lld column %lld is %g: a %s block's max |w| must stay below 65520 to fit its "
                       "fp16 scale; nothing was written",
                       (long long)r, (long long)c, (double)v, L->family);
    }
  return QGEMV_OK;
}

qgemv_status qgemv_quantize(qgemv_format format, int64_t n, int64_t k, int32_t group, const float *w, void *data,
                            float *scales) {
  qg_shape sh;
  qgemv_status s = qg_check_shape(format, n, k, group, &sh);
  if (s != QGEMV_OK) return s;
  const qg_layout *L = &qg_layouts[sh.id];
  if (w == NULL || data == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_quantize: %s is NULL", w ? "data" : "w");
  if (L->scale == QG_SCALE_F32 && scales == NULL)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_quantize: %s needs a scales array of n*k/%d floats", L->family,
                   (int)L->group);
  if ((s = check_weights(L, n, k, w)) != QGEMV_OK) return s;
  for (int64_t r = 0; r < n; r++)
    for (int64_t b = 0; b < sh.blocks_per_row; b++) {
      size_t index = (size_t)r * (size_t)sh.blocks_per_row + (size_t)b;
      L->quantize(w + (size_t)r * (size_t)k + (size_t)b * (size_t)L->group, L->group,
                  (uint8_t *)data + index * (size_t)L->block_bytes, L->scale == QG_SCALE_F32 ? &scales[index] : NULL);
    }
  return QGEMV_OK;
}

qgemv_status qgemv_dequantize(const qgemv_weight_desc *d, float *w) {
  qg_shape sh;
  qgemv_status s = qg_check_desc(d, &sh);
  if (s != QGEMV_OK) return s;
  if (w == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_dequantize: output w is NULL");
  const int32_t g = qg_layouts[sh.id].group;
  for (int64_t r = 0; r < d->n; r++)
    for (int64_t b = 0; b < sh.blocks_per_row; b++)
      qg_decode_block_f32(d, sh.id, r, b, w + (size_t)r * (size_t)d->k + (size_t)b * (size_t)g);
  return QGEMV_OK;
}
