/* The lab's matvec kernel, one template for every variant:
 *   y[a, row] = (norm) sum_k W[row, k] x[a, k], on the tensor cores.
 *
 * Geometry. A warp owns a row group of T tiles (16 T rows, the mma's M) and
 * one of KS k-slices (chunk ranges of layout.h's stream); a CTA is G row
 * groups x KS slices (W = G KS warps) and may loop over several such units
 * (persistent grid). KS depends on the shape and device only, never on m:
 * a row's summation order (blocks in k order within a slice, slices in
 * order) is fixed, so every variant with the same KS gives the same bits,
 * and batched rows equal m = 1 rows.
 *
 * Weights reach the warp through one of three pipes:
 *   TMA  a per-warp ring of S stages in shared memory; lane 0 issues one bulk
 *        copy per tile and chunk, completing on the stage's mbarrier
 *   CPA  the same ring filled by 16-byte cp.async (every lane, no barrier)
 *   REG  registers: the next chunk's words loaded while this one is used
 * so up to S T CH bytes per warp are in flight without registers.
 *
 * Per scale block the lanes build their B columns (stage.cuh), then per tile
 * the mma sums the block's steps from zero into c and the epilogue adds
 * c * scale * 2^e to acc. At the end the slices' partial sums meet in shared
 * memory and are added in slice order. No atomics: bit-identical run to run.
 *
 * MODE removes work from the end, for the subtractive measurements: LOADS
 * (the same bytes through the same pipe, folded into a sink), DECODE (+ the
 * A fragments, folded), MATH (+ mma and epilogue with a constant B),
 * FULL.
 *
 * Start of a launch (round 2): griddepcontrol.launch_dependents first (the
 * next matvec in the stream may start its own ring on SMs this grid frees,
 * when launched with programmatic stream serialization), then, with
 * kEarlyRing, the ring prologue (weights only: they never depend on the
 * previous kernel), then griddepcontrol.wait, and only after it anything
 * that reads x or writes y (B staging, the loop, the epilogue). Without
 * kEarlyRing the prologue follows the B staging (round 1's order).
 *
 * B staged per CTA (BS = 1) holds all of k (phases = 1, staged once per
 * CTA), or with phases R > 1 one R-th of every slice's chunks at a time
 * (per unit and phase, between two CTA barriers: batched launches whose B
 * for all of k does not fit). Same functions, same bits either way.
 *
 * LB picks the register budget through the launch bounds: 0 = 512 threads
 * (128 registers, 16 warps/SM), 1 = 768 (80 registers, 24 warps), 2 = 1024
 * (64 registers, 32 warps). */
#ifndef LAB_KERNEL_CUH
#define LAB_KERNEL_CUH

#include "decode.cuh"
#include "layout.h"
#include "stage.cuh"

