/* Weight layouts: one id per (format, group), and the table that holds
 * what the core knows of each (DESIGN.md s.4 and "Adding a format").
 * Everything else -- validation, sizes, quantize, dequantize, the oracle,
 * the public format list -- reads this table; backends index their
 * kernels by the id. Plain C, usable from C++ and CUDA sources.
 *
 * The ids cross the backend ABI (the core hands a weight's id to the
 * backend): append new ones before QG_LAYOUT_COUNT, never renumber. */
#ifndef QG_LAYOUTS_H
#define QG_LAYOUTS_H

#include <stdint.h>

#include "qgemv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum qg_layout_id {
  QG_LAYOUT_NF4,     /* NF4, block 64 */
  QG_LAYOUT_Q2_G64,  /* Q2_0, group 64 (mainline ggml) */
  QG_LAYOUT_Q2_G128, /* Q2_0, group 128 (PrismML/Bonsai files) */
  QG_LAYOUT_COUNT
} qg_layout_id;

/* The widest block of any layout, in elements (for stack buffers). */
#define QG_BLOCK_MAX 128

/* Where a block's scale lives. */
typedef enum qg_scale_kind {
  QG_SCALE_F32,       /* the separate scales array: one f32 per block */
  QG_SCALE_F16_INLINE /* the block's first two bytes: fp16, little-endian */
} qg_scale_kind;

typedef struct qg_layout {
  const char *name;    /* stable, what users type: "nf4", "q2_0g64" */
  const char *label;   /* for people: "NF4", "Q2_0/g64" */
  const char *family;  /* the format in messages; QGEMV_<family> names it */
  qgemv_format format;
  int32_t group;       /* elements per block, one scale each */
  int32_t block_bytes; /* data bytes per block, an inline scale included */
  qg_scale_kind scale;
  /* group weights (finite; below 65520 in magnitude for an fp16 scale)
   * -> the block's data bytes, and *scale for QG_SCALE_F32. */
  void (*quantize)(const float *w, int32_t group, uint8_t *block, float *scale);
  /* The block's codes (past an inline scale) -> its unscaled values,
   * exactly: value = values[j] * scale. */
  void (*decode)(const uint8_t *codes, int32_t group, float *values);
} qg_layout;

extern const qg_layout qg_layouts[QG_LAYOUT_COUNT];

/* QGEMV_OK when some layout has this format, else INVALID_ARG saying so. */
qgemv_status qg_check_format(qgemv_format format);
/* The format's name in messages ("NF4"); the format must be valid. */
const char *qg_family_name(qgemv_format format);
/* The layout of (format, group), or INVALID_ARG saying which groups the
 * format has. A format with one layout also takes group 0 for it (NF4). */
qgemv_status qg_layout_find(qgemv_format format, int32_t group, qg_layout_id *out);

/* The block codecs of each format (format_nf4.c, format_q2.c). */
extern const float qg_nf4_lut[16];
void qg_nf4_quantize(const float *w, int32_t group, uint8_t *block, float *scale);
void qg_nf4_decode(const uint8_t *codes, int32_t group, float *values);
void qg_q2_quantize(const float *w, int32_t group, uint8_t *block, float *scale);
void qg_q2_decode(const uint8_t *codes, int32_t group, float *values);

#ifdef __cplusplus
}
#endif
#endif
