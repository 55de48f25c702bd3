/* The share layout of the CUDA module (DESIGN.md section 6, "The share
 * form"; bench/lab/small_share.cu, bench/NOTES.md v44): the resident form
 * of a small weight uploaded for m = 1, shared by the host-side repack
 * (share_repack.c) and the kernels (share_kernels.cuh). Plain C.
 *
 * Rows are split over G CTAs (one an SM, G = min(SMs, n)): CTA c takes
 * rows [c n / G, (c + 1) n / G), at most nrmax, and the whole of k, so
 * there is no finishing launch. A 16-byte word holds 32 NF4 codes (half a
 * block) or 64 Q2_0 codes (a g64 block, half a g128 block) of one row; a
 * row has nkw = k / 32 or k / 64 words. Thread t = q RP + r of the CTA's
 * T (256 or 512, the geometry's; RP rows a pass, a power of two; P = T /
 * RP k-parts) takes rows r,
 * RP + r, ... (NP passes) and in each pass the words kw = q, q + P, ...
 * (JW a pass): its item i = pass JW + j. The codes are
 *
 *   codes   [CTA][item (I = NP JW)][thread (T)][16 bytes]
 *   scales  [CTA][scale block][row of the CTA], a region of sreg bytes
 *           NF4: f32, as stored; Q2_0: the fp16 d bits, as stored
 *
 * so each warp's load of an item is 512 contiguous bytes. An item past the
 * CTA's rows or the row's words is a hole: zeros, never loaded.
 * NF4 word: four 32-bit registers g; register g = rotl(s, 2), s holding
 * the code of the word's k offset 8g + b in nibble 2b and that of 8g + 4 +
 * b in nibble 2b + 1 (b = 0..3), so that w & 0x3C3C3C3C and
 * rotr(w, 4) & 0x3C3C3C3C hold 4 x code in their bytes: byte offsets into
 * a 16-entry f32 table. Q2_0 word: the 16 code bytes of the packed format
 * (DESIGN.md section 4) as they are: code j of register g at bits 2j.
 * Resident bytes: G I T 16 + G sreg, the packed size plus the holes. */
#ifndef QGC_SHARE_LAYOUT_H
#define QGC_SHARE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "qgemv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads a CTA: the share kernel is instantiated for each count (a
 * runtime count cost the 256 launches up to 6%, bench/NOTES.md v49). */
#define QGC_SHARE_THREADS_MIN 256
#define QGC_SHARE_THREADS_MAX 512
#define QGC_SHARE_U 4 /* words in flight a thread: a round */

typedef struct qgc_share_geom {
  int threads;     /* T: QGC_SHARE_THREADS_MIN or _MAX */
  int ctas;        /* G */
  int cw;          /* codes a word: NF4 32, Q2_0 64 */
  int scale_bytes; /* NF4 4, Q2_0 2 */
  int lg_wps;      /* log2 of the words a scale block: NF4 and g128 1, g64 0 */
  int nkw, nblk;   /* words and scale blocks a row */
  int nrmax;       /* most rows a CTA */
  int rp, lg_rp;   /* rows a pass */
  int kparts;      /* P = T / RP */
  int passes;      /* NP */
  int jw;          /* words a thread a pass */
  int items;       /* I = NP JW */
  int kwe;         /* k-parts inside a warp: 32 / RP, at least 1 */
  int gp;          /* sum slots a pass and row: P / kwe */
  int sreg;        /* bytes of a CTA's scale region, a multiple of 16 */
  int xs_bytes;    /* x staged as f32, 4 floats of padding after each word's */
  int red_bytes;   /* the pass sums and the norm's warp sums (f64), NF4's table */
  int smem;        /* dynamic shared memory: x, scales, sums */
} qgc_share_geom;

/* The geometry on `sms` multiprocessors with `smem_optin` bytes of shared
 * memory a block, at `threads` a CTA (QGC_SHARE_THREADS_MIN or _MAX), or
 * 0 for qgc_share_threads_auto's count: RP the largest power of two whose
 * items a thread are within 4% of the fewest. Returns 0 (nothing set) for
 * another thread count, or where the layout cannot hold the weight: n or
 * k past int, k not a multiple of the word and scale block, or the shared
 * memory (x grows with k) past smem_optin. */
int qgc_share_choose(qgemv_format f, int32_t group, int64_t n, int64_t k, int sms, size_t smem_optin, int threads,
                     qgc_share_geom *g);