namespace lab {

enum Pipe { kTMA = 0, kCPA = 1, kREG = 2 };
enum Mode { kLoads = 0, kDecode = 1, kMath = 2, kFull = 3 };
/* kEarlyRing: the whole ring prologue before the B staging (and before
 * griddepcontrol.wait); kEarlyOne: only its first stage there, the rest
 * after the staging (a smaller burst ahead of the x loads). */
enum Flags { kEarlyRing = 1, kEarlyOne = 2 };

__host__ __device__ constexpr int lb_threads(int lb) { return lb == 0 ? 512 : lb == 1 ? 768 : 1024; }

struct KParams {
  const uint8_t *w; /* layout.h stream */
  int64_t n, k;
  int nch;          /* chunks per row (k / KC) */
  int rowgroups;    /* tiles / T */
  int units;        /* ceil(rowgroups / G) */
  int G, KS, S;
  int flags;             /* Flags */
  int phases;            /* BS = 1: 1 = B for all of k; R > 1: per phase */
  const void *x, *gamma; /* x [m][k]; gamma [k] or null */
  void *y;               /* [m][n] */
  int m, ncols;
  int x_bf16, g_bf16, y_bf16;
  float eps, inv_k;
  unsigned *err;  /* set when a barrier wait times out */
  unsigned *sink; /* LOADS/DECODE fold target (never written in practice) */
};

/* Dynamic shared memory of a launch (byte offsets; host and device agree):
 *   lut   NF4 256-byte-row table (LUT256 only), 64 KB, first so that its
 *         address is a constant
 *   bars  one mbarrier per ring slot and warp
 *   ring  W warps x S slots x T chunks (TMA and CPA pipes)
 *   comb  the slice partials (and per-warp norm sums) of one unit
 *   B     (BS = 1) the B words of every 64-block and column [b][col][t][8],
 *         2^e [eb][col], norm block sums [eb][col], slice sums [s][col],
 *         for the scale blocks of b_scale_blocks() */
struct SmemPlan {
  int lut, bars, ring, comb, sbB, sbP, sbQ, sbS, total;
};
__host__ __device__ constexpr int round_up(int v, int a) { return (v + a - 1) / a * a; }
/* Chunks per slice and phase (phases > 1 needs nch % KS == 0). */
__host__ __device__ inline int phase_chunks(int nch, int KS, int phases) {
  return (nch / KS + phases - 1) / phases;
}
/* Scale blocks the staged B buffer holds: all of k, or KS slices x one
 * phase's chunks. */
__host__ __device__ inline int b_scale_blocks(int fmt, int64_t k, int KS, int phases) {
  const int nch = (int)(k / fmt_kc(fmt));
  return phases <= 1 ? (int)(k / fmt_bk(fmt)) : KS * phase_chunks(nch, KS, phases) * (fmt_kc(fmt) / fmt_bk(fmt));
}
__host__ __device__ inline SmemPlan smem_plan(int fmt, int pipe, int lut256, int bs, int W, int S, int T, int NG,
                                              int64_t k, int ncols, int KS, int phases) {
  SmemPlan p{};
  int off = 0;
  p.lut = off;
  if (fmt == kNF4 && lut256 == 1) off += 256 * 256;
  p.bars = off;
  off += round_up(W * S * 8, 128);
  p.ring = off;
  if (pipe != kREG) off += W * S * T * fmt_chunk_bytes(fmt);
  p.comb = off;
  off += W * T * NG * 512 + W * NG * 8 * 4;
  p.sbB = p.sbP = p.sbQ = p.sbS = off;
  if (bs) {
    const int neb = b_scale_blocks(fmt, k, KS, phases), nb = neb * (fmt_bk(fmt) / 64);
    off += nb * ncols * 128;
    p.sbP = off;
    off += round_up(neb * ncols * 4, 16);
    p.sbQ = off;
    off += round_up(neb * ncols * 4, 16);
    p.sbS = off;
    off += round_up(KS * ncols * 4, 16);
  }
  p.total = off;
  return p;
}

__device__ __forceinline__ uint2 ld8_na(const void *p) {
  uint2 r;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  return r;
}

/* A chunk's words as a lane sees them: in shared memory (ring pipes) ... */
template <int FMT, int T>
struct ViewSmem {
  const char *cb; /* tile 0 of the stage */
  int lane16, g;
  __device__ __forceinline__ uint4 word(int tt, int j) const {
    return *reinterpret_cast<const uint4 *>(cb + tt * fmt_chunk_bytes(FMT) + j * 512 + lane16);
  }
  __device__ __forceinline__ const char *srow_ptr(int tt, int h) const {
    return cb + tt * fmt_chunk_bytes(FMT) + kChunkCodeBytes + (g + 8 * h) * fmt_scale_row_bytes(FMT);
  }
  __device__ __forceinline__ uint4 srow(int tt, int h) const {
    const char *s = srow_ptr(tt, h);
    if (fmt_scale_row_bytes(FMT) == 16) return *reinterpret_cast<const uint4 *>(s);
    const uint2 v = *reinterpret_cast<const uint2 *>(s);
    return make_uint4(v.x, v.y, 0u, 0u);
  }
  /* The scale of block e of row g (h = 0) or g + 8 (h = 1), read where it
   * is needed (no scale registers held across the chunk). */
  __device__ __forceinline__ float scale(int tt, int h, int e) const {
    const char *s = srow_ptr(tt, h);
    if (FMT == kNF4) return *reinterpret_cast<const float *>(s + 4 * e);
    return __half2float(*reinterpret_cast<const __half *>(s + 2 * e));
  }
};
/* ... or in registers (REG pipe): words 0..3, then the scale rows g, g+8. */
template <int FMT, int T>
struct ViewRegs {
  const uint4 (&r)[T][6];
  __device__ __forceinline__ uint4 word(int tt, int j) const { return r[tt][j]; }
  __device__ __forceinline__ uint4 srow(int tt, int h) const { return r[tt][4 + h]; }
  __device__ __forceinline__ float scale(int tt, int h, int e) const { return chunk_scale<FMT>(r[tt][4 + h], e); }
};

template <int FMT, int T>
__device__ __forceinline__ void reg_load(const uint8_t *const (&src)[T], int i, int lane, int g,
                                         uint4 (&d)[T][6]) {
  constexpr int CH = fmt_chunk_bytes(FMT), SRB = fmt_scale_row_bytes(FMT);
LAB_UNROLL
  for (int tt = 0; tt < T; ++tt) {
    const uint8_t *b = src[tt] + (int64_t)i * CH;
LAB_UNROLL
    for (int j = 0; j < 4; ++j) d[tt][j] = ld16<kLdNa>(b + j * 512 + lane * 16);
LAB_UNROLL
    for (int h = 0; h < 2; ++h) {
      const uint8_t *s = b + kChunkCodeBytes + (g + 8 * h) * SRB;
      if (SRB == 16) {
        d[tt][4 + h] = ld16<kLdNa>(s);
      } else {
        const uint2 v = ld8_na(s);
        d[tt][4 + h] = make_uint4(v.x, v.y, 0u, 0u);
      }
    }
  }
}

/* Chunk j of the warp's range into ring slot `slot`: TMA (lane 0 only) one
 * bulk copy per tile completing on the slot's barrier; CPA every lane
 * copies its 16-byte pieces. */
template <int FMT, int T, int PIPE>
__device__ __forceinline__ void issue_stage(const uint8_t *const (&src)[T], int j, uint32_t slot, uint32_t ring_s,
                                            uint32_t bars, int lane) {
  constexpr int CH = fmt_chunk_bytes(FMT);
  if (PIPE == kTMA) {
    mbar_arrive_tx(bars + 8 * slot, T * CH);
LAB_UNROLL
    for (int tt = 0; tt < T; ++tt) bulk_g2s(ring_s + (slot * T + tt) * CH, src[tt] + (int64_t)j * CH, CH, bars + 8 * slot);
  } else {
LAB_UNROLL
    for (int tt = 0; tt < T; ++tt)
      for (int pc = lane; pc < CH / 16; pc += 32)
        cp_async16(ring_s + (slot * T + tt) * CH + pc * 16, src[tt] + (int64_t)j * CH + pc * 16);
  }
}

__device__ __forceinline__ uint4 lds128_ordered(const void *p) {
  uint4 r;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "r"(smem_addr(p)));
  return r;
}

