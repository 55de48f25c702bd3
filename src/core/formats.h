/* Host-side weights of any layout (layouts.h): shape and descriptor
 * validation, sizes, block decoding. */
#ifndef QG_FORMATS_H
#define QG_FORMATS_H

#include <stdbool.h>

#include "layouts.h"

/* A validated weight shape. */
typedef struct qg_shape {
  qg_layout_id id;
  int64_t blocks_per_row; /* k / group */
  size_t data_bytes;
  size_t scale_count; /* f32 scales (QG_SCALE_F32 layouts), else 0 */
} qg_shape;

/* Validates format, shape and group of a weight and describes it. */
qgemv_status qg_check_shape(qgemv_format format, int64_t n, int64_t k, int32_t group, qg_shape *out);
/* Full validation of a descriptor: shape, pointers, every scale finite. */
qgemv_status qg_check_desc(const qgemv_weight_desc *d, qg_shape *out);

/* Decodes block b of row r of a validated weight of layout id into f32
 * values (value * scale in f32) ... */
void qg_decode_block_f32(const qgemv_weight_desc *d, qg_layout_id id, int64_t r, int64_t b, float *out);
/* ... or into doubles, exactly (value * scale in double). */
void qg_decode_block_f64(const qgemv_weight_desc *d, qg_layout_id id, int64_t r, int64_t b, double *out);

/* a * b without overflow of int64 or size_t; false on overflow. */
bool qg_mul_size(int64_t a, int64_t b, size_t *out);

#endif