/* The automatic thread count, from the geometry at the larger count:
 * QGC_SHARE_THREADS_MAX where a thread's items there make at least one
 * round (QGC_SHARE_U), else QGC_SHARE_THREADS_MIN. H200 (bench/NOTES.md
 * v48, QGEMV_CUDA_LAYOUT=share, us, f32 / bf16 x, 512 against 256
 * threads): with a round or more at 512, NF4 2048 x 4096 (4 items) 4.9 /
 * 4.8 against 5.1 / 4.9, 1024 x 8192 (4) 5.1 / 4.8 against 5.8 / 5.2,
 * 1024 x 14336 (7) 8.2 / 7.4 against 9.7 / 8.7, 3072 x 4096 (6) 6.6 / 6.4
 * against 7.2 / 6.9; Q2_0 g64 4096 x 4096 (4) 5.9 / 5.6 against 6.6 /
 * 6.3. With less, 512 lost: NF4 1024 x 4096 (2 items) 3.7 / 3.6 against
 * 3.0 / 2.7, 1536 x 4096 (3) 4.7 / 4.5 against 4.4 / 4.1; Q2_0 g64 2048 x
 * 4096 (2) 4.0 / 3.7 against 3.7 / 3.3, 1024 x 8192 (2) 4.5 / 4.0
 * against 4.5 / 3.8. The reading: a CTA of 8 warps waits on the latency
 * of its shared loads and FMA chains, which 16 warps hide once every
 * thread has a round of words to work on. */
int qgc_share_threads_auto(const qgc_share_geom *at_max);
/* The automatic choice for a weight uploaded for m = 1: at most
 * QGC_SHARE_AUTO_ROWS_NF4 (NF4) or QGC_SHARE_AUTO_ROWS (Q2_0) rows a CTA,
 * where the tiles (16 rows each) give an SM at most one or two tiles and
 * must split k to fill the GPU. H100 (bench/NOTES.md v45, us, f32 / bf16
 * x, share against tiles): 1024 x 4096 (8 rows a CTA) NF4 3.0 / 2.7
 * against 5.4 / 4.3, Q2_0 g64 2.7 / 2.4 against 5.0 / 3.4; 2048 x 4096
 * (16) NF4 5.3 / 5.0 against 6.2 / 5.4, Q2_0 3.7 / 3.3 against 5.4 / 3.7;
 * 1024 x 14336 NF4 9.5 / 8.4 against 12.6 / 10.5, Q2_0 g64 7.5 / 6.4
 * against 9.0 / 6.1 (with g128 6.4 against 5.9: the losses, 5-8%). H200
 * (v48, with 512 threads past a round): NF4 2176 x 4096 (17) 6.0 / 5.9
 * against 8.0 / 6.8, 3072 x 4096 (24) 6.6 / 6.4 against 8.1 / 6.9, 4096 x
 * 4096 (32) 8.0 / 7.7 against 8.2 / 7.1: not taken; Q2_0 g64 2176 x 4096
 * 5.0 / 4.8 against 5.6 / 3.9 and 3072 x 4096 5.2 / 4.9 against 5.7 /
 * 4.0: not taken (the upload does not know x's dtype, and with bf16 x the
 * tiles' integer path is 1.2x faster). */
#define QGC_SHARE_AUTO_ROWS 16
#define QGC_SHARE_AUTO_ROWS_NF4 24
int qgc_share_auto(const qgc_share_geom *g);

/* Rows [share_row0(c), share_row0(c + 1)) are CTA c's. */
static inline int64_t qgc_share_row0(const qgc_share_geom *g, int64_t n, int64_t c) { return c * n / g->ctas; }

/* Bytes of one CTA's codes and of all codes and scales. */
static inline size_t qgc_share_cta_code_bytes(const qgc_share_geom *g) {
  return (size_t)g->items * (size_t)g->threads * 16u;
}
static inline size_t qgc_share_code_bytes(const qgc_share_geom *g) {
  return (size_t)g->ctas * qgc_share_cta_code_bytes(g);
}
static inline size_t qgc_share_scale_bytes(const qgc_share_geom *g) { return (size_t)g->ctas * (size_t)g->sreg; }

/* CTAs [c0, c0 + count) of the codes (count * cta code bytes into dst,
 * holes zeroed) and of the scales (count * sreg bytes, the padding
 * zeroed), from a validated weight (its group set: NF4's 64). */
void qgc_share_repack_codes(const qgemv_weight_desc *d, const qgc_share_geom *g, int64_t c0, int64_t count,
                            uint8_t *dst);
void qgc_share_repack_scales(const qgemv_weight_desc *d, const qgc_share_geom *g, int64_t c0, int64_t count,
                             uint8_t *dst);

#ifdef __cplusplus
}
#endif
#endif
