/* The matvec kernel, one template for every format, operand mode and
 * activation dtype: y[m, n] = norm(x)[m, k] . W[n, k]^T on the tensor cores.
 *
 * Geometry. A CTA is 8 warps. A warp owns one tile of 16 weight rows (the
 * mma's M) and one of KS k-slices; TPC = 8 / KS tiles per CTA. The host picks
 * KS from n and the SM count only (never from m), so a row's accumulation
 * order is the same for every m. The activation rows of a launch (up to 8 or
 * 16) are the mma's N columns: weights are decoded once for all of them.
 *
 * k runs in rounds. In a round every warp takes U = 2 consecutive segments
 * of its slice (segment = one 16-byte load per lane per row); slices
 * interleave, so a round covers one contiguous k range of KS * U segments.
 * Weights of round r+1 are loaded (into the other of two register sets)
 * before round r is staged and computed: 2 x 32 bytes per lane in flight.
 *
 * Operand modes:
 *  - direct (Q2_0, bf16 x, no norm): A = bf16 (code - 1), B = x read as is
 *    from global memory (L1-cached); no shared memory, no barriers.
 *  - staged (all else): A = fp16 (NF4 table values or code - 1), B = the
 *    per-block power-of-two scaled fp16 split of x (kernels_stage.cuh),
 *    staged per round by the whole CTA between two barriers.
 *
 * Accumulation: per 64-k block the mma sums 4 steps from zero into c; then
 * acc = fma(c, scale * 2^e, acc) in block order; the KS slice partials are
 * summed in slice order and the split columns in split order. No atomics:
 * results are bit-identical run to run. */
#ifndef QGC_KERNELS_MATVEC_CUH
#define QGC_KERNELS_MATVEC_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "kernels_decode.cuh"
#include "kernels_stage.cuh"
#include "kernels_util.cuh"
#include "layout.h"