/* B words of one 64-block and column in the staged buffer (BS = 1). */
__device__ __forceinline__ char *sb_words(char *sbB, int blk, int ncols, int col, int t) {
  return sbB + ((size_t)(blk * ncols + col) * 4 + t) * 32;
}

/* The per-warp state that the chunk loop needs. */
template <int FMT, int XM, int NG, int T, int MODE, int BS, int LUT>
struct WarpCtx {
  static constexpr int BK = fmt_bk(FMT), QB = BK / 64, NEB = fmt_kc(FMT) / BK, SPL = xmode_splits(XM);
  static constexpr bool BF = xmode_bf16(XM);
  static constexpr bool TWO = FMT == kNF4 && LUT == 2;
  static_assert(!(FMT == kNF4 && BF), "NF4 needs fp16 A: no direct or B3 mode");
  int lane, g, t;
  uint32_t lane4, lane8;
  const uint32_t *lut;
  const uint2 *lut2;
  char *sbB;
  const float *sbP;
  float acc[T][NG][4];
  float ss[NG];
  uint32_t sink;

  /* One chunk (k from kc0) seen through view v; beb0 = the staged B
   * buffer's scale block of the chunk's first (BS = 1). */
  template <class View>
  __device__ __forceinline__ void chunk(const KParams &p, const View &v, int64_t kc0, int beb0) {
    if (MODE == kLoads) {
LAB_UNROLL
      for (int tt = 0; tt < T; ++tt) {
LAB_UNROLL
        for (int j = 0; j < 4; ++j) {
          const uint4 u = v.word(tt, j);
          sink ^= u.x ^ u.y ^ u.z ^ u.w;
        }
        const uint4 a = v.srow(tt, 0), b = v.srow(tt, 1);
        sink ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
      }
      return;
    }
LAB_UNROLL
    for (int eb = 0; eb < NEB; ++eb) {
      const int64_t kb = kc0 + eb * BK;
      uint32_t bw[NG][QB][8];
      float p0[NG], p1[NG];
      if (MODE == kFull && BS) {
        load_b_smem(p, beb0 + eb, bw, p0, p1);
      } else if (MODE == kFull) {
        stage_b(p, kb, bw, p0, p1);
      } else {
LAB_UNROLL
        for (int G = 0; G < NG; ++G) {
          p0[G] = p1[G] = 1.0f;
LAB_UNROLL
          for (int q = 0; q < QB; ++q)
LAB_UNROLL
            for (int i = 0; i < 8; ++i) bw[G][q][i] = BF ? 0x3f803f80u : 0x3c003c00u;
        }
      }
LAB_UNROLL
      for (int tt = 0; tt < T; ++tt) {
        float c[NG][4], c2[NG][4]; /* c2: the two-term table's second mma (weight rows g + 8) */
LAB_UNROLL
        for (int G = 0; G < NG; ++G)
          c[G][0] = c[G][1] = c[G][2] = c[G][3] = c2[G][0] = c2[G][1] = c2[G][2] = c2[G][3] = 0.0f;
LAB_UNROLL
        for (int q = 0; q < QB; ++q) block_mma(v, tt, eb * QB + q, bw, q, c, c2);
        if (TWO && MODE != kDecode) /* hi and lo halves of each weight row */
LAB_UNROLL
          for (int G = 0; G < NG; ++G) {
            const float r0 = c[G][0] + c[G][2], r1 = c[G][1] + c[G][3];
            c[G][2] = c2[G][0] + c2[G][2];
            c[G][3] = c2[G][1] + c2[G][3];
            c[G][0] = r0;
            c[G][1] = r1;
          }
        const float sgf = v.scale(tt, 0, eb), shf = v.scale(tt, 1, eb);
        if (MODE == kDecode) { /* the scale bytes count as read too */
          sink ^= f32_bits(c[0][0]) ^ f32_bits(sgf) ^ f32_bits(shf);
          continue;
        }
LAB_UNROLL
        for (int G = 0; G < NG; ++G) {
          acc[tt][G][0] = fmaf(c[G][0], sgf * p0[G], acc[tt][G][0]);
          acc[tt][G][1] = fmaf(c[G][1], sgf * p1[G], acc[tt][G][1]);
          acc[tt][G][2] = fmaf(c[G][2], shf * p0[G], acc[tt][G][2]);
          acc[tt][G][3] = fmaf(c[G][3], shf * p1[G], acc[tt][G][3]);
        }
      }
    }
  }

