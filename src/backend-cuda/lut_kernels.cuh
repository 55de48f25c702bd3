/* The lookup-table matvec (DESIGN.md section 6, "The lookup-table
 * kernel"): a weight uploaded for m = 1 in lut_layout.h's layout. Brought
 * in from the lab (bench/lab/lut.cu, bench/NOTES.md v36-v39) in its
 * measured form: PRMT addressing, 4 slots a lane, 16 warps, batches of 16
 * rows, the next batch's loads in flight (across the table build too), the
 * chunk sums and the k-split in f64.
 *
 * For every code-byte slot of a chunk the CTA builds a 256-entry f32
 * table of that slot's partial dot product with x for every byte value
 * (NF4: two codes; Q2_0: four); a weight byte then costs one shared load.
 * Slot 4l + j's table lies in bank l, and lane l of a warp reads slots 4l
 * .. 4l + 3 of a row: every lookup is conflict-free. A reduce-scatter over
 * the lanes gives lane i row i's chunk sum, added in f64. The k-split's S
 * partial rows go to the weight's workspace; lut_finish adds them in a
 * fixed order (deterministic), applies the norm's 1/rms and writes y.
 * Both launch as programmatic dependents of the kernel before them (sm_90
 * and newer), as the tile kernels do. */
#ifndef QGC_LUT_KERNELS_CUH
#define QGC_LUT_KERNELS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "kernels_decode.cuh"
#include "lut_layout.h"

namespace qgc {

struct LutParams {
  const uint4 *codes;
  const void *scales; /* NF4: f32; Q2_0: fp16 */
  const void *x;      /* one activation row, f32 or bf16 */
  const void *gamma;  /* NORM */
  double *part;       /* [S][n] */
  double *ss;         /* [S]: NORM's sums of squares of the k-split */
  int n, k, ksplit, rows_per_unit;
};

constexpr int kLutSlots = QGC_LUT_SLOTS, kLutWarps = QGC_LUT_WARPS, kLutBatch = QGC_LUT_BATCH;
constexpr int kLutThreads = kLutWarps * 32;

/* Entry (slot 4l + j, byte e) at (j >> 1) 64K + e 256 + (j & 1) 128 + 4l
 * from the 64 KB-aligned base, so that one PRMT drops code byte e into
 * byte 1 of the lane's base (bench/NOTES.md v36: 1.0-1.06x faster than
 * SHF + LOP3 addresses). */
QGC_HD constexpr uint32_t lut_table_off(int j, int e, int l) {
  return (uint32_t)((j >> 1) * 65536 + e * 256 + (j & 1) * 128 + l * 4);
}

template <int B, int J>
__device__ __forceinline__ float lut_lookup(uint32_t word, uint32_t lane_base) {
  const uint32_t a = __byte_perm(word, lane_base, 0x7604u | ((uint32_t)B << 4));
  float t;
  asm volatile("ld.shared.f32 %0, [%1 + %2];" : "=f"(t) : "r"(a), "n"((int)lut_table_off(J, 0, 0)));
  return t;
}

/* The default policy: under evict-first the kernels that take the
 * prefetch were 1.005-1.008x slower on the H100 (bench/NOTES.md v52). */
__device__ __forceinline__ void lut_prefetch_l2(const void *p, uint32_t bytes) {
#if QGC_SM90_ASM
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#else
  (void)p, (void)bytes;
#endif
}

/* pol: l2_evict_first_policy() (kernels_ptx.cuh), the weight stream's. */
__device__ __forceinline__ uint4 lut_ldg_stream(const uint4 *p, uint64_t pol) {
  uint4 v;
#if QGC_SM90_ASM
  if (QGC_EXP_WEF) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(pol));
    return v;
  }
#endif
  (void)pol;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
/* A row group's four scales of one block, widened (exactly) to f32;
 * under the weight stream's policy pol too (QGC_EXP_WEF: NF4 at the large
 * shapes 0.96-0.98x the time on the H100, bench/NOTES.md v52). */