namespace qgc {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kSegsPerWarp = 2;  /* U */
constexpr int kMaxRoundBlocks = 32; /* 64-blocks per round, bounds bbuf */
/* Rounds ahead of the one being computed whose weights are prefetched into
 * L2 (prefetch.global.L2, no registers): with the register set of the next
 * round that keeps about kL2Ahead rounds (kL2Ahead x 32 KB per SM at 16
 * warps) of weight requests in flight instead of one. */
constexpr int kL2Ahead = 3;

struct MatvecParams {
  const uint8_t *codes;
  const char *scales;      /* main region [full segment][row][per segment] */
  const char *scales_tail; /* [row][tail scales] */
  int64_t row_bytes;       /* code bytes per row */
  int64_t n, k, nblk64;
  int64_t nseg, nseg_full; /* segments per row; full ones */
  int ntail;               /* 64-blocks of the tail segment (0: none) */
  int ks, tpc;             /* k-slices, tiles per CTA (ks * tpc = 8) */
  int rb_per_round;        /* 64-blocks per round = ks * U * blocks per segment */
  int64_t nrounds;
  const void *x;           /* [m_active, k] */
  const void *gamma;       /* [k] or NULL */
  void *y;                 /* [m_active, n] */
  bool x_bf16, x_vec, g_bf16, g_vec, y_bf16;
  int m_active;            /* activation rows of this launch */
  int ncols;               /* staged: m_active * splits */
  float eps, inv_k;
};

/* What the kernel knows of a layout (FMT: a qg_layout_id). A layout
 * without a specialisation has no kernels here: the module refuses its
 * weights (qgc_has_kernels). */
template <int FMT>
struct Fmt {
  static constexpr bool kKernels = false;
};
template <>
struct Fmt<QG_LAYOUT_NF4> {
  static constexpr bool kKernels = true;
  static constexpr int kBlocksPerSeg = 2;
  static constexpr bool kQ2 = false;
};
template <>
struct Fmt<QG_LAYOUT_Q2_G64> {
  static constexpr bool kKernels = true;
  static constexpr int kBlocksPerSeg = 4;
  static constexpr bool kQ2 = true;
};
template <>
struct Fmt<QG_LAYOUT_Q2_G128> {
  static constexpr bool kKernels = true;
  static constexpr int kBlocksPerSeg = 4;
  static constexpr bool kQ2 = true;
};

/* Activation rows per launch, at most: direct 16 (two mma column groups of
 * 8), staged 8 (8 columns with one split; 16 columns, two groups, with two
 * splits). The plan may give a two-split launch 4 rows where 16 columns do
 * not fit in shared memory; the columns a launch has pick the
 * instantiation (NG = 1 or 2). */
__host__ __device__ constexpr int slots_per_launch(bool direct, int splits) { return direct ? 16 : 8 + 0 * splits; }
/* 2^e per column of a staged round block: pbuf [rb][kPCols]. */
constexpr int kPCols = 16;

/* Shared memory of a launch (host and device agree on the layout). */
__host__ __device__ constexpr int smem_lut_bytes(int fmt, bool direct) {
  return (fmt == QG_LAYOUT_NF4 && !direct) ? kLutBytes : 0;
}
__host__ __device__ constexpr size_t smem_main_bytes(int fmt, bool direct, int rb_per_round, int ncols) {
  return direct ? 0 : (size_t)smem_lut_bytes(fmt, direct) + (size_t)rb_per_round * ncols * kColStride +
                          (size_t)rb_per_round * kPCols * sizeof(float);
}
__host__ __device__ constexpr size_t smem_epilogue_bytes(bool direct, int splits) {
  return (size_t)kWarps * 2 * 32 * 16 +
         (direct ? 0 : (size_t)slots_per_launch(direct, splits) * kMaxRoundBlocks * 4 * sizeof(float)) +
         16 * sizeof(float);
}
__host__ __device__ constexpr size_t smem_bytes(int fmt, bool direct, int splits, int rb_per_round, int ncols) {
  return smem_main_bytes(fmt, direct, rb_per_round, ncols) > smem_epilogue_bytes(direct, splits)
             ? smem_main_bytes(fmt, direct, rb_per_round, ncols)
             : smem_epilogue_bytes(direct, splits);
}

/* What one lane holds of one segment: codes of rows g and g+8, scales. */
struct SegRegs {
  uint4 cg, ch;
  uint2 sg, sh;
};

QGC_HD uint32_t word_of(const uint4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

template <int FMT>
QGC_HD float block_scale(uint2 s, int b) {
  if (FMT == QG_LAYOUT_NF4) return bits_f32(b == 0 ? s.x : s.y);
  uint32_t h;
  if (FMT == QG_LAYOUT_Q2_G64)
    h = (b < 2 ? s.x : s.y) >> (16 * (b & 1));
  else
    h = s.x >> (16 * (b >> 1));
  return __half2float(__ushort_as_half((unsigned short)(h & 0xffffu)));
}

template <int FMT>
QGC_HD void load_seg(const MatvecParams &p, const uint8_t *cg, const uint8_t *ch, int64_t rg,
                                         int64_t rh, int64_t seg, int t, SegRegs &r) {
  if (seg >= p.nseg) return;
  const int64_t off = seg * 64;
  if (seg < p.nseg_full) {
    r.cg = ld_stream_v4(cg + off + 16 * t);
    r.ch = ld_stream_v4(ch + off + 16 * t);
    /* Scales of the segment: NF4 2 floats, Q2_0 g64 4 halves (8 bytes),
     * g128 2 halves (4 bytes), segment-major so rows g of a warp touch
     * adjacent words (and the four t of a row one address). */
    if (FMT == QG_LAYOUT_Q2_G128) {
      r.sg = make_uint2(ld_stream_u32(p.scales + (seg * p.n + rg) * 4), 0u);
      r.sh = make_uint2(ld_stream_u32(p.scales + (seg * p.n + rh) * 4), 0u);
    } else {
      r.sg = ld_stream_v2(p.scales + (seg * p.n + rg) * 8);
      r.sh = ld_stream_v2(p.scales + (seg * p.n + rh) * 8);
    }
    return;
  }
  /* The tail segment: fewer blocks, so narrower loads. */
  if (!Fmt<FMT>::kQ2) {
    const uint2 a = ld_stream_v2(cg + off + 8 * t), b = ld_stream_v2(ch + off + 8 * t);
    r.cg = make_uint4(a.x, a.y, 0u, 0u);
    r.ch = make_uint4(b.x, b.y, 0u, 0u);
    r.sg = make_uint2(ld_stream_u32(p.scales_tail + rg * 4), 0u);
    r.sh = make_uint2(ld_stream_u32(p.scales_tail + rh * 4), 0u);
    return;
  }
  r.cg = make_uint4(ld_stream_u32(cg + off + 4 * t), 0u, 0u, 0u);
  r.ch = make_uint4(ld_stream_u32(ch + off + 4 * t), 0u, 0u, 0u);
  if (p.ntail > 1) {
    r.cg.y = ld_stream_u32(cg + off + 16 + 4 * t);
    r.ch.y = ld_stream_u32(ch + off + 16 + 4 * t);
  }
  if (p.ntail > 2) {
    r.cg.z = ld_stream_u32(cg + off + 32 + 4 * t);
    r.ch.z = ld_stream_u32(ch + off + 32 + 4 * t);
  }
  if (FMT == QG_LAYOUT_Q2_G128) { /* a tail of 128 k: one group */
    r.sg = make_uint2(ld_stream_u16(p.scales_tail + rg * 2), 0u);
    r.sh = make_uint2(ld_stream_u16(p.scales_tail + rh * 2), 0u);
  } else { /* g64: one to three groups, as the halves of sg.x, sg.y */
    const int nt = p.ntail;
    const char *a = p.scales_tail + rg * nt * 2, *b = p.scales_tail + rh * nt * 2;
    r.sg = make_uint2(ld_stream_u16(a), 0u);
    r.sh = make_uint2(ld_stream_u16(b), 0u);
    if (nt > 1) {
      r.sg.x |= ld_stream_u16(a + 2) << 16;
      r.sh.x |= ld_stream_u16(b + 2) << 16;
    }
    if (nt > 2) {
      r.sg.y = ld_stream_u16(a + 4);
      r.sh.y = ld_stream_u16(b + 4);
    }
  }
}

/* B words of lane (g, t) for one block in direct mode: activation row slot,
 * 16 bf16 at k = 64 blk + 16 t (w[2s], w[2s+1] = b0, b1 of step s). */
QGC_HD void load_b_direct(const MatvecParams &p, int slot, int64_t blk, int t,
                                              uint32_t (&w)[8]) {
  if (slot >= p.m_active) {
QGC_UNROLL
    for (int i = 0; i < 8; ++i) w[i] = 0u;
    return;
  }
  const uint16_t *src = static_cast<const uint16_t *>(p.x) + (int64_t)slot * p.k + blk * 64 + 16 * t;
  if (p.x_vec) {
    const uint4 a = ld_x_v4(src), b = ld_x_v4(src + 8);
    w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
  } else {
QGC_UNROLL
    for (int i = 0; i < 8; ++i) w[i] = ld_x_u16(src + 2 * i) | (ld_x_u16(src + 2 * i + 1) << 16);
  }
}

/* B words of lane (g, t) for one block in staged mode (zero for columns
 * past the launch's). */
QGC_HD void load_b_staged(const char *bbuf, int rb, int ncols, int g, int t, uint32_t (&w)[8]) {
  if (g >= ncols) {
QGC_UNROLL
    for (int i = 0; i < 8; ++i) w[i] = 0u;
    return;
  }
  const char *src = bbuf + ((size_t)rb * ncols + g) * kColStride + t * 32;
  const uint4 lo = lds_v4(src), hi = lds_v4(src + 16);
  w[0] = lo.x, w[1] = lo.y, w[2] = lo.z, w[3] = lo.w, w[4] = hi.x, w[5] = hi.y, w[6] = hi.z, w[7] = hi.w;
}

/* A fragment of step S of block b of a segment. */
template <int FMT, bool DIRECT, int S>
QGC_HD void step_frag(const SegRegs &r, int b, const char *lut, uint32_t lane4, uint32_t (&a)[4]) {
  if (FMT == QG_LAYOUT_NF4)
    nf4_step_frag<S>(lut, lane4, word_of(r.cg, 2 * b + S / 2), word_of(r.ch, 2 * b + S / 2), a);
  else
    q2_step_frag<DIRECT, S>(word_of(r.cg, b), word_of(r.ch, b), a);
}

/* acc += c * factor for one block: the rows' scales (sg row g, sh row g+8),
 * times 2^e of the lane's two columns in staged mode (pe). */
template <bool DIRECT>
QGC_HD void acc_block(float (&acc)[4], const float (&c)[4], float sg, float sh, float2 pe) {
  if (DIRECT) {
    acc[0] = fmaf(c[0], sg, acc[0]);
    acc[1] = fmaf(c[1], sg, acc[1]);
    acc[2] = fmaf(c[2], sh, acc[2]);
    acc[3] = fmaf(c[3], sh, acc[3]);
  } else {
    acc[0] = fmaf(c[0], sg * pe.x, acc[0]);
    acc[1] = fmaf(c[1], sg * pe.y, acc[1]);
    acc[2] = fmaf(c[2], sh * pe.x, acc[2]);
    acc[3] = fmaf(c[3], sh * pe.y, acc[3]);
  }
}

/* Step S of a block: decode A just in time (few live registers) and
 * multiply it with every active column group. */
template <int FMT, bool DIRECT, int NG, int S>
__device__ __forceinline__ void mma_step(const MatvecParams &p, const SegRegs &r, int b, const char *lut,
                                         uint32_t lane4, const uint32_t (&bw)[NG][8], float (&c)[NG][4]) {
  uint32_t a[4];
  step_frag<FMT, DIRECT, S>(r, b, lut, lane4, a);
QGC_UNROLL
  for (int G = 0; G < NG; ++G) {
    if (G > 0 && G * 8 >= (DIRECT ? p.m_active : p.ncols)) break; /* a whole column group idle */
    if (DIRECT)
      mma_bf16(c[G], a[0], a[1], a[2], a[3], bw[G][2 * S], bw[G][2 * S + 1]);
    else
      mma_f16(c[G], a[0], a[1], a[2], a[3], bw[G][2 * S], bw[G][2 * S + 1]);
  }
}

template <int FMT, bool DIRECT, int NG>
__device__ __forceinline__ void mma_steps(const MatvecParams &p, const SegRegs &r, int b, const char *lut,
                                          uint32_t lane4, const uint32_t (&bw)[NG][8], float (&c)[NG][4]) {
  mma_step<FMT, DIRECT, NG, 0>(p, r, b, lut, lane4, bw, c);
  mma_step<FMT, DIRECT, NG, 1>(p, r, b, lut, lane4, bw, c);
  mma_step<FMT, DIRECT, NG, 2>(p, r, b, lut, lane4, bw, c);
  mma_step<FMT, DIRECT, NG, 3>(p, r, b, lut, lane4, bw, c);
}

template <int FMT, bool DIRECT, int SPLITS, int NG>
__device__ __forceinline__ void compute_seg(const MatvecParams &p, const SegRegs &r, int64_t seg, int rb0,
                                            const char *lut, uint32_t lane4, int g, int t, const char *bbuf,
                                            const float *pbuf, float (&acc)[NG][4]) {
  constexpr int BPS = Fmt<FMT>::kBlocksPerSeg;
  if (seg >= p.nseg) return;
  const int nb = seg < p.nseg_full ? BPS : p.ntail;
QGC_UNROLL
  for (int b = 0; b < BPS; ++b) {
    if (b >= nb) break;
    uint32_t bw[NG][8];
    if (DIRECT) {
      const int64_t blk = seg * BPS + b;
QGC_UNROLL
      for (int G = 0; G < NG; ++G) load_b_direct(p, G * 8 + g, blk, t, bw[G]);
    } else {
QGC_UNROLL
      for (int G = 0; G < NG; ++G) load_b_staged(bbuf, rb0 + b, p.ncols, G * 8 + g, t, bw[G]);
    }

    float c[NG][4];
QGC_UNROLL
    for (int G = 0; G < NG; ++G) c[G][0] = c[G][1] = c[G][2] = c[G][3] = 0.0f;
    mma_steps<FMT, DIRECT, NG>(p, r, b, lut, lane4, bw, c);

    const float sg = block_scale<FMT>(r.sg, b), sh = block_scale<FMT>(r.sh, b);
QGC_UNROLL
    for (int G = 0; G < NG; ++G) {
      const float2 pe = DIRECT ? make_float2(1.0f, 1.0f)
                               : *reinterpret_cast<const float2 *>(pbuf + (rb0 + b) * kPCols + 8 * G + 2 * t);
      acc_block<DIRECT>(acc[G], c[G], sg, sh, pe);
    }
  }
}

/* NG: mma column groups of 8 columns (direct: activation rows; staged:
 * rows x splits). NG = 1 serves launches of <= 8 columns, NG = 2 of 9..16;
 * group 0 runs the same instructions in both, and every column's arithmetic
 * is its own, so a row's result does not depend on the instantiation or its
 * slot. */
template <int FMT, bool DIRECT, int SPLITS, int NG>
__global__ void __launch_bounds__(kThreads, 2) matvec_kernel(const MatvecParams p) {
  static_assert(NG == 1 || NG == 2, "column groups");
  constexpr int BPS = Fmt<FMT>::kBlocksPerSeg;
  constexpr int U = kSegsPerWarp;
  constexpr int SLOTS = slots_per_launch(DIRECT, SPLITS);
  /* Staging units per thread: launches of NG = 1 stage <= 8 / SPLITS rows. */
  constexpr int NUI = DIRECT ? 1 : (NG * 8 / SPLITS * kMaxRoundBlocks * 4 + kThreads - 1) / kThreads;
  extern __shared__ __align__(16) char smem[];

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int ti = warp / p.ks, ks = warp % p.ks;
  const int64_t tile = (int64_t)blockIdx.x * p.tpc + ti;
  /* Rows past n (last tile) read row n-1 and are never stored. */
  const int64_t rg = min(tile * 16 + g, p.n - 1), rh = min(tile * 16 + g + 8, p.n - 1);
  const uint8_t *cg = p.codes + rg * p.row_bytes, *ch = p.codes + rh * p.row_bytes;

  char *lut = smem;
  char *bbuf = smem + smem_lut_bytes(FMT, DIRECT);
  float *pbuf = reinterpret_cast<float *>(bbuf + (size_t)p.rb_per_round * p.ncols * kColStride); /* [rb][kPCols] */
  const StageSrc src = {p.x, p.gamma, p.k, p.nblk64, p.rb_per_round, p.m_active, p.ncols,
                        p.x_bf16, p.x_vec, p.g_bf16, p.g_vec};
  float ss[NUI];
QGC_UNROLL
  for (int i = 0; i < NUI; ++i) ss[i] = 0.0f;
  if (!DIRECT) {
    if (FMT == QG_LAYOUT_NF4) nf4_lut_init(lut);
    for (int i = threadIdx.x; i < p.rb_per_round * kPCols; i += kThreads) pbuf[i] = 0.0f;
  }

  float acc[NG][4];
QGC_UNROLL
  for (int G = 0; G < NG; ++G) acc[G][0] = acc[G][1] = acc[G][2] = acc[G][3] = 0.0f;

  const int64_t segs_per_round = (int64_t)p.ks * U;
  const uint32_t lane4 = (uint32_t)lane * 4u;
  SegRegs ra[U], rb[U];

  auto load_round = [&](SegRegs(&regs)[U], int64_t round) {
QGC_UNROLL
    for (int u = 0; u < U; ++u)
      load_seg<FMT>(p, cg, ch, rg, rh, round * segs_per_round + ks * U + u, t, regs[u]);
  };
  auto run_round = [&](const SegRegs(&regs)[U], int64_t round) {
    if (!DIRECT) {
      __syncthreads(); /* every warp is done reading the previous round */
      stage_round<SPLITS, NUI>(src, round, bbuf, pbuf, ss);
      __syncthreads();
    }
QGC_UNROLL
    for (int u = 0; u < U; ++u)
      compute_seg<FMT, DIRECT, SPLITS, NG>(p, regs[u], round * segs_per_round + ks * U + u, (ks * U + u) * BPS, lut,
                                       lane4, g, t, bbuf, pbuf, acc);
  };

  /* L2 prefetch of a round's full segments of this warp, from the row
   * pointers the loads use (no extra live registers): lane (g, t) the first
   * (t even) or last (t odd) line of the U segments of row g (t < 2) or g + 8
   * (t >= 2) -- the same line when rows are 128-byte aligned, a free L2 hit
   * -- and lane (0, t < U) the scales of segment t (16 rows x 4 or 8 bytes:
   * one line). Every address lies inside the uploaded arrays. */
  constexpr int kSegScaleBytes = FMT == QG_LAYOUT_Q2_G128 ? 4 : 8;
  /* Not in direct NG = 2 (9..16 rows): there it costs a few spilled
   * registers on sm_90 (ptxas), and those launches have mma work to hide
   * latency behind. */
  constexpr bool kPrefetch = !(DIRECT && NG == 2);
  auto prefetch_round = [&](int64_t round) {
    if (!kPrefetch || round >= p.nrounds) return;
    const int64_t seg0 = round * segs_per_round + ks * U;
    if (seg0 + U - 1 < p.nseg_full) prefetch_l2((t < 2 ? cg : ch) + seg0 * 64 + (t & 1) * (U * 64 - 1));
    if (g == 0 && t < U && seg0 + t < p.nseg_full) prefetch_l2(p.scales + ((seg0 + t) * p.n + rg) * kSegScaleBytes);
  };

  load_round(ra, 0);
QGC_UNROLL
  for (int i = 2; i < kL2Ahead; ++i) prefetch_round(i);
  for (int64_t r = 0; r < p.nrounds; r += 2) {
    if (r + 1 < p.nrounds) load_round(rb, r + 1);
    prefetch_round(r + kL2Ahead);
    run_round(ra, r);
    if (r + 1 >= p.nrounds) break;
    if (r + 2 < p.nrounds) load_round(ra, r + 2);
    prefetch_round(r + 1 + kL2Ahead);
    run_round(rb, r + 1);
  }

  /* Epilogue: slice partials and sums of squares through shared memory. */
  __syncthreads();
  float4 *part = reinterpret_cast<float4 *>(smem);
  float *ssb = reinterpret_cast<float *>(smem + (size_t)kWarps * 2 * 32 * 16);
  float *inv = ssb + (DIRECT ? 0 : SLOTS * kMaxRoundBlocks * 4);
QGC_UNROLL
  for (int G = 0; G < NG; ++G)
    part[(warp * NG + G) * 32 + lane] = make_float4(acc[G][0], acc[G][1], acc[G][2], acc[G][3]);
  const bool norm = !DIRECT && p.gamma != nullptr;
  if (norm) {
    const int units = p.m_active * p.rb_per_round * 4;
QGC_UNROLL
    for (int i = 0; i < NUI; ++i) {
      const int u = threadIdx.x + i * kThreads;
      if (u < units) ssb[u] = ss[i];
    }
  }
  __syncthreads();
  if (norm) {
    if (threadIdx.x < p.m_active) {
      const int n4 = p.rb_per_round * 4;
      float sum = 0.0f;
      for (int j = 0; j < n4; ++j) sum += ssb[threadIdx.x * n4 + j];
      inv[threadIdx.x] = 1.0f / sqrtf(sum * p.inv_k + p.eps);
    }
    __syncthreads();
  }

  const float *partf = reinterpret_cast<const float *>(part);
  const int rows_cta = p.tpc * 16;
  const int total = p.m_active * rows_cta;
  for (int o = threadIdx.x; o < total; o += kThreads) {
    const int a = o / rows_cta, lr = o - a * rows_cta, tix = lr >> 4, rr = lr & 15;
    const int64_t row = ((int64_t)blockIdx.x * p.tpc + tix) * 16 + rr;
    if (row >= p.n) continue;
    const int col0 = DIRECT ? a : a * SPLITS; /* launch column, 0..15 */
    const int nsp = DIRECT ? 1 : SPLITS;
    float v = 0.0f;
    for (int sp = 0; sp < nsp; ++sp) {
      const int G = (col0 + sp) >> 3, col = (col0 + sp) & 7;
      const int l = (rr & 7) * 4 + (col >> 1), reg = (rr >> 3) * 2 + (col & 1);
      float s = 0.0f;
      for (int k2 = 0; k2 < p.ks; ++k2) s += partf[(((tix * p.ks + k2) * NG + G) * 32 + l) * 4 + reg];
      v = sp == 0 ? s : v + s;
    }
    if (norm) v *= inv[a];
    const int64_t idx = (int64_t)a * p.n + row;
    if (p.y_bf16)
      static_cast<__nv_bfloat16 *>(p.y)[idx] = __float2bfloat16_rn(v);
    else
      static_cast<float *>(p.y)[idx] = v;
  }
}

}  // namespace qgc

#endif
