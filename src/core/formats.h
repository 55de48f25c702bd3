/* Host-side weight formats: sizes, validation, block decoding. */
#ifndef QG_FORMATS_H
#define QG_FORMATS_H

#include <stdbool.h>

#include "qgemv.h"

extern const float qg_nf4_lut[16];

/* Validates format, shape and group of a weight; on success stores the
 * group in effect (NF4: 64) and the byte sizes of data and scales. */
qgemv_status qg_check_shape(qgemv_format format, int64_t n, int64_t k, int32_t group,
                            int32_t *group_out, size_t *data_bytes, size_t *scale_count);
/* Full validation of a descriptor: shape, pointers, every scale finite. */
qgemv_status qg_check_desc(const qgemv_weight_desc *d, int32_t *group_out);

/* Bytes of one Q2_0 block of group g: fp16 scale then g/4 code bytes. */
static inline size_t qg_q2_block_bytes(int32_t g) { return 2u + (size_t)g / 4u; }

/* Decodes block b of row r of a validated weight into f32 values (exact for
 * Q2_0; NF4 gives the f32 product LUT*scale) ... */
void qg_decode_block_f32(const qgemv_weight_desc *d, int32_t group, int64_t r, int64_t b,
                         float *out);
/* ... or into doubles, exactly (LUT * scale and (code-1) * d in double). */
void qg_decode_block_f64(const qgemv_weight_desc *d, int32_t group, int64_t r, int64_t b,
                         double *out);

/* a * b without overflow of int64 or size_t; false on overflow. */
bool qg_mul_size(int64_t a, int64_t b, size_t *out);

#endif