template <bool F16>
__device__ __forceinline__ float4 lut_ldg_scales(const void *base, size_t i, uint64_t pol) {
  (void)pol;
  const bool hint = QGC_SM90_ASM && QGC_EXP_WEF;
  if constexpr (F16) {
    const uint2 *p = static_cast<const uint2 *>(base) + i;
    uint2 v;
    if (hint)
      asm volatile("ld.global.nc.L2::cache_hint.v2.u32 {%0,%1}, [%2], %3;" : "=r"(v.x), "=r"(v.y) : "l"(p), "l"(pol));
    else
      asm volatile("ld.global.nc.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    const float2 a = __half22float2(*reinterpret_cast<const __half2 *>(&v.x));
    const float2 b = __half22float2(*reinterpret_cast<const __half2 *>(&v.y));
    return make_float4(a.x, a.y, b.x, b.y);
  } else {
    const float4 *p = static_cast<const float4 *>(base) + i;
    float4 v;
    if (hint)
      asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                   : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                   : "l"(p), "l"(pol));
    else
      asm volatile("ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
  }
}

template <bool BF>
__device__ __forceinline__ float lut_elem(const void *p, int i) {
  if constexpr (BF)
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  else
    return static_cast<const float *>(p)[i];
}

/* Chunk c's slot tables: T[e] = A[e & 15] + B[e >> 4], A and B the low and
 * high nibble's partial products (NF4: one code each; Q2_0: two codes
 * each, (code - 1) x exact, one rounding an add). NORM (1: f32 gamma, 2:
 * bf16) builds from x gamma (one rounding) and adds x^2 into ss in f64
 * (a product of two f32 is exact there), one task per slot. */
template <bool NF4, bool XBF, int NORM>
__device__ void lut_build(uint32_t tb, const LutParams &p, int c, double &ss) {
  constexpr int per = NF4 ? 2 : 4;
  const int k0 = c * 32 * kLutSlots * per;
  for (int task = threadIdx.x; task < 128 * kLutSlots; task += blockDim.x) {
    const int l = task & 31, j = (task >> 5) % kLutSlots, q = task / (32 * kLutSlots);
    const int slot = kLutSlots * l + j;
    float xs[per];
#pragma unroll
    for (int i = 0; i < per; ++i) {
      xs[i] = lut_elem<XBF>(p.x, k0 + per * slot + i);
      if (NORM) {
        if (q == 0) ss += (double)xs[i] * (double)xs[i];
        xs[i] *= lut_elem<NORM == 2>(p.gamma, k0 + per * slot + i);
      }
    }
    float A[16], B[4];
    if constexpr (NF4) {
#pragma unroll
      for (int v = 0; v < 16; ++v) A[v] = nf4_value(v) * xs[0];
#pragma unroll
      for (int h = 0; h < 4; ++h) B[h] = nf4_value(4 * q + h) * xs[1];
    } else {
#pragma unroll
      for (int v = 0; v < 16; ++v) A[v] = (float)((v & 3) - 1) * xs[0] + (float)((v >> 2) - 1) * xs[1];
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        const int v = 4 * q + h;
        B[h] = (float)((v & 3) - 1) * xs[2] + (float)((v >> 2) - 1) * xs[3];
      }
    }
#pragma unroll
    for (int h = 0; h < 4; ++h)
#pragma unroll
      for (int lo = 0; lo < 16; ++lo) {
        const int e = (4 * q + h) * 16 + lo;
        asm volatile("st.shared.f32 [%0], %1;" ::"r"(tb + lut_table_off(j, e, l)), "f"(A[lo] + B[h]) : "memory");
      }
  }
}

/* Lane i ends with the sum over the lanes of v[i & 15] (on lanes i and
 * i + 16). */
