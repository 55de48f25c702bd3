/* The lab's device layout: tile-chunk order, one contiguous stream per
 * (16-row tile, k range), so that a warp's weights for a range of k are one
 * run of bytes (one bulk copy per chunk, coalesced 512-byte loads).
 *
 *   weight  = [tile (16 rows)][chunk (KC k)][CH bytes]
 *   chunk   = codes [word j (4 per lane)][lane 32][16 B], then scales
 *
 * The k order inside an mma step (same for A and B): lane t = lane % 4 owns
 * the 16 consecutive k [64b + 16t, +16) of each 64-k block b; in step s its
 * k slots (2t, 2t+1) hold k 64b + 16t + 4s + {0,1} and slots (2t+8, 2t+9)
 * hold +{2,3}. So every step stays inside one block and a lane's activations
 * are 16 consecutive elements.
 *
 * NF4 (KC 256, 4 blocks): word j = block j; for lane (g, t) its 16 bytes are
 *   the packed bytes [8t, 8t+8) of row g's block (x, y) and of row g+8's
 *   (z, w). A packed byte is already the (even k, odd k) pair of a step.
 *   Scales: [16 rows][4 blocks] f32 (16 B per row), 2304 bytes per chunk.
 * Q2_0 (KC 512, 8 blocks of 64): word j = blocks 2j, 2j+1: x = row g block 2j,
 *   y = row g+8 block 2j, z = row g block 2j+1, w = row g+8 block 2j+1; each
 *   32-bit word holds the lane's 16 codes of that (row, block) with pair
 *   i = 2s + h (k +2h, +2h+1 of step s) at bits 2i (first) and 16 + 2i.
 *   Scales: fp16 d, g64 [16 rows][8] (16 B per row, 2304-byte chunks),
 *   g128 [16 rows][4] (8 B per row, 2176-byte chunks).
 * n is a multiple of 16 and k of KC in the lab (the backend needs a tail
 * chunk; bench/NOTES.md v3). */
#ifndef LAB_LAYOUT_H
#define LAB_LAYOUT_H

#include <stdint.h>

namespace lab {

enum Fmt { kNF4 = 0, kQ2G64 = 1, kQ2G128 = 2 };

/* Activation modes: how B is made (see kernel.cuh). */
enum XMode {
  kDirect = 0, /* Q2_0 with bf16 x, no norm: A bf16 (code-1), B = x as stored */
  kS1 = 1,     /* NF4 with bf16 x, no norm: B = one fp16 term (exact) */
  kS2 = 2,     /* f32 x or RMSNorm: B = two fp16 terms */
  kB3 = 3,     /* Q2_0 with f32 x or RMSNorm: B = three bf16 terms (exact,
                  no scaling, no range limit); A bf16 (code-1) as direct */
};

__host__ __device__ constexpr int fmt_kc(int f) { return f == kNF4 ? 256 : 512; }
/* k per scale block (the epilogue unit). */
__host__ __device__ constexpr int fmt_bk(int f) { return f == kQ2G128 ? 128 : 64; }
__host__ __device__ constexpr int fmt_scale_row_bytes(int f) { return f == kQ2G128 ? 8 : 16; }
/* Code bytes per (tile, chunk): 4 words of 16 bytes per lane, 32 lanes. */
constexpr int kChunkCodeBytes = 2048;
__host__ __device__ constexpr int fmt_chunk_bytes(int f) { return kChunkCodeBytes + 16 * fmt_scale_row_bytes(f); }
__host__ __device__ constexpr int xmode_splits(int xm) { return xm == kS2 ? 2 : xm == kB3 ? 3 : 1; }
/* A and B in bf16 (direct, B3) or fp16 (S1, S2). */
__host__ __device__ constexpr bool xmode_bf16(int xm) { return xm == kDirect || xm == kB3; }

}  // namespace lab

#endif
