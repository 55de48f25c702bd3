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
 *          scales: [scale block of the chunk][g (8)][rows g, g + 8]
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
 *   Scales of both formats: [scale block][g][row g, row g + 8]
 *   (QGC_EXP_SCALE_PAIR below).
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/backend.h"
#include "../core/layouts.h"
#include "lut_layout.h"
#include "share_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QGC_TILE_ROWS 16

typedef enum qgc_form { QGC_FORM_TILES, QGC_FORM_LUT, QGC_FORM_SHARE } qgc_form;

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
  /* The form (weight_upload.cu says when each is taken): the tiles, or
   * for a weight uploaded for m = 1 the lookup-table layout (lut_layout.h)
   * or the share layout (share_layout.h); in those two, tiles, tail,
   * ntiles and tile_bytes are unused. */
  qgc_form form;
  /* Uploaded for m = 1 (max_m 1): the tiles may then take modes that are
   * faster at m = 1 and slower batched (matvec_plan.h, qgc_norm_b2); a
   * batched call on the weight runs the same mode, so keeps m = 1's bits */
  bool for_m1;
  qgc_lut_geom lut_geom;
  const uint8_t *lut_codes;  /* device */
  const void *lut_scales;    /* device */
  double *lut_work;          /* device: the k-split's partial rows */
  qgc_share_geom share_geom;
  const uint8_t *share_codes;          /* device */
  const unsigned char *share_scales;   /* device */
} qgc_layout;

/* Experiment (off in the library; -D on the module's and the tests'
 * builds, both sides of the layout): NF4 chunks of 128 k (two 64-blocks,
 * 1152 bytes), so that a ring slot of two tiles is half the bytes and
 * twice the warps fit an SM's shared memory. On the H200 (bench/NOTES.md
 * v28) 1.03-1.10x slower under the library's plan at m = 1 (8.5% more
 * warp instructions at 28672 x 8192: a chunk's wait, copies and loop per
 * 128 k) and 0.90-1.10x batched. */
#ifndef QGC_EXP_NF4_KC128
#define QGC_EXP_NF4_KC128 0
#endif
/* A chunk's scales as [scale block][row g (8)][g, g + 8], so that a lane
 * reads its two rows' scales of a block in one shared load (NF4: 8 bytes;
 * Q2_0: 4) where [row (16)][scale block] took two: NF4's kernel is held
 * by its shared loads (21 per 16 x 64 tile-block before, 20 now). On the
 * H200 against [row][block] (bench/NOTES.md v28): 28672 x 8192 NF4 bf16
 * m = 1 0.978-0.98x (54.1 -> 53.1 us), 6% fewer warp instructions; every
 * other row of the shapes, all formats, m = 1 and 8, within 1.6%.
 * No spills on sm_90; on sm_121 NF4's two-column-group kernels spill 36
 * bytes (12 before) and four Q2_0 g64 kernels 4 (one before; GB10's
 * plans at the shapes take one of them: kB3, two column groups,
 * two tiles). 0: [row][block], for A/B runs (both sides of the layout: -D on the
 * module's and the tests' builds). */
#ifndef QGC_EXP_SCALE_PAIR
#define QGC_EXP_SCALE_PAIR 1
#endif
/* Byte offset of the scale of block e of tile row r (0..15) in a chunk's
 * scales of `blocks` scale blocks per row, ss bytes each (a macro: the
 * kernels use it on the device). */
#define QGC_SCALE_OFFSET(r, e, blocks, ss) \
  (QGC_EXP_SCALE_PAIR ? (((e) * 8 + (r) % 8) * 2 + (r) / 8) * (ss) : ((r) * (blocks) + (e)) * (ss))
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
