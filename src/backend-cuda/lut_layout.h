/* The lookup-table layout of the CUDA module (DESIGN.md section 6, "The
 * lookup-table kernel"; bench/NOTES.md v36-v39): the resident form of a
 * weight uploaded for m = 1, shared by the host-side repack (lut_repack.c)
 * and the kernels (lut_kernels.cuh). Plain C.
 *
 * A chunk is 128 code bytes of a row (NF4: 256 k; Q2_0: 512 k); lane l of
 * a warp owns its bytes ("slots") 4l .. 4l + 3. A lane's 16-byte word holds
 * those 4 slots for 4 consecutive rows, so one load brings a lane a row
 * group's bytes and the kernel's table lookups are conflict-free:
 *
 *   codes   [chunk][row group (n / 4)][lane (32)][16 bytes]
 *           byte b of the word: row 4 g + b / 4, slot 4 l + b % 4
 *   scales  [chunk][row group][scale block of the chunk][4 rows]
 *           NF4: f32, as stored; Q2_0: the fp16 d bits, as stored
 *
 * A code byte is the packed format's byte (DESIGN.md section 4): NF4's
 * (even k, odd k) nibbles, Q2_0's four codes at bits 2j. So the repack is
 * a permutation of the packed bytes and resident bytes equal the packed
 * size, plus the weight's workspace for the k-split's partial rows. */
#ifndef QGC_LUT_LAYOUT_H
#define QGC_LUT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "qgemv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QGC_LUT_SLOTS 4      /* code bytes a lane owns per chunk */
#define QGC_LUT_GROUP_ROWS 4 /* rows of a lane's 16-byte word */
#define QGC_LUT_WARPS 16
#define QGC_LUT_BATCH 16     /* rows a warp sums at once: 4 row groups */
#define QGC_LUT_MAX_SPLIT 64 /* k-split, partial rows per output row */
/* 128 KB of f32 tables (a 256-entry table per slot: 128 slots) at a
 * 64 KB-aligned base (the kernel's PRMT addressing), so 192 KB asked */
#define QGC_LUT_SMEM (192u << 10)

/* k of a chunk and the scale blocks in it. */
static inline int qgc_lut_chunk_k(qgemv_format f) { return 32 * QGC_LUT_SLOTS * (f == QGEMV_NF4 ? 2 : 4); }
static inline int qgc_lut_chunk_blocks(qgemv_format f, int32_t group) { return qgc_lut_chunk_k(f) / group; }
static inline int qgc_lut_scale_bytes(qgemv_format f) { return f == QGEMV_NF4 ? 4 : 2; }

/* A launch geometry: NB batches per warp per chunk give R = 16 warps x 16
 * rows x NB rows per unit; a unit is R rows x k / S columns, one CTA. */
typedef struct qgc_lut_geom {
  int nb;        /* 8 (R 2048), 4 (R 1024) or 2 (R 512) */
  int rows;      /* R */
  int ksplit;    /* S, a divisor of the chunk count */
  int64_t units; /* CTAs: n / R * S */
} qgc_lut_geom;

/* Whether the layout can hold a weight of this shape: n a multiple of
 * 1024 and k of the chunk (NF4 256, Q2_0 512). */
int qgc_lut_shape_ok(qgemv_format f, int64_t n, int64_t k);
/* The geometry for `sms` multiprocessors (one CTA each): of R 2048, 1024
 * and 512 down to min_rows, and every k-split S <= QGC_LUT_MAX_SPLIT
 * dividing the chunk count, the most units in one wave (a tie: the larger
 * R); where even S 1 needs more than one wave, S 1 at R 2048. Returns 0
 * when the shape does not fit (qgc_lut_shape_ok). */
int qgc_lut_choose(qgemv_format f, int64_t n, int64_t k, int sms, int min_rows, qgc_lut_geom *g);
/* min_rows for QGEMV_CUDA_LAYOUT=lut, and for the automatic choice: R 512
 * (4096 x 4096 on 132 SMs: 128 CTAs where R 1024 makes 64) is not taken
 * automatically: there it was no faster than the tiles (H100,
 * bench/NOTES.md v41), so that choice is the one before R 512 existed. */
#define QGC_LUT_ROWS_MIN 512
#define QGC_LUT_AUTO_ROWS_MIN 1024
/* Whether a geometry fills at least 3/4 of the SMs in one wave (with
 * fewer units the tile stream is faster, e.g. 4096 x 4096: bench/NOTES.md
 * v38). */
int qgc_lut_fills(const qgc_lut_geom *g, int sms);
/* The automatic choice for a weight uploaded for m = 1 (its geometry
 * chosen from QGC_LUT_AUTO_ROWS_MIN): NF4 whose geometry fills the GPU.
 * Q2_0 keeps the tiles: on the H100 its LUT was 1.08-1.22x the tiles' time
 * with bf16 x (bench/NOTES.md v39), which the tiles run on tensor cores
 * exactly. */
int qgc_lut_auto(qgemv_format f, const qgc_lut_geom *g, int sms);

/* How many batches ahead each CTA's thread 0 asks L2 for the weights
 * (cp.async.bulk.prefetch.L2; 0: none): 4 for NF4 where a CTA sums a single
 * chunk, whose table build no earlier chunk's loads can hide (the kernels
 * instantiated with lut_kernel's PF = 4). On the H100
 * (bench/NOTES.md v41) that took 14336 x 4096 and 4096 x 14336 to 0.96-0.97x
 * the time without; where a CTA has several chunks it was 1.00-1.06x
 * slower, and Q2_0 up to 1.12x slower, nowhere 2% faster. */
#define QGC_LUT_L2PF_BATCHES 4
int qgc_lut_l2pf(qgemv_format f, const qgc_lut_geom *g, int64_t k);

/* QGEMV_CUDA_LAYOUT: which layout an upload takes. auto (unset or empty):
 * for a weight uploaded for m = 1 the share layout where qgc_share_auto
 * takes it, the LUT where qgc_lut_auto does, else the tiles; tiles: always
 * the tiles; lut, share: that layout wherever the shape and the device
 * allow it, for any m (benchmarks and tests), else the tiles. */
typedef enum qgc_layout_pref { QGC_LAYOUT_AUTO, QGC_LAYOUT_TILES, QGC_LAYOUT_LUT, QGC_LAYOUT_SHARE } qgc_layout_pref;
/* 0 (and nothing set) for a value other than those four. */
int qgc_layout_pref_parse(const char *s, qgc_layout_pref *pref);

/* Bytes of the codes and of the scales (each the packed format's), and
 * of the workspace: S x n partial rows and S sums of squares, f64. */
size_t qgc_lut_code_bytes(qgemv_format f, int64_t n, int64_t k);
size_t qgc_lut_scale_bytes_total(qgemv_format f, int64_t n, int64_t k, int32_t group);
size_t qgc_lut_work_bytes(int64_t n, int ksplit);

/* Chunks [c0, c0 + count) of the codes (d validated, its group set: the
 * core passes NF4's as 64, never 0) (count * n * 128 bytes into dst)
 * and of the scales (count * n * chunk blocks * scale bytes). */
void qgc_lut_repack_codes(const qgemv_weight_desc *d, int64_t c0, int64_t count, uint8_t *dst);
void qgc_lut_repack_scales(const qgemv_weight_desc *d, int64_t c0, int64_t count, uint8_t *dst);

#ifdef __cplusplus
}
#endif
#endif
