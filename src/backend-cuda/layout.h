/* The resident weight layout of the CUDA module, shared by the host-side
 * repack (weight_upload.cu) and the kernels (kernels_matvec.cuh).
 *
 * Rows stay rows (no padding of n, so resident bytes stay within a few
 * bytes per row of the packed size), but bytes are permuted inside each row
 * so that one 16-byte load per lane feeds the tensor-core fragments.
 *
 * The k order seen by the tensor cores. A 64-k block b is four mma steps of
 * 16 k slots. Lane t (= lane % 4) owns the 16 consecutive k
 * [64b + 16t, 64b + 16t + 16); in step s its k slots (2t, 2t+1) hold
 * k = 64b + 16t + 4s + {0, 1} and slots (2t+8, 2t+9) hold +{2, 3}. A and B use
 * the same map, so the dot product is unchanged, every step stays inside one
 * scale block, and each lane's activations are contiguous.
 *
 * A segment is what one lane loads with one 16-byte load per row:
 *   NF4  128 k (two blocks):  64 code bytes per row. Lane t reads bytes
 *        [16t, 16t+16) = the 8 bytes of k [16t, 16t+16) of block 0, then
 *        those of block 1 (pieces of 8 reordered P0 P4 P1 P5 P2 P6 P3 P7).
 *        A byte is already an (even k, odd k) pair, low nibble first.
 *   Q2_0 256 k (four blocks): 64 code bytes per row. Lane t reads the words
 *        of blocks 0..3; the word of (block, t) holds its 16 codes with
 *        pair i = 2s + h (h = 0: k +0,+1; h = 1: k +2,+3 of step s) at bits
 *        2i (first code) and 16 + 2i (second code), for a cheap decode.
 * A row whose k is not a multiple of the segment ends with a tail segment:
 *   NF4 one block, lane t reads 8 bytes at 8t; Q2_0 one to three blocks,
 *   word (block b, lane t) at word index 4b + t.
 * Scales follow the codes (NF4 f32 per block, Q2_0 fp16 d per group),
 * segment-major so that a segment's scales of one row are one aligned load
 * and the 8 rows of a warp's load are adjacent:
 *   main [full segment][row][SPS]  SPS = scales per segment (2, 4 or 2)
 *   tail [row][TS]                 TS = scales in the tail segment
 * Nothing is padded: resident bytes equal the packed size. */
#ifndef QGC_LAYOUT_H
#define QGC_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "../core/backend.h"
#include "../core/layouts.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qgc_layout {
  qg_layout_id id;
  int64_t n, k;
  int32_t group;
  void *dev;              /* one allocation: codes, then scales */
  const uint8_t *codes;   /* device */
  const char *scales;     /* device: f32 (NF4) or fp16 bits (Q2_0) */
  int64_t row_bytes;      /* code bytes per row: k/2 or k/4 */
  size_t bytes;           /* resident bytes */
} qgc_layout;

/* Segment geometry of a layout: k per segment, scales per full segment
 * (one per group), bytes per scale, code bytes of a row of k. */
static inline int qgc_seg_k(qg_layout_id f) { return f == QG_LAYOUT_NF4 ? 128 : 256; }
static inline int qgc_seg_scales(qg_layout_id f, int32_t group) { return qgc_seg_k(f) / group; }
static inline int qgc_scale_size(qg_layout_id f) { return f == QG_LAYOUT_NF4 ? 4 : 2; }
static inline int64_t qgc_row_bytes(qg_layout_id f, int64_t k) { return f == QG_LAYOUT_NF4 ? k / 2 : k / 4; }

/* Fills id, n, k, group, row_bytes and bytes of L for a validated weight
 * of layout id (its group set, as the core passes it). */
void qgc_layout_shape(qgc_layout *L, const qgemv_weight_desc *d, qg_layout_id id);

/* repack.c: one row of packed codes into resident order (row_bytes).
 * NF4: src = the row's k/2 code bytes. Q2_0: src = the row's packed blocks
 * [d][codes]; its d's go to row_scales (k/group), tmp holds k/4 bytes. */
void qgc_repack_nf4_row(int64_t k, const uint8_t *src, uint8_t *dst);
void qgc_repack_q2_row(int64_t k, int32_t group, const uint8_t *src, uint8_t *tmp, uint16_t *row_scales,
                       uint8_t *dst);
/* Rows [r0, r0 + rows) of a validated weight of layout id (group set):
 * their resident codes ([rows][row_bytes]) and their scales laid out as
 * the scales of a weight of `rows` rows (main [segment][rows][per
 * segment], then tail [rows][..]). tmp: k/4 bytes; row_scales: k/group
 * entries (Q2_0 only). */
void qgc_repack_rows(const qgemv_weight_desc *d, qg_layout_id id, int64_t r0, int64_t rows, uint8_t *codes,
                     char *scales, uint8_t *tmp, uint16_t *row_scales);

#ifdef __cplusplus
}
#endif
#endif