  /* A fragments of step S of a block (LUT 2: the two row-split ones). */
  template <int S>
  __device__ __forceinline__ void frag(const uint4 &u, uint32_t wg, uint32_t wh, uint32_t (&a)[4],
                                       uint32_t (&a2)[4]) const {
    if (TWO)
      nf4_frag2<S>(lut2, lane8, u, a, a2);
    else if (FMT == kNF4)
      nf4_frag<S, LUT>(lut, lane4, u, a);
    else
      q2_frag<BF, S>(wg, wh, a);
  }

  /* The four steps of 64-block blk of tile tt: decode A, then one mma per
   * column group (two with the two-term table: into c and c2, same B);
   * DECODE mode folds A instead. */
  template <class View>
  __device__ __forceinline__ void block_mma(const View &v, int tt, int blk, const uint32_t (&bw)[NG][QB][8], int q,
                                            float (&c)[NG][4], float (&c2)[NG][4]) {
    uint4 u;
    uint32_t wg = 0, wh = 0;
    if (FMT == kNF4) {
      u = v.word(tt, blk);
    } else {
      u = v.word(tt, blk >> 1);
      wg = (blk & 1) ? u.z : u.x;
      wh = (blk & 1) ? u.w : u.y;
    }
LAB_UNROLL
    for (int s = 0; s < 4; ++s) {
      uint32_t a[4], a2[4] = {0u, 0u, 0u, 0u};
      if (s == 0) frag<0>(u, wg, wh, a, a2);
      if (s == 1) frag<1>(u, wg, wh, a, a2);
      if (s == 2) frag<2>(u, wg, wh, a, a2);
      if (s == 3) frag<3>(u, wg, wh, a, a2);
      if (MODE == kDecode) {
        c[0][0] = bits_f32(f32_bits(c[0][0]) ^ a[0] ^ a[1] ^ a[2] ^ a[3] ^ a2[0] ^ a2[1] ^ a2[2] ^ a2[3]);
        continue;
      }
LAB_UNROLL
      for (int G = 0; G < NG; ++G) {
        if (BF) {
          mma_bf16(c[G], a, bw[G][q][2 * s], bw[G][q][2 * s + 1]);
        } else {
          mma_f16(c[G], a, bw[G][q][2 * s], bw[G][q][2 * s + 1]);
          if (TWO) mma_f16(c2[G], a2, bw[G][q][2 * s], bw[G][q][2 * s + 1]);
        }
      }
    }
  }