template <int H>
__device__ __forceinline__ void lut_reduce_step(float (&v)[kLutBatch], int lane) {
  const bool up = lane & H;
#pragma unroll
  for (int i = 0; i < H; ++i) {
    const float send = up ? v[i] : v[i + H], keep = up ? v[i + H] : v[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, H);
  }
  if constexpr (H > 1) lut_reduce_step<H / 2>(v, lane);
}
__device__ __forceinline__ float lut_reduce_scatter(float (&v)[kLutBatch], int lane) {
  lut_reduce_step<kLutBatch / 2>(v, lane);
  return v[0] + __shfl_xor_sync(0xffffffffu, v[0], 16);
}

/* One unit (R = 16 warps x 16 rows x NB rows, k / S columns) a CTA; one
 * CTA an SM (192 KB of shared memory). */
template <int L, int NB, bool XBF, int NORM, int PF = 0>
__global__ void __launch_bounds__(kLutThreads, 1) lut_kernel(LutParams p) {
  constexpr bool NF4 = L == QG_LAYOUT_NF4;
  constexpr int GROUP = L == QG_LAYOUT_Q2_G128 ? 128 : 64; /* NF4 and Q2_0 g64: 64 */
  constexpr int CK = 32 * kLutSlots * (NF4 ? 2 : 4), NBLK = CK / GROUP, RG = kLutBatch / QGC_LUT_GROUP_ROWS;
  extern __shared__ __align__(16) unsigned char lut_smem[];
  const uint32_t raw = (uint32_t)__cvta_generic_to_shared(lut_smem);
  const uint32_t tb = (raw + 65535u) & ~65535u;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int chunks = p.k / CK, cpu = chunks / p.ksplit;
  const int rr = blockIdx.x / p.ksplit, ks = blockIdx.x % p.ksplit;
  const int row0 = rr * p.rows_per_unit, ngroups = p.n / QGC_LUT_GROUP_ROWS;
  const int blk = lane / (32 / NBLK); /* the scale block of the lane's slots */
  const uint32_t lane_base = tb + (uint32_t)lane * 4u;
  double acc[NB];
#pragma unroll
  for (int b = 0; b < NB; ++b) acc[b] = 0.0;
  double ss = 0.0;

  uint4 cw[RG];
  float4 sw[RG];
  const uint64_t wpol = QGC_EXP_WEF ? l2_evict_first_policy() : 0;
  auto load = [&](int c, int b) {
    const int g0 = (row0 + (warp + b * kLutWarps) * kLutBatch) / QGC_LUT_GROUP_ROWS;
    const uint4 *cp = p.codes + ((size_t)c * ngroups + g0) * 32 + lane;
    const size_t so = ((size_t)c * ngroups + g0) * NBLK + blk;
#pragma unroll
    for (int g = 0; g < RG; ++g) {
      cw[g] = lut_ldg_stream(cp + g * 32, wpol);
      sw[g] = lut_ldg_scales<!NF4>(p.scales, so + (size_t)g * NBLK, wpol);
    }
  };
  const int c_end = (ks + 1) * cpu;
  /* PF > 0: batch t of the CTA's slice (chunk ks cpu + t / NB, its batch
   * t % NB: all 16 warps' rows, 64 row groups, contiguous in both arrays)
   * asked of L2 PF batches ahead of the one being summed, ahead of the
   * warps' own loads, which hold one batch ahead in registers
   * (qgc_lut_l2pf says where that pays). A template parameter, not a
   * runtime one: as a runtime one it made the kernels without it 2-4%
   * slower (bench/NOTES.md v41). */
  constexpr int kScaleBytes = NF4 ? 4 : 2;
  auto prefetch = [&](int t) {
    const int c = ks * cpu + t / NB, b = t % NB;
    if (c >= c_end) return;
    const size_t g0 = (size_t)c * ngroups + (size_t)(row0 + b * kLutWarps * kLutBatch) / QGC_LUT_GROUP_ROWS;
    constexpr int groups = kLutWarps * kLutBatch / QGC_LUT_GROUP_ROWS;
    lut_prefetch_l2(p.codes + g0 * 32, groups * 32 * 16);
    lut_prefetch_l2(static_cast<const unsigned char *>(p.scales) + g0 * NBLK * 4 * kScaleBytes,
                    groups * NBLK * 4 * kScaleBytes);
  };
  if (PF > 0 && threadIdx.x == 0)
    for (int t = 1; t < PF; ++t) prefetch(t);
  /* Programmatic dependent launch (kernels_ptx.cuh): the stream's next
   * kernel (lut_finish) may be scheduled now; the first batch's weights
   * are loaded before the wait, since no kernel writes them; x, gamma and
   * the workspace (the previous call's lut_finish reads it) only after. */
  pdl_launch_dependents();
  load(ks * cpu, 0); /* the first batch's loads fly across the first build */
  pdl_wait();
  for (int c = ks * cpu; c < c_end; ++c) {
    __syncthreads(); /* the last chunk's lookups are done */
    lut_build<NF4, XBF, NORM>(tb, p, c, ss);
    __syncthreads();
#pragma unroll
    for (int b = 0; b < NB; ++b) {
      if (PF > 0 && threadIdx.x == 0) prefetch((c - ks * cpu) * NB + b + PF);
      uint4 cur[RG];
      float4 scur[RG];
#pragma unroll
      for (int g = 0; g < RG; ++g) {
        cur[g] = cw[g];
        scur[g] = sw[g];
      }
      if (b + 1 < NB)
        load(c, b + 1);
      else if (c + 1 < c_end) /* the next chunk's first batch, across its build */
        load(c + 1, 0);
      float v[kLutBatch];
#pragma unroll
      for (int g = 0; g < RG; ++g) {
        const uint32_t w4[4] = {cur[g].x, cur[g].y, cur[g].z, cur[g].w};
        const float s[4] = {scur[g].x, scur[g].y, scur[g].z, scur[g].w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float t0 = lut_lookup<0, 0>(w4[i], lane_base), t1 = lut_lookup<1, 1>(w4[i], lane_base);
          const float t2 = lut_lookup<2, 2>(w4[i], lane_base), t3 = lut_lookup<3, 3>(w4[i], lane_base);
          v[g * 4 + i] = ((t0 + t1) + (t2 + t3)) * s[i];
        }
      }
      acc[b] += (double)lut_reduce_scatter(v, lane);
    }
  }
#pragma unroll
  for (int b = 0; b < NB; ++b)
    if (lane < kLutBatch) p.part[(size_t)ks * p.n + row0 + (warp + b * kLutWarps) * kLutBatch + lane] = acc[b];
  if (NORM && rr == 0) { /* the k-slice's sum of squares, in a fixed order */
#pragma unroll
    for (int h = 16; h >= 1; h >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, h);
    double *red = reinterpret_cast<double *>(lut_smem + (tb - raw)); /* the tables' space, done with */
    __syncthreads();
    if (lane == 0) red[warp] = ss;
    __syncthreads();
    if (threadIdx.x == 0) {
      double t = red[0];
      for (int w = 1; w < kLutWarps; ++w) t += red[w];
      p.ss[ks] = t;
    }
  }
}

/* y[i] = the S partial rows added in order, in f64, times 1/rms (norm),
 * rounded once to f32 (and once more to bf16 for a bf16 y). */
__global__ void lut_finish(const double *part, const double *ss, void *y, int n, int ksplit, int k, float eps,
                           int norm, int y_bf16) {
  pdl_launch_dependents(); /* the next matvec's weight loads may start */
  pdl_wait();               /* the main kernel's partial rows are written */
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double s = part[i];
  for (int j = 1; j < ksplit; ++j) s += part[(size_t)j * n + i];
  if (norm) {
    double t = ss[0];
    for (int j = 1; j < ksplit; ++j) t += ss[j];
    s *= 1.0 / sqrt(t / (double)k + (double)eps);
  }
  const float f = (float)s;
  if (y_bf16)
    static_cast<__nv_bfloat16 *>(y)[i] = __float2bfloat16_rn(f);
  else
    static_cast<float *>(y)[i] = f;
}

}  // namespace qgc

#endif
