/* The resident weight layout of the CUDA module, shared by the host-side
 * repack (repack.c, weight_upload.cu) and the kernels (kernels_matvec.cuh,
 * kernels_tail.cuh). Plain C.
 *
 * The full 16-row tiles (rows [0, 16 (n / 16))) form one stream, tile after
 * tile, and each tile is its chunks of k in order, so that a warp's weights
 * for a range of k are one run of bytes (one bulk copy per tile and chunk):
 *
 *   tiles  [tile][chunk][chunk bytes]
 *   chunk  codes: [word j (4)][lane (32)][16 bytes], then the 16 rows'
 *          scales: [row (16)][scale block of the chunk]
 *
 * A chunk is 256 k (NF4: four 64-blocks) or 512 k (Q2_0: eight 64-blocks,
 * so 8 or 4 groups); the last chunk of a row may be shorter (k is only a
 * multiple of the block or group): it holds its own blocks only.
 *
 * The k order inside an mma step (the same for A and B, so the dot product
 * is unchanged): lane t = lane % 4 owns the 16 consecutive k [64b + 16t,
 * +16) of each 64-block b; in step s its k slots (2t, 2t+1) hold k = 64b +
 * 16t + 4s + {0, 1} and slots (2t+8, 2t+9) hold +{2, 3}. So every step
 * stays inside one block and a lane's activations are 16 consecutive
 * elements.
 *
 * NF4: word j = 64-block j of the chunk; lane (g, t) = (lane / 4, lane % 4)
 *   holds the packed bytes [8t, 8t + 8) of row g's block, then those of row
 *   g + 8 (a packed byte is already the (even k, odd k) pair of a step).
 *   Scales: f32, 4 per row (16 bytes) in a full chunk: 2304 bytes a chunk.
 * Q2_0: word j = 64-blocks 2j, 2j+1: its four 32-bit words are (row g,
 *   block 2j), (row g + 8, block 2j), (row g, block 2j + 1), (row g + 8,
 *   block 2j + 1), each the lane's 16 codes with pair i = 2s + h (k +2h,
 *   +2h+1 of step s) at bits 2i (first code) and 16 + 2i (second), for a
 *   cheap decode. A last chunk with an odd number of 64-blocks ends in a
 *   half word: [lane][8 bytes] of block 2j only. Scales: fp16 d per group
 *   (g64: 8 per row, 16 bytes; g128: 4 per row, 8 bytes): 2304 or 2176
 *   bytes a chunk.
 * Every chunk size (short ones too) is a multiple of 16 bytes, as bulk
 * copies need.
 *
 * The last n % 16 rows follow the tiles in the packed format of DESIGN.md
 * section 4 (NF4: their codes, then their f32 scales; Q2_0: their blocks),
 * read by the tail kernel. Nothing is padded: resident bytes equal the
 * packed size for every n and k. */
#ifndef QGC_LAYOUT_H
#define QGC_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "../core/backend.h"
#include "../core/layouts.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QGC_TILE_ROWS 16

typedef struct qgc_layout {
  qg_layout_id id;
  qgemv_format format;
  int64_t n, k;
  int32_t group;
  void *dev;              /* one allocation: the tiles, then the tail rows */
  const uint8_t *tiles;   /* device */
  const uint8_t *tail;    /* device: the last n % 16 rows, packed; NULL if none */
  int64_t ntiles;         /* n / 16 */
  int64_t tile_bytes;     /* bytes of one tile's stream */
  int nch;                /* chunks per row */
  int last_blocks;        /* 64-blocks of the last chunk */
  size_t bytes;           /* resident bytes */
} qgc_layout;

/* Experiment (off in the library; -D on the module's and the tests'
 * builds, both sides of the layout): NF4 chunks of 128 k (two 64-blocks,
 * 1152 bytes), so that a ring slot of two tiles is half the bytes and
 * twice the warps fit an SM's shared memory. */
#ifndef QGC_EXP_NF4_KC128
#define QGC_EXP_NF4_KC128 0
#endif
/* Geometry of a format: k per full chunk, bytes per scale, code bytes of
 * one 64-block of a tile (16 rows), scales of `blocks` 64-blocks per row. */
static inline int qgc_chunk_k(qgemv_format f) { return f == QGEMV_NF4 ? (QGC_EXP_NF4_KC128 ? 128 : 256) : 512; }
static inline int qgc_scale_size(qgemv_format f) { return f == QGEMV_NF4 ? 4 : 2; }
static inline int qgc_block_code_bytes(qgemv_format f) { return f == QGEMV_NF4 ? 512 : 256; }
static inline int qgc_row_scale_bytes(qgemv_format f, int32_t group, int blocks) {
  return blocks * 64 / group * qgc_scale_size(f);
}
/* Bytes of a tile's chunk of `blocks` 64-blocks, and of its codes. */
static inline int qgc_chunk_code_bytes(qgemv_format f, int blocks) { return blocks * qgc_block_code_bytes(f); }
static inline int qgc_chunk_bytes(qgemv_format f, int32_t group, int blocks) {
  return qgc_chunk_code_bytes(f, blocks) + QGC_TILE_ROWS * qgc_row_scale_bytes(f, group, blocks);
}
/* Packed bytes of one row (DESIGN.md section 4), scales included. */
static inline size_t qgc_packed_row_bytes(qgemv_format f, int64_t k, int32_t group) {
  return f == QGEMV_NF4 ? (size_t)(k / 2) + (size_t)(k / 64) * 4 : (size_t)(k / group) * (2 + (size_t)group / 4);
}

/* Fills every field of L but dev, tiles and tail for a validated weight of
 * layout id (its group set, as the core passes it). */
void qgc_layout_shape(qgc_layout *L, const qgemv_weight_desc *d, qg_layout_id id);

/* repack.c: tiles [tile0, tile0 + count) of the stream into dst
 * (count * tile_bytes bytes), and the last n % 16 rows in their packed
 * form into dst (bytes - ntiles * tile_bytes). */
void qgc_repack_tiles(const qgc_layout *L, const qgemv_weight_desc *d, int64_t tile0, int64_t count, uint8_t *dst);
void qgc_repack_tail(const qgc_layout *L, const qgemv_weight_desc *d, uint8_t *dst);

#ifdef __cplusplus
}
#endif
#endif