  /* BS = 1: the lane's B words and 2^e from the CTA's staged buffer
   * (eb = the buffer's scale block). */
  __device__ __forceinline__ void load_b_smem(const KParams &p, int eb, uint32_t (&bw)[NG][QB][8], float (&p0)[NG],
                                              float (&p1)[NG]) {
LAB_UNROLL
    for (int G = 0; G < NG; ++G) {
      const int col = 8 * G + g;
LAB_UNROLL
      for (int q = 0; q < QB; ++q) {
        uint4 lo = make_uint4(0, 0, 0, 0), hi = lo;
        if (col < p.ncols) { /* volatile: kept after the previous block's mma (no hoisting, fewer live registers) */
          const char *src = sb_words(sbB, eb * QB + q, p.ncols, col, t);
          lo = lds128_ordered(src);
          hi = lds128_ordered(src + 16);
        }
        bw[G][q][0] = lo.x, bw[G][q][1] = lo.y, bw[G][q][2] = lo.z, bw[G][q][3] = lo.w;
        bw[G][q][4] = hi.x, bw[G][q][5] = hi.y, bw[G][q][6] = hi.z, bw[G][q][7] = hi.w;
      }
      if (BF) {
        p0[G] = p1[G] = 1.0f;
      } else {
        const int c0 = 8 * G + 2 * t;
        p0[G] = c0 < p.ncols ? sbP[eb * p.ncols + c0] : 0.0f;
        p1[G] = c0 + 1 < p.ncols ? sbP[eb * p.ncols + c0 + 1] : 0.0f;
      }
    }
  }

  /* BS = 0: B words of the lane's columns for the scale block at kb, built
   * here from x, and the 2^e of the lane's two output columns (2t, 2t+1). */
  __device__ __forceinline__ void stage_b(const KParams &p, int64_t kb, uint32_t (&bw)[NG][QB][8], float (&p0)[NG],
                                          float (&p1)[NG]) {
    const int64_t e0 = kb + 16 * t;
LAB_UNROLL
    for (int G = 0; G < NG; ++G) {
      const int col = 8 * G + g;
      if (XM == kDirect) {
        if (col < p.m) {
          stage_direct<QB>(static_cast<const char *>(p.x) + (int64_t)col * p.k * 2, e0, bw[G]);
        } else {
LAB_UNROLL
          for (int q = 0; q < QB; ++q)
LAB_UNROLL
            for (int i = 0; i < 8; ++i) bw[G][q][i] = 0u;
        }
        p0[G] = p1[G] = 1.0f;
        continue;
      }
      const int a = col / SPL;
      float v[QB][16];
      float amax = 0.0f, qb = 0.0f;
      if (col < p.ncols) {
        amax = stage_load<QB>(static_cast<const char *>(p.x) + (int64_t)a * p.k * (p.x_bf16 ? 2 : 4), p.gamma,
                              p.x_bf16, p.g_bf16, e0, v, &qb);
      } else {
LAB_UNROLL
        for (int q = 0; q < QB; ++q)
LAB_UNROLL
          for (int j = 0; j < 16; ++j) v[q][j] = 0.0f;
      }
      if (p.gamma != nullptr) { /* the block's sum of squares, then block order */
        qb += __shfl_xor_sync(0xffffffffu, qb, 1);
        qb += __shfl_xor_sync(0xffffffffu, qb, 2);
        ss[G] += qb;
      }
      if (XM == kB3) {
        stage_pack_b3<QB>(v, col % SPL, bw[G]);
        p0[G] = p1[G] = 1.0f;
        continue;
      }
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
      const float pc = stage_pack<SPL, QB>(v, amax, col % SPL, bw[G]);
      p0[G] = __shfl_sync(0xffffffffu, pc, 8 * t);
      p1[G] = __shfl_sync(0xffffffffu, pc, 8 * t + 4);
    }
  }
};

/* BS = 1: the whole CTA builds B (phase ph of every slice, or all of k
 * when phases == 1) with the same functions as stage_b, one thread per
 * (scale block, column, t), so the words, 2^e and block sums of squares are
 * the same bits; then one thread per (slice, column) adds the block sums of
 * its slice in block order (continuing across phases). Buffer scale block
 * bi: all of k: bi = the global scale block; phased: bi = (s P + j) NEB + e
 * for local chunk ph P + j of slice s. */
template <int FMT, int XM>
__device__ __forceinline__ void stage_range(const KParams &p, int ph, char *sbB, float *sbP, float *sbQ,
                                            float *sbS) {
  constexpr int BK = fmt_bk(FMT), QB = BK / 64, SPL = xmode_splits(XM), NEB = fmt_kc(FMT) / BK;
  const int nbe = b_scale_blocks(FMT, p.k, p.KS, p.phases), units = p.ncols * nbe * 4;
  const int nloc = p.nch / p.KS, P = phase_chunks(p.nch, p.KS, p.phases);
  for (int base = 0; base < units; base += blockDim.x) {
    const int u = base + threadIdx.x, t = u & 3, cu = u >> 2, col = cu % p.ncols, bi = cu / p.ncols;
    int eb = bi;
    bool act = u < units;
    if (p.phases > 1) {
      const int s = bi / (P * NEB), r = bi % (P * NEB), lc = ph * P + r / NEB;
      act = act && lc < nloc;
      eb = (s * nloc + lc) * NEB + r % NEB;
    }
    const int64_t e0 = (int64_t)eb * BK + 16 * t;
    uint32_t w[QB][8];
    if (XM == kDirect) {
      if (act) stage_direct<QB>(static_cast<const char *>(p.x) + (int64_t)col * p.k * 2, e0, w);
    } else {
      float v[QB][16], amax = 0.0f, qb = 0.0f;
      if (act) {
        amax = stage_load<QB>(static_cast<const char *>(p.x) + (int64_t)(col / SPL) * p.k * (p.x_bf16 ? 2 : 4),
                              p.gamma, p.x_bf16, p.g_bf16, e0, v, &qb);
      } else {
LAB_UNROLL
        for (int q = 0; q < QB; ++q)
LAB_UNROLL
          for (int j = 0; j < 16; ++j) v[q][j] = 0.0f;
      }
      if (p.gamma != nullptr) {
        qb += __shfl_xor_sync(0xffffffffu, qb, 1);
        qb += __shfl_xor_sync(0xffffffffu, qb, 2);
        if (act && t == 0) sbQ[bi * p.ncols + col] = qb;
      }
      if (XM == kB3) {
        stage_pack_b3<QB>(v, col % SPL, w);
      } else {
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
        const float pc = stage_pack<SPL, QB>(v, amax, col % SPL, w);
        if (act && t == 0) sbP[bi * p.ncols + col] = pc;
      }
    }
    if (act) {
LAB_UNROLL
      for (int q = 0; q < QB; ++q) {
        char *dst = sb_words(sbB, bi * QB + q, p.ncols, col, t);
        *reinterpret_cast<uint4 *>(dst) = make_uint4(w[q][0], w[q][1], w[q][2], w[q][3]);
        *reinterpret_cast<uint4 *>(dst + 16) = make_uint4(w[q][4], w[q][5], w[q][6], w[q][7]);
      }
    }
  }
  if (XM == kDirect || p.gamma == nullptr) return;
  __syncthreads();
  for (int i = threadIdx.x; i < p.KS * p.ncols; i += blockDim.x) {
    const int s = i / p.ncols, col = i % p.ncols;
    if (p.phases <= 1) {
      const int b0 = (int)((int64_t)s * p.nch / p.KS) * NEB, b1 = (int)((int64_t)(s + 1) * p.nch / p.KS) * NEB;
      float q = 0.0f;
      for (int b = b0; b < b1; ++b) q += sbQ[b * p.ncols + col];
      sbS[i] = q;
    } else {
      const int j1 = min(P, nloc - ph * P);
      float q = ph == 0 ? 0.0f : sbS[i];
      for (int b = s * P * NEB; b < (s * P + j1) * NEB; ++b) q += sbQ[b * p.ncols + col];
      sbS[i] = q;
    }
  }
}

template <int FMT, int XM, int NG, int T, int PIPE, int MODE, int BS, int LUT, int LB>
__global__ void __launch_bounds__(lb_threads(LB), 1) qmv(const KParams p) {
  constexpr int CH = fmt_chunk_bytes(FMT), KC = fmt_kc(FMT), SPL = xmode_splits(XM), NEB = fmt_kc(FMT) / fmt_bk(FMT);
  extern __shared__ __align__(128) char smem[];
  pdl_launch_dependents();
  const int W = blockDim.x >> 5, w = threadIdx.x >> 5;
  const int gi = w / p.KS, sl = w % p.KS, S = p.S;
  const SmemPlan sp = smem_plan(FMT, PIPE, LUT, BS, W, S, T, NG, p.k, p.ncols, p.KS, p.phases);

  WarpCtx<FMT, XM, NG, T, MODE, BS, LUT> cx;
  cx.lane = threadIdx.x & 31;
  cx.g = cx.lane >> 2;
  cx.t = cx.lane & 3;
  cx.lane4 = 4u * cx.lane;
  cx.lane8 = 8u * (cx.lane & 15);
  cx.sink = 0;
  cx.lut = nullptr;
  cx.lut2 = nullptr;
  cx.sbB = smem + sp.sbB;
  cx.sbP = reinterpret_cast<const float *>(smem + sp.sbP);
  if constexpr (FMT == kNF4 && MODE >= kDecode && LUT == 0) {
    __shared__ uint32_t lut_s[kLutWords];
    for (int i = threadIdx.x; i < kLutWords; i += blockDim.x) lut_s[i] = nf4_lut_entry(i >> 5);
    cx.lut = lut_s;
  }
  if constexpr (FMT == kNF4 && MODE >= kDecode && LUT == 1) {
    uint32_t *lut = reinterpret_cast<uint32_t *>(smem + sp.lut);
    for (int i = threadIdx.x; i < kLutWords; i += blockDim.x) lut[(i >> 5) * 64 + (i & 31)] = nf4_lut_entry(i >> 5);
    cx.lut = lut;
  }
  if constexpr (FMT == kNF4 && MODE >= kDecode && LUT == 2) {
    __shared__ uint2 lut2_s[kLut2Entries];
    for (int i = threadIdx.x; i < kLut2Entries; i += blockDim.x) lut2_s[i] = nf4_lut2_entry(i >> 4);
    cx.lut2 = lut2_s;
  }
  const uint32_t bars = smem_addr(smem + sp.bars) + w * S * 8;
  char *ring = smem + sp.ring + (size_t)w * S * T * CH;
  const uint32_t ring_s = smem_addr(ring);
  if (PIPE == kTMA && cx.lane == 0) {
    for (int s = 0; s < S; ++s) mbar_init(bars + 8 * s, 1);
    fence_mbar_init();
  }

  const int c0 = (int)((int64_t)sl * p.nch / p.KS), c1 = (int)((int64_t)(sl + 1) * p.nch / p.KS);
  const int nloc = c1 - c0;
  /* The units of this CTA; the warp's valid ones come first (rg grows). */
  const int iters = blockIdx.x < p.units ? (p.units - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  int nvalid = 0;
  while (nvalid < iters && (blockIdx.x + nvalid * gridDim.x) * p.G + gi < p.rowgroups) ++nvalid;
  /* One stream of chunks over all the warp's units, so the ring (and the
   * REG pipe's next-chunk registers) keep filling across unit ends:
   * stream position j -> unit j / nloc, chunk c0 + j % nloc, slot j % S. */
  const int total = nvalid * nloc;
  auto src_of = [&](int j, const uint8_t *(&src)[T]) {
    const int it = j / nloc, i = j - it * nloc;
    const int rg = (blockIdx.x + it * gridDim.x) * p.G + gi;
LAB_UNROLL
    for (int tt = 0; tt < T; ++tt) src[tt] = p.w + ((int64_t)(rg * T + tt) * p.nch + c0 + i) * CH;
  };
  uint4 nxt[T][6]; /* REG pipe: the next chunk */
  auto prologue = [&](int j0, int j1) { /* ring stages [j0, j1) */
    if constexpr (PIPE == kREG) {
      if (total > 0 && j0 == 0) {
        const uint8_t *src[T];
        src_of(0, src);
        reg_load<FMT, T>(src, 0, cx.lane, cx.g, nxt);
      }
    } else {
      for (int j = j0; j < j1; ++j) {
        if (j < total && (PIPE == kCPA || cx.lane == 0)) {
          const uint8_t *src[T];
          src_of(j, src);
          issue_stage<FMT, T, PIPE>(src, 0, j % S, ring_s, bars, cx.lane);
        }
        if (PIPE == kCPA) cp_async_commit();
      }
    }
  };
  const int early = (p.flags & kEarlyRing) ? S : (p.flags & kEarlyOne) ? 1 : 0;
  prologue(0, early);
  pdl_wait(); /* from here on x may be read and y written */
  const bool phased = BS && MODE == kFull && p.phases > 1;
  char *sbB = smem + sp.sbB;
  float *sbP = reinterpret_cast<float *>(smem + sp.sbP), *sbQ = reinterpret_cast<float *>(smem + sp.sbQ),
        *sbS = reinterpret_cast<float *>(smem + sp.sbS);
  if (BS && MODE == kFull && !phased) stage_range<FMT, XM>(p, 0, sbB, sbP, sbQ, sbS);
  __syncthreads();
  prologue(early, S);

  const int R = phased ? p.phases : 1, P = phased ? phase_chunks(p.nch, p.KS, p.phases) : nloc;
  for (int it = 0; it < iters; ++it) {
    const int u = blockIdx.x + it * gridDim.x;
LAB_UNROLL
    for (int tt = 0; tt < T; ++tt)
LAB_UNROLL
      for (int G = 0; G < NG; ++G) cx.acc[tt][G][0] = cx.acc[tt][G][1] = cx.acc[tt][G][2] = cx.acc[tt][G][3] = 0.0f;
LAB_UNROLL
    for (int G = 0; G < NG; ++G) cx.ss[G] = 0.0f;

    for (int ph = 0; ph < R; ++ph) {
      if (phased) {
        __syncthreads(); /* every warp is done with the previous phase's B */
        stage_range<FMT, XM>(p, ph, sbB, sbP, sbQ, sbS);
        __syncthreads();
      }
      if (it >= nvalid) continue;
      const int i0 = ph * P, i1 = min(nloc, i0 + P);
      for (int i = i0; i < i1; ++i) {
        const int q = it * nloc + i;
        const int beb0 = phased ? (sl * P + i - i0) * NEB : (c0 + i) * NEB;
        if constexpr (PIPE == kREG) {
          uint4 cur[T][6];
LAB_UNROLL
          for (int tt = 0; tt < T; ++tt)
LAB_UNROLL
            for (int j = 0; j < 6; ++j) cur[tt][j] = nxt[tt][j];
          if (q + 1 < total) { /* chunk i + 1, or the next unit's first */
            const int in = i + 1 < nloc ? i + 1 : 0;
            const uint8_t *src[T];
            src_of(q + 1 - in, src);
            reg_load<FMT, T>(src, in, cx.lane, cx.g, nxt);
          }
          const ViewRegs<FMT, T> v{cur};
          cx.chunk(p, v, (int64_t)(c0 + i) * KC, beb0);
          continue;
        }
        const uint32_t slot = q % S;
        if (PIPE == kTMA)
          mbar_wait(bars + 8 * slot, (q / S) & 1u, p.err);
        else
          cp_async_wait_rt(S - 1);
        __syncwarp();
        const ViewSmem<FMT, T> v{ring + slot * T * CH, cx.lane * 16, cx.g};
        cx.chunk(p, v, (int64_t)(c0 + i) * KC, beb0);
        __syncwarp();
        if (q + S < total) {
          const uint8_t *src[T];
          src_of(q + S, src);
          if (PIPE == kTMA && cx.lane == 0) {
            fence_proxy_async();
            issue_stage<FMT, T, PIPE>(src, 0, slot, ring_s, bars, cx.lane);
          }
          if (PIPE == kCPA) issue_stage<FMT, T, PIPE>(src, 0, slot, ring_s, bars, cx.lane);
        }
        if (PIPE == kCPA) cp_async_commit();
      }
    }

    if (MODE < kMath) continue;
    /* Combine: slice partials in slice order, splits in split order. */
    float4 *part = reinterpret_cast<float4 *>(smem + sp.comb);
    float *ssb = reinterpret_cast<float *>(part + W * T * NG * 32);
    __syncthreads(); /* the previous unit's output is read */
LAB_UNROLL
    for (int tt = 0; tt < T; ++tt)
LAB_UNROLL
      for (int G = 0; G < NG; ++G)
        part[((w * T + tt) * NG + G) * 32 + cx.lane] =
            make_float4(cx.acc[tt][G][0], cx.acc[tt][G][1], cx.acc[tt][G][2], cx.acc[tt][G][3]);
    if (!BS && p.gamma != nullptr) {
LAB_UNROLL
      for (int G = 0; G < NG; ++G)
        if (cx.t == 0) ssb[w * NG * 8 + G * 8 + cx.g] = cx.ss[G];
    }
    __syncthreads();
    const int ru = p.G * T * 16;
    for (int o = threadIdx.x; o < ru * p.m; o += blockDim.x) {
      const int rl = o % ru, a = o / ru;
      const int ogi = rl / (T * 16), tt = (rl / 16) % T, r = rl % 16;
      const int org = u * p.G + ogi;
      if (org >= p.rowgroups) continue;
      const int64_t row = ((int64_t)org * T + tt) * 16 + r;
      float tot = 0.0f;
LAB_UNROLL
      for (int spl = 0; spl < SPL; ++spl) {
        const int col = a * SPL + spl, cg = col >> 3, j = col & 7;
        const int ln = (r & 7) * 4 + (j >> 1), ri = (r >> 3) * 2 + (j & 1);
        float v = 0.0f;
        for (int s = 0; s < p.KS; ++s) {
          const float4 f = part[(((ogi * p.KS + s) * T + tt) * NG + cg) * 32 + ln];
          const float e = ri == 0 ? f.x : ri == 1 ? f.y : ri == 2 ? f.z : f.w;
          v = s == 0 ? e : v + e;
        }
        tot = spl == 0 ? v : tot + v;
      }
      if (p.gamma != nullptr) {
        float q = 0.0f;
        for (int s = 0; s < p.KS; ++s) {
          const float e = BS ? sbS[s * p.ncols + a * SPL] : ssb[(ogi * p.KS + s) * NG * 8 + a * SPL];
          q = s == 0 ? e : q + e;
        }
        tot *= 1.0f / sqrtf(q * p.inv_k + p.eps);
      }
      if (p.y_bf16)
        static_cast<__nv_bfloat16 *>(p.y)[(int64_t)a * p.n + row] = __float2bfloat16_rn(tot);
      else
        static_cast<float *>(p.y)[(int64_t)a * p.n + row] = tot;
    }
  }
  if (PIPE == kCPA) cp_async_wait<0>();
  if (MODE < kMath && cx.sink == 0x9e3779b9u) atomicOr(p.sink, cx.sink);
}

}  // namespace lab

#endif
