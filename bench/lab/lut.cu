/* The activation-side lookup-table matvec (T-MAC style), NF4 and Q2_0, on
 * CUDA cores in f32: a question for issue 13, standalone beside
 * the tensor-core lab (bench/NOTES.md v36).
 *
 * Idea. A weight code byte holds 2 NF4 codes or 4 Q2_0 codes. For every
 * byte position ("slot") of a k chunk the CTA builds a 256-entry f32 table
 * of that slot's partial dot product with x for every byte value; the
 * weights then cost one shared-memory lookup per byte instead of a decode
 * per code. With each slot's table in one bank, and a warp's 32 lanes on 32
 * slots of one row, every lookup instruction is conflict-free: 1 wavefront
 * per 32 bytes (64 NF4 codes), against the tensor-core kernel's 2 per 64
 * codes for the fp16 hi/lo table alone. All arithmetic is f32, so the
 * contract holds without the NF4 exception of DESIGN.md section 5.
 *
 * Geometry. A chunk is 32 * SPL code bytes of a row (SPL 4: NF4 256 k,
 * Q2_0 512 k, 128 KB of tables; SPL 2: half): lane l owns slots SPL*l ..
 * SPL*l + SPL - 1 (consecutive bytes, in one block of every layout), and
 * table (slot SPL*l + j) lives in bank l. A unit is R rows x K/S columns
 * (S the k-split); its CTA builds one chunk's tables at a time, then its
 * warps look up their rows' batches; a reduce-scatter over the lanes gives
 * lane i row i's chunk sum. The S partial rows are added in a fixed order
 * (deterministic) by a second kernel, or in the CTAs' cluster (CL). Batched
 * rows (MR) take one pass each over a chunk, tables rebuilt, codes read
 * again; the fused RMSNorm (NORM) is written for the cluster form.
 *
 * Device layout (host repack): codes [chunk][n/GR row groups][32 lanes] of
 * uint4 (byte b = row GR*g + b / SPL's slot SPL*l + b % SPL, GR = 16 / SPL);
 * scales [chunk][n/GR][blocks][GR rows] f32 (NF4 as stored, Q2_0's fp16 d
 * widened exactly), or for Q2_0 (SC16) the same order in fp16: the packed
 * format's bytes, and the same values, so the same y.
 *
 * Build (sm_90 SASS; nvcc 13):
 *   nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -diag-suppress 128 -Xptxas -v \
 *     -o lut bench/lab/lut.cu bench/lab/host_data.cu -Xcompiler -static-libstdc++
 * Run: ./lut [--shapes NxK,...] [--fmts nf4,q2g64,q2g128] [--json FILE] [--only VARIANT] [--S KSPLIT]
 *      [--deadline SECONDS] (skip what would start after it; the best table and JSON are still written)
 *      [--no-time] (the checks only: lut-check.sh runs it under compute-sanitizer);
 *      --S runs that k-split at any unit count, the sweep's wave filter off
 */
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <vector>

#include "decode.cuh"
#include "host_data.h"

using namespace lab;

#define CK(call)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

namespace {

constexpr int kMaxM = 8; /* activation rows of the batched variants */

/* SPL slots (code bytes) per lane per chunk: 4 (128 KB of tables; Hopper)
 * or 2 (64 KB; fits GB10's 99 KB, or two CTAs per Hopper SM). */
__host__ __device__ constexpr int table_bytes(int spl) { return spl * 32 * 256 * 4; }
__host__ __device__ constexpr int chunk_k(int fmt, int spl) { return 32 * spl * (fmt == kNF4 ? 2 : 4); }
__host__ __device__ constexpr int chunk_blocks(int fmt, int spl) { return chunk_k(fmt, spl) / fmt_bk(fmt); }
/* rows a lane's 16-byte word covers */
__host__ __device__ constexpr int group_rows(int spl) { return 16 / spl; }

/* Table placement. ADDR 0: entry (slot SPL*l + j, byte e) at j*32K + e*128 +
 * 4l, the address from the code word by SHF + LOP3 (base aligned to 32 KB).
 * ADDR 1: at (j>>1)*64K + e*256 + (j&1)*128 + 4l, the address by one PRMT
 * that drops byte e into byte 1 of the lane's base (base aligned to 64 KB). */
template <int ADDR>
__host__ __device__ constexpr uint32_t table_off(int j, int e, int l) {
  return ADDR == 0 ? (uint32_t)(j * 32768 + e * 128 + l * 4)
                   : (uint32_t)((j >> 1) * 65536 + e * 256 + (j & 1) * 128 + l * 4);
}
template <int ADDR>
__host__ __device__ constexpr uint32_t table_align() { return ADDR == 0 ? 32768u : 65536u; }

__host__ __device__ inline uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, s);
#else
  const uint64_t b = ((uint64_t)y << 32) | x;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= (uint32_t)((b >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
#endif
}

/* Address of byte B's entry in the lane's slot-0 table (slot J's adds
 * table_off(J, 0, 0)); the kernel and the host emulation both use it. */
template <int ADDR>
__host__ __device__ inline uint32_t entry_addr(uint32_t word, int B, uint32_t lane_base) {
  if (ADDR == 0) return ((B == 0 ? word << 7 : word >> (8 * B - 7)) & 0x7f80u) | lane_base;
  /* byte 0 and bytes 2-3 from the base, byte 1 = code byte B */
  return byte_perm(word, lane_base, 0x7604u | ((uint32_t)B << 4));
}

/* The table entry of byte B of a code word, in slot J's table. */
template <int ADDR, int B, int J>
__device__ __forceinline__ float lookup(uint32_t word, uint32_t lane_base) {
  const uint32_t a = entry_addr<ADDR>(word, B, lane_base);
  float t;
  asm volatile("ld.shared.f32 %0, [%1 + %2];" : "=f"(t) : "r"(a), "n"((int)table_off<ADDR>(J, 0, 0)));
  return t;
}

__device__ __forceinline__ uint4 ldg_stream(const uint4 *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ float4 ldg_f4(const float4 *p) {
  float4 v;
  asm volatile("ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
/* four fp16 scales, widened (exact) */
__device__ __forceinline__ float4 ldg_h4(const uint2 *p) {
  uint2 v;
  asm volatile("ld.global.nc.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
  const float2 a = __half22float2(*reinterpret_cast<const __half2 *>(&v.x));
  const float2 b = __half22float2(*reinterpret_cast<const __half2 *>(&v.y));
  return make_float4(a.x, a.y, b.x, b.y);
}

/* Slot tables of chunk c: T[e] = A[e & 15] + B[e >> 4], where A and B are
 * the low and high nibble's partial products (NF4: one code each; Q2_0: two
 * codes each, (code - 1) * x exact in f32, one rounding per add). NORM: the
 * tables take x * gamma, and ss gathers the chunk's x^2 (one task per slot
 * counts it) for 1/rms, applied to the finished sums. */
template <int FMT, int ADDR, int SPL, int NORM>
__device__ void build_tables(uint32_t tb, const float *x, const float *gamma, int c, float &ss) {
  const int k0 = c * chunk_k(FMT, SPL);
  for (int task = threadIdx.x; task < 128 * SPL; task += blockDim.x) {
    const int l = task & 31, j = (task >> 5) % SPL, q = task / (32 * SPL);
    const int slot = SPL * l + j;
    float A[16], B[4];
    if (FMT == kNF4) {
      float x0 = x[k0 + 2 * slot], x1 = x[k0 + 2 * slot + 1];
      if (NORM) {
        if (q == 0) ss = fmaf(x1, x1, fmaf(x0, x0, ss));
        x0 *= gamma[k0 + 2 * slot];
        x1 *= gamma[k0 + 2 * slot + 1];
      }
#pragma unroll
      for (int v = 0; v < 16; ++v) A[v] = nf4_value(v) * x0;
#pragma unroll
      for (int h = 0; h < 4; ++h) B[h] = nf4_value(4 * q + h) * x1;
    } else {
      float4 xv = *reinterpret_cast<const float4 *>(x + k0 + 4 * slot);
      if (NORM) {
        if (q == 0) ss = fmaf(xv.w, xv.w, fmaf(xv.z, xv.z, fmaf(xv.y, xv.y, fmaf(xv.x, xv.x, ss))));
        const float4 g = *reinterpret_cast<const float4 *>(gamma + k0 + 4 * slot);
        xv.x *= g.x;
        xv.y *= g.y;
        xv.z *= g.z;
        xv.w *= g.w;
      }
#pragma unroll
      for (int v = 0; v < 16; ++v) A[v] = (float)((v & 3) - 1) * xv.x + (float)((v >> 2) - 1) * xv.y;
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        const int v = 4 * q + h;
        B[h] = (float)((v & 3) - 1) * xv.z + (float)((v >> 2) - 1) * xv.w;
      }
    }
#pragma unroll
    for (int h = 0; h < 4; ++h)
#pragma unroll
      for (int lo = 0; lo < 16; ++lo) {
        const int e = (4 * q + h) * 16 + lo;
        asm volatile("st.shared.f32 [%0], %1;" ::"r"(tb + table_off<ADDR>(j, e, l)), "f"(A[lo] + B[h]) : "memory");
      }
  }
}

/* Lane i ends with the sum over the lanes of v[i] (NV = 32), or of v[i & 15]
 * on lanes i and i + 16 (NV = 16). */
template <int H, int NV>
__device__ __forceinline__ void reduce_step(float (&v)[NV], int lane) {
  const bool up = lane & H;
#pragma unroll
  for (int i = 0; i < H; ++i) {
    const float send = up ? v[i] : v[i + H], keep = up ? v[i + H] : v[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, H);
  }
  if constexpr (H > 1) reduce_step<H / 2, NV>(v, lane);
}
template <int NV>
__device__ __forceinline__ float reduce_scatter(float (&v)[NV], int lane) {
  reduce_step<NV / 2, NV>(v, lane);
  if constexpr (NV == 16) v[0] += __shfl_xor_sync(0xffffffffu, v[0], 16);
  return v[0];
}

struct Params {
  const uint4 *codes;
  const float4 *scales;
  const uint2 *scales16; /* SC16: the same scales in fp16, 4 a uint2 */
  const float *x;
  float *part; /* [S][m][n] */
  double *part64; /* ACC64: the same in f64 */
  float *y;    /* CL: written by the kernel */
  const float *gamma; /* NORM */
  float eps;
  int n, k, rows_per_unit, ksplit, m;
};

/* W warps; BATCH rows a batch (16 or 32); NB batches per warp per chunk
 * (R = W * BATCH * NB); PREF 1: the next batch's loads issued before this
 * batch's lookups, 2: also the next chunk's (or row's) first batch before
 * the table build; MINB CTAs per SM for the register budget; MR activation
 * rows at most, one pass each. CL: the k-split's S CTAs form a thread-block
 * cluster and add their partial rows through distributed shared memory, in
 * order (no workspace, no second kernel; MR = 1 only). */
template <int FMT, int ADDR, int SPL, int W, int BATCH, int NB, int PREF, int MINB, int LOADS_ONLY, int MR, int CL,
          int NORM, int SC16, int ACC64>
__global__ void __launch_bounds__(W * 32, MINB) lut_kernel(Params p) {
  /* ACC64 (v38): a unit's chunk sums and the k-split's partial rows added
   * in f64, so that the roundings a product sees do not grow with k
   * (bench/NOTES.md v38: the contract's proof at long k) */
  using Acc = typename std::conditional<ACC64 != 0, double, float>::type;
  static_assert(!SC16 || FMT != kNF4, "NF4's scales are f32 in the format");
  static_assert(!NORM || (CL && MR == 1), "the fused norm is written for the cluster form, m = 1");
  float ss = 0.0f;
  extern __shared__ __align__(16) unsigned char smem[];
  const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem);
  const uint32_t tb = (raw + table_align<ADDR>() - 1) & ~(table_align<ADDR>() - 1);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int chunks = p.k / chunk_k(FMT, SPL), cpu = chunks / p.ksplit;
  const int unit = blockIdx.x, rr = unit / p.ksplit, ks = unit % p.ksplit;
  const int row0 = rr * p.rows_per_unit;
  constexpr int GR = group_rows(SPL), NBLK = chunk_blocks(FMT, SPL), RG = BATCH / GR, SQ = GR / 4;
  const int ngroups = p.n / GR;
  const int blk = lane / (32 / NBLK);
  const uint32_t lane_base = tb + (uint32_t)lane * 4u;
  Acc acc[MR][NB];
#pragma unroll
  for (int a = 0; a < MR; ++a)
#pragma unroll
    for (int b = 0; b < NB; ++b) acc[a][b] = 0;

  uint4 cw[RG];
  float4 sw[RG * SQ];
  auto load = [&](int c, int b) {
    const int g0 = (row0 + (warp + b * W) * BATCH) / GR;
    const uint4 *cp = p.codes + ((size_t)c * ngroups + g0) * 32 + lane;
    const size_t so = (((size_t)c * ngroups + g0) * NBLK + blk) * SQ;
#pragma unroll
    for (int g = 0; g < RG; ++g) {
      cw[g] = ldg_stream(cp + g * 32);
#pragma unroll
      for (int q = 0; q < SQ; ++q)
        sw[g * SQ + q] = SC16 ? ldg_h4(p.scales16 + so + g * NBLK * SQ + q) : ldg_f4(p.scales + so + g * NBLK * SQ + q);
    }
  };
  const int c_end = (ks + 1) * cpu;
  if (PREF == 2) load(ks * cpu, 0);
  for (int c = ks * cpu; c < c_end; ++c)
#pragma unroll
  for (int a = 0; a < MR; ++a) {
    /* batched: one activation row at a time, its tables rebuilt and the
     * chunk's codes read again (from L2 after the first row) */
    if (a >= p.m) break;
    if (!LOADS_ONLY) {
      __syncthreads();
      build_tables<FMT, ADDR, SPL, NORM>(tb, p.x + (size_t)a * p.k, p.gamma, c, ss);
      __syncthreads();
    }
    if (PREF == 1) load(c, 0);
#pragma unroll
    for (int b = 0; b < NB; ++b) {
      uint4 cur[RG];
      float4 scur[RG * SQ];
      if (!PREF) load(c, b);
#pragma unroll
      for (int g = 0; g < RG; ++g) cur[g] = cw[g];
#pragma unroll
      for (int g = 0; g < RG * SQ; ++g) scur[g] = sw[g];
      if (PREF && b + 1 < NB) {
        load(c, b + 1);
      } else if (PREF == 2) { /* the next pass's first batch, across the build */
        const int cn = a + 1 < MR && a + 1 < p.m ? c : c + 1;
        if (cn < c_end) load(cn, 0);
      }
      float v[BATCH];
#pragma unroll
      for (int g = 0; g < RG; ++g) {
        const uint32_t w4[4] = {cur[g].x, cur[g].y, cur[g].z, cur[g].w};
        float s[GR];
#pragma unroll
        for (int q = 0; q < SQ; ++q) {
          s[4 * q] = scur[g * SQ + q].x;
          s[4 * q + 1] = scur[g * SQ + q].y;
          s[4 * q + 2] = scur[g * SQ + q].z;
          s[4 * q + 3] = scur[g * SQ + q].w;
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          if (LOADS_ONLY) { /* the same loads and reduction, no tables: a wrong y */
#pragma unroll
            for (int h = 0; h < 4 / SPL; ++h)
              v[g * GR + i * (4 / SPL) + h] = __uint_as_float((w4[i] >> h) & 0x3fffffffu) * s[i * (4 / SPL) + h];
            continue;
          }
          if constexpr (SPL == 4) {
            const float t0 = lookup<ADDR, 0, 0>(w4[i], lane_base), t1 = lookup<ADDR, 1, 1>(w4[i], lane_base);
            const float t2 = lookup<ADDR, 2, 2>(w4[i], lane_base), t3 = lookup<ADDR, 3, 3>(w4[i], lane_base);
            v[g * GR + i] = ((t0 + t1) + (t2 + t3)) * s[i];
          } else { /* word i: rows 2i (bytes 0-1) and 2i + 1 (bytes 2-3) */
            const float t0 = lookup<ADDR, 0, 0>(w4[i], lane_base), t1 = lookup<ADDR, 1, 1>(w4[i], lane_base);
            const float t2 = lookup<ADDR, 2, 0>(w4[i], lane_base), t3 = lookup<ADDR, 3, 1>(w4[i], lane_base);
            v[g * GR + 2 * i] = (t0 + t1) * s[2 * i];
            v[g * GR + 2 * i + 1] = (t2 + t3) * s[2 * i + 1];
          }
        }
      }
      acc[a][b] += (Acc)reduce_scatter<BATCH>(v, lane);
    }
  }
  if constexpr (CL) {
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    Acc *mine = reinterpret_cast<Acc *>(smem + (tb - raw)); /* the tables' space, done with */
    __syncthreads();
#pragma unroll
    for (int b = 0; b < NB; ++b)
      if (lane < BATCH) mine[(warp + b * W) * BATCH + lane] = acc[0][b];
    if (NORM) { /* this CTA's sum of squares after its rows, in a fixed order */
#pragma unroll
      for (int h = 16; h >= 1; h >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, h);
      if (lane == 0) mine[p.rows_per_unit + 1 + warp] = ss;
      __syncthreads();
      if (threadIdx.x == 0) {
        float t = (float)mine[p.rows_per_unit + 1];
        for (int w2 = 1; w2 < W; ++w2) t += (float)mine[p.rows_per_unit + 1 + w2];
        mine[p.rows_per_unit] = t;
      }
    }
    cluster.sync();
    float inv = 1.0f;
    if (NORM) {
      float t = 0.0f;
      for (int j = 0; j < p.ksplit; ++j) {
        const float v = (float)cluster.map_shared_rank(mine, j)[p.rows_per_unit];
        t = j ? t + v : v;
      }
      inv = 1.0f / sqrtf(t / (float)p.k + p.eps);
    }
    const int share = p.rows_per_unit / p.ksplit;
    for (int i = threadIdx.x; i < share; i += blockDim.x) {
      const int r = ks * share + i;
      Acc s = 0;
      for (int j = 0; j < p.ksplit; ++j) {
        const Acc v = cluster.map_shared_rank(mine, j)[r];
        s = j ? s + v : v;
      }
      p.y[row0 + r] = NORM ? (float)(s * (Acc)inv) : (float)s;
    }
    cluster.sync(); /* the others' reads of this CTA's rows are done */
  } else {
#pragma unroll
    for (int a = 0; a < MR; ++a)
#pragma unroll
      for (int b = 0; b < NB; ++b)
        if (a < p.m && lane < BATCH) {
          const size_t i = ((size_t)ks * p.m + a) * p.n + row0 + (warp + b * W) * BATCH + lane;
          if constexpr (ACC64)
            p.part64[i] = acc[a][b];
          else
            p.part[i] = acc[a][b];
        }
  }
}

/* y[a][i] = the k-split's partial rows added in order (deterministic);
 * in f64 for ACC64's partial rows, rounded once. */
template <typename Acc>
__global__ void sum_parts(const Acc *part, float *y, int n, int ksplit, int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n * m) return;
  const int a = i / n, r = i % n;
  Acc s = part[(size_t)a * n + r];
  for (int j = 1; j < ksplit; ++j) s += part[((size_t)j * m + a) * n + r];
  y[i] = (float)s;
}

/* Host repack into the layout above: byte b of lane l's word in row group g
 * is row GR*g + b / SPL's slot SPL*l + b % SPL. */
void repack(const Weight &w, int spl, std::vector<uint32_t> &codes, std::vector<float> &scales) {
  const int fmt = w.fmt, ck = chunk_k(fmt, spl), nblk = chunk_blocks(fmt, spl), bk = fmt_bk(fmt),
            gr = group_rows(spl);
  const int64_t n = w.n, chunks = w.k / ck, groups = n / gr;
  codes.assign((size_t)(chunks * groups * 32 * 4), 0);
  scales.assign((size_t)(chunks * groups * nblk * gr), 0.0f);
  parallel_for(groups, [&](int64_t g) {
    for (int64_t c = 0; c < chunks; ++c) {
      for (int l = 0; l < 32; ++l)
        for (int b = 0; b < 16; ++b) {
          const int64_t row = gr * g + b / spl;
          const int slot = spl * l + b % spl;
          uint32_t byte = 0;
          if (fmt == kNF4) {
            const int64_t kk = c * ck + 2 * slot;
            byte = (uint32_t)w.code(row, kk) | ((uint32_t)w.code(row, kk + 1) << 4);
          } else {
            const int64_t kk = c * ck + 4 * slot;
            for (int i = 0; i < 4; ++i) byte |= (uint32_t)w.code(row, kk + i) << (2 * i);
          }
          codes[(size_t)(((c * groups + g) * 32 + l) * 4 + b / 4)] |= byte << (8 * (b % 4));
        }
      for (int r = 0; r < gr; ++r)
        for (int b = 0; b < nblk; ++b)
          scales[(size_t)(((c * groups + g) * nblk + b) * gr + r)] = (float)w.scale(gr * g + r, c * ck + b * bk);
    }
  });
}

struct Variant {
  const char *name;
  int addr, spl, w, batch, nb, pref, minb, loads_only, mr, cl, norm, sc16, acc64;
  void (*fn)(Params);
};

template <int FMT, int ADDR, int SPL, int W, int BATCH, int NB, int PREF, int MINB = 1, int LO = 0, int MR = 1,
          int CL = 0, int NORM = 0, int SC16 = 0, int ACC64 = 0>
Variant make_variant(const char *name) {
  return Variant{name, ADDR, SPL, W, BATCH, NB, PREF, MINB, LO, MR, CL, NORM, SC16, ACC64,
                 lut_kernel<FMT, ADDR, SPL, W, BATCH, NB, PREF, MINB, LO, MR, CL, NORM, SC16, ACC64>};
}

/* The main kernel, and the partial sums unless the cluster adds them. */
cudaError_t launch_lut(const Variant &v, int units, size_t smem, cudaStream_t s, const Params &p, bool with_sum) {
  if (v.cl) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(units);
    cfg.blockDim = dim3(v.w * 32);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = p.ksplit;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, v.fn, p);
  }
  v.fn<<<units, v.w * 32, smem, s>>>(p);
  if (with_sum && v.acc64)
    sum_parts<double><<<(int)((p.n * p.m + 255) / 256), 256, 0, s>>>(p.part64, p.y, p.n, p.ksplit, p.m);
  else if (with_sum)
    sum_parts<float><<<(int)((p.n * p.m + 255) / 256), 256, 0, s>>>(p.part, p.y, p.n, p.ksplit, p.m);
  return cudaGetLastError();
}

template <int FMT>
std::vector<Variant> variants() {
  std::vector<Variant> v = {
      make_variant<FMT, 1, 4, 16, 32, 4, 0>("prmt-w16-b32-nb4"),
      make_variant<FMT, 1, 4, 16, 16, 8, 1>("prmt-w16-b16-nb8-pref"),
      make_variant<FMT, 1, 4, 16, 16, 8, 2>("prmt-w16-b16-nb8-pref2"),
      make_variant<FMT, 1, 4, 16, 16, 4, 2>("prmt-w16-b16-nb4-pref2"),
      make_variant<FMT, 1, 4, 14, 16, 8, 2>("prmt-w14-b16-nb8-pref2"),
      make_variant<FMT, 1, 4, 14, 16, 8, 2, 1, 0, 1, 1>("cl-prmt-w14-b16-nb8-pref2"),
      make_variant<FMT, 1, 4, 16, 16, 8, 0>("prmt-w16-b16-nb8"),
      make_variant<FMT, 0, 4, 16, 16, 8, 1>("shf-w16-b16-nb8-pref"),
      make_variant<FMT, 1, 4, 16, 16, 4, 1>("prmt-w16-b16-nb4-pref"),
      make_variant<FMT, 1, 4, 16, 16, 2, 1>("prmt-w16-b16-nb2-pref"),
      make_variant<FMT, 1, 4, 8, 16, 8, 1>("prmt-w8-b16-nb8-pref"),
      make_variant<FMT, 1, 4, 8, 32, 4, 0>("prmt-w8-b32-nb4"),
      make_variant<FMT, 1, 4, 8, 16, 4, 1>("prmt-w8-b16-nb4-pref"),
      make_variant<FMT, 0, 2, 8, 32, 4, 1, 2>("s2-shf-w8-b32-nb4-pref-2cta"),
      make_variant<FMT, 0, 2, 8, 16, 8, 1, 2>("s2-shf-w8-b16-nb8-pref-2cta"),
      make_variant<FMT, 1, 2, 16, 32, 4, 1>("s2-prmt-w16-b32-nb4-pref"),
      make_variant<FMT, 0, 2, 16, 16, 4, 1>("s2-shf-w16-b16-nb4-pref"),
      make_variant<FMT, 1, 4, 16, 16, 4, 2, 1, 0, 8>("m8-prmt-w16-b16-nb4-pref2"),
      make_variant<FMT, 1, 4, 16, 16, 8, 2, 1, 0, 1, 1>("cl-prmt-w16-b16-nb8-pref2"),
      make_variant<FMT, 1, 4, 16, 16, 8, 2, 1, 0, 1, 1, 1>("cl-norm-prmt-w16-b16-nb8-pref2"),
      make_variant<FMT, 1, 4, 16, 16, 4, 2, 1, 0, 1, 1, 1>("cl-norm-prmt-w16-b16-nb4-pref2"),
      make_variant<FMT, 1, 4, 16, 16, 4, 1, 1, 0, 1, 1>("cl-prmt-w16-b16-nb4-pref"),
      make_variant<FMT, 0, 2, 8, 32, 4, 1, 2, 0, 1, 1>("cl-s2-shf-w8-b32-nb4-pref-2cta"),
      make_variant<FMT, 1, 4, 16, 16, 8, 1, 1, 1>("LOADS-w16-b16-nb8-pref"),
      make_variant<FMT, 1, 4, 16, 16, 4, 1, 1, 1>("LOADS-w16-b16-nb4-pref"),
      /* v38: the cluster at R 1024 (8192 x 28672 needs S 16 there) */
      make_variant<FMT, 1, 4, 16, 16, 4, 2, 1, 0, 1, 1>("cl-prmt-w16-b16-nb4-pref2"),
      /* v38: the chunk sums and the k-split in f64 (the landing form) */
      make_variant<FMT, 1, 4, 16, 16, 8, 2, 1, 0, 1, 0, 0, 0, 1>("a64-prmt-w16-b16-nb8-pref2"),
      make_variant<FMT, 1, 4, 16, 16, 8, 2, 1, 0, 1, 1, 0, 0, 1>("cl-a64-prmt-w16-b16-nb8-pref2"),
      make_variant<FMT, 1, 4, 16, 16, 4, 2, 1, 0, 1, 1, 0, 0, 1>("cl-a64-prmt-w16-b16-nb4-pref2"),
      make_variant<FMT, 1, 4, 16, 16, 8, 2, 1, 0, 1, 1, 1, 0, 1>("cl-norm-a64-prmt-w16-b16-nb8-pref2"),
      /* GB10's form (SPL 2, 64 KB of tables) with the f64 sums */
      make_variant<FMT, 0, 2, 8, 32, 4, 1, 2, 0, 1, 1, 0, 0, 1>("cl-a64-s2-shf-w8-b32-nb4-pref-2cta"),
  };
  if constexpr (FMT != kNF4) { /* v38: Q2_0's scales in fp16, the packed bytes */
    v.push_back(make_variant<FMT, 1, 4, 16, 16, 8, 2, 1, 0, 1, 0, 0, 1>("sc16-prmt-w16-b16-nb8-pref2"));
    v.push_back(make_variant<FMT, 1, 4, 16, 16, 8, 2, 1, 0, 1, 1, 0, 1>("cl-sc16-prmt-w16-b16-nb8-pref2"));
    v.push_back(make_variant<FMT, 1, 4, 16, 16, 8, 2, 1, 0, 1, 1, 1, 1>("cl-norm-sc16-prmt-w16-b16-nb8-pref2"));
    v.push_back(make_variant<FMT, 1, 4, 16, 16, 8, 1, 1, 1, 1, 0, 0, 1>("LOADS-sc16-w16-b16-nb8-pref"));
    v.push_back(make_variant<FMT, 1, 4, 16, 16, 8, 2, 1, 0, 1, 1, 0, 1, 1>("cl-a64-sc16-prmt-w16-b16-nb8-pref2"));
  }
  return v;
}

const char *fmt_name(int f) { return f == kNF4 ? "nf4" : f == kQ2G64 ? "q2g64" : "q2g128"; }

struct Result {
  std::string fmt, variant;
  int64_t n, k;
  int R, S, units;
  double us_main, us_total, gbs;
  bool pass;
  double worst;
  bool loads_only;
  int m;
};

/* --deadline: the sweep skips what starts after it, so that the best table
 * and the JSON are still written inside the caller's time limit */
double g_deadline_s = 0.0;
/* --no-time: the checks only, for compute-sanitizer, under which timing is
 * meaningless and the 280 timed launches a case would dominate the run */
bool g_no_time = false;
const auto g_start = std::chrono::steady_clock::now();
bool past_deadline() {
  return g_deadline_s > 0.0 &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count() > g_deadline_s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <int FMT>
void run_format(const std::pair<int64_t, int64_t> &shape, int sms, const std::string &only, int only_s,
                std::vector<Result> &out) {
  std::vector<Variant> all;
  for (const Variant &v : variants<FMT>())
    if (only.empty() || only == v.name) all.push_back(v);
  { /* one shape a call: main goes shape by shape over the formats */
    const int64_t n = shape.first, k = shape.second;
    if (past_deadline()) {
      printf("%-6s %6lldx%-6lld skipped (past the deadline)\n", fmt_name(FMT), (long long)n, (long long)k);
      return;
    }
    const Weight w = make_weight(FMT, n, k, 42 + FMT * 7 + (uint64_t)n * 3 + (uint64_t)k);
    const std::vector<int64_t> rows = sample_rows(n, 512);
    const int patterns[] = {kNormal, kAdversarial, kPositive};
    std::vector<Acts> acts;
    std::vector<Ref> refs, refs_norm;
    for (int pat : patterns) {
      acts.push_back(make_acts(kMaxM, k, false, pat, 1000 + pat * 17));
      refs.push_back(reference(w, acts.back(), kMaxM, false, 1e-5f, rows));
      refs_norm.push_back(reference(w, acts.back(), 1, true, 1e-5f, rows));
    }
    for (int spl : {4, 2}) {
    std::vector<Variant> vs;
    for (const Variant &v : all)
      if (v.spl == spl) vs.push_back(v);
    if (vs.empty() || k % chunk_k(FMT, spl)) continue;
    std::vector<uint32_t> hc;
    std::vector<float> hs;
    repack(w, spl, hc, hs);
    const size_t cbytes = hc.size() * 4, sbytes = hs.size() * 4, wbytes = w.packed_bytes();
    const int copies = (int)std::max<size_t>(2, (512u << 20) / (cbytes + sbytes) + 1);
    std::vector<uint4 *> dc(copies);
    std::vector<float4 *> ds(copies);
    std::vector<uint2 *> ds16(copies, nullptr); /* Q2_0: the scales in fp16 (exact: its d is fp16) */
    std::vector<__half> hs16;
    if (FMT != kNF4)
      for (float f : hs) hs16.push_back(__float2half_rn(f));
    for (int i = 0; i < copies; ++i) {
      CK(cudaMalloc(&dc[i], cbytes));
      CK(cudaMalloc(&ds[i], sbytes));
      CK(cudaMemcpy(dc[i], hc.data(), cbytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(ds[i], hs.data(), sbytes, cudaMemcpyHostToDevice));
      if (!hs16.empty()) {
        CK(cudaMalloc(&ds16[i], sbytes / 2));
        CK(cudaMemcpy(ds16[i], hs16.data(), sbytes / 2, cudaMemcpyHostToDevice));
      }
    }
    float *dx, *dy, *dpart, *dgamma;
    CK(cudaMalloc(&dgamma, (size_t)k * 4));
    CK(cudaMalloc(&dx, (size_t)k * 4 * kMaxM));
    CK(cudaMalloc(&dy, (size_t)n * 4 * kMaxM));
    CK(cudaMalloc(&dpart, (size_t)n * 4 * 64 * kMaxM));
    double *dpart64;
    CK(cudaMalloc(&dpart64, (size_t)n * 8 * 64 * kMaxM));
    const int chunks = (int)(k / chunk_k(FMT, spl));
    for (const Variant &v : vs) {
      const size_t smem = table_bytes(spl) + (v.addr == 0 ? 32768 : 65536);
      /* clusters of more than 8 (Hopper's non-portable size) where S needs them */
      if (cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
          (v.cl && cudaFuncSetAttribute(v.fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)) {
        cudaGetLastError();
        printf("%s %s: no %zu B of shared memory\n", fmt_name(FMT), v.name, smem);
        continue;
      }
      const int R = v.w * v.batch * v.nb;
      if (n % R) continue;
      /* k-splits: every divisor of the chunk count giving at most 3 waves */
      for (int S = 1; S <= chunks && S <= 64; ++S) {
        if (chunks % S) continue;
        const int units = (int)(n / R) * S;
        /* the wave filter is the sweep's; a k-split named by --S runs at any
         * unit count (lut-check.sh's small shapes) */
        if (only_s ? S != only_s : units < sms / 2 || units > 3 * sms * v.minb) continue;
        if (v.cl && (S > 16 || R % S)) continue; /* 16: a non-portable cluster size (Hopper) */
        for (int m = 1; m <= v.mr; m *= 2) {
        if (past_deadline()) {
          printf("%-6s %6lldx%-6lld %-28s m %d S %3d: skipped (past the deadline)\n", fmt_name(FMT), (long long)n,
                 (long long)k, v.name, m, S);
          continue;
        }
        Params p{};
        p.codes = dc[0];
        p.scales = ds[0];
        p.scales16 = ds16[0];
        p.x = dx;
        p.part = dpart;
        p.part64 = dpart64;
        p.y = dy;
        p.gamma = dgamma;
        p.eps = 1e-5f;
        p.n = (int)n;
        p.k = (int)k;
        p.rows_per_unit = R;
        p.ksplit = S;
        p.m = m;
        auto launch = [&](const float *x, int rows_m, cudaStream_t s) {
          Params q = p;
          q.x = x;
          q.m = rows_m;
          return launch_lut(v, units, smem, s, q, true);
        };
        {
          cudaError_t e0 = launch(dx, m, 0);
          if (e0 == cudaSuccess) e0 = cudaDeviceSynchronize();
          if (e0 != cudaSuccess) {
            printf("%-6s %6lldx%-6lld %-28s m %d R %5d S %3d: launch failed: %s\n", fmt_name(FMT), (long long)n,
                   (long long)k, v.name, m, R, S, cudaGetErrorString(e0));
            cudaGetLastError();
            continue;
          }
        }
        bool pass = true, same_bits = true;
        double worst = 0.0;
        for (size_t a = 0; a < acts.size(); ++a) {
          CK(cudaMemcpy(dx, acts[a].x.data(), (size_t)k * 4 * m, cudaMemcpyHostToDevice));
          CK(cudaMemcpy(dgamma, acts[a].gamma.data(), (size_t)k * 4, cudaMemcpyHostToDevice));
          CK(cudaMemset(dy, 0xff, (size_t)n * 4 * m));
          CK(launch(dx, m, 0));
          std::vector<float> y((size_t)n * m);
          CK(cudaMemcpy(y.data(), dy, (size_t)n * 4 * m, cudaMemcpyDeviceToHost));
          const Check ch = check(v.norm ? refs_norm[a] : refs[a], y.data(), m, n, false);
          pass = pass && ch.pass;
          worst = std::max(worst, ch.worst);
          /* batched rows bit-identical to m = 1 on that row (first and last) */
          for (int row : {0, m - 1}) {
            if (m == 1) break;
            CK(launch(dx + (size_t)row * k, 1, 0));
            std::vector<float> y1((size_t)n);
            CK(cudaMemcpy(y1.data(), dy, (size_t)n * 4, cudaMemcpyDeviceToHost));
            same_bits = same_bits && !memcmp(y1.data(), y.data() + (size_t)row * n, (size_t)n * 4);
          }
        }
        CK(cudaMemcpy(dx, acts[0].x.data(), (size_t)k * 4 * m, cudaMemcpyHostToDevice));
        /* timing: graphs of 20 launches over the rotating copies */
        cudaStream_t st;
        CK(cudaStreamCreate(&st));
        double times[2] = {0.0, 0.0};
        for (int withsum = 0; withsum < 2 && !g_no_time; ++withsum) {
          if (withsum && v.cl) { /* no partial-sum kernel to add */
            times[1] = times[0];
            break;
          }
          cudaGraph_t g;
          cudaGraphExec_t ge;
          CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
          const int iters = 20;
          for (int it = 0; it < iters; ++it) {
            p.codes = dc[it % copies];
            p.scales = ds[it % copies];
            p.scales16 = ds16[it % copies];
            CK(launch_lut(v, units, smem, st, p, withsum));
          }
          CK(cudaStreamEndCapture(st, &g));
          CK(cudaGraphInstantiate(&ge, g, 0));
          CK(cudaGraphLaunch(ge, st));
          CK(cudaStreamSynchronize(st));
          cudaEvent_t e0, e1;
          CK(cudaEventCreate(&e0));
          CK(cudaEventCreate(&e1));
          std::vector<double> samples;
          for (int rep = 0; rep < 7; ++rep) {
            CK(cudaEventRecord(e0, st));
            CK(cudaGraphLaunch(ge, st));
            CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            samples.push_back(ms * 1000.0 / iters);
          }
          times[withsum] = median(samples);
          CK(cudaGraphExecDestroy(ge));
          CK(cudaGraphDestroy(g));
          CK(cudaEventDestroy(e0));
          CK(cudaEventDestroy(e1));
        }
        CK(cudaStreamDestroy(st));
        Result r{fmt_name(FMT), v.name, n, k, R, S, units, times[0], times[1],
                 times[1] > 0.0 ? (double)wbytes / (times[1] * 1e-6) / 1e9 : 0.0, pass && same_bits, worst, v.loads_only != 0, m};
        printf("%-6s %6lldx%-6lld %-28s m %d R %5d S %3d units %4d  main %7.2f us  total %7.2f us  %6.0f GB/s  %s%s "
               "(worst %.3f)\n",
               r.fmt.c_str(), (long long)n, (long long)k, v.name, m, R, S, units, r.us_main, r.us_total, r.gbs,
               v.loads_only ? "(loads only: no check)" : pass ? "pass" : "FAIL",
               m > 1 ? (same_bits ? ", rows = m 1 bits" : ", ROWS DIFFER FROM m 1") : "", worst);
        fflush(stdout);
        out.push_back(r);
        }
      }
    }
    for (int i = 0; i < copies; ++i) {
      CK(cudaFree(dc[i]));
      CK(cudaFree(ds[i]));
      if (ds16[i]) CK(cudaFree(ds16[i]));
    }
    CK(cudaFree(dx));
    CK(cudaFree(dgamma));
    CK(cudaFree(dy));
    CK(cudaFree(dpart));
    CK(cudaFree(dpart64));
    }
  }
}

std::vector<std::pair<int64_t, int64_t>> parse_shapes(const char *s) {
  std::vector<std::pair<int64_t, int64_t>> v;
  std::string str(s);
  size_t pos = 0;
  while (pos < str.size()) {
    size_t e = str.find(',', pos);
    if (e == std::string::npos) e = str.size();
    long long a, b;
    if (sscanf(str.substr(pos, e - pos).c_str(), "%lldx%lld", &a, &b) == 2) v.push_back({a, b});
    pos = e + 1;
  }
  return v;
}

/* Host emulation of lut_kernel's dataflow (the repack, the table placement
 * and the kernel's address arithmetic of both ADDR modes, the lanes' slots
 * and blocks, the reduce-scatter, the k-split sum and the norm), checked
 * against the reference: the layout is proven here, where there is no GPU
 * (--emu). */

template <int FMT, int ADDR, int SPL>
bool emulate(int64_t n, int64_t k, int R, int S, int batch, bool norm = false, bool acc64 = false) {
  const Weight w = make_weight(FMT, n, k, 5 + FMT);
  std::vector<uint32_t> hc;
  std::vector<float> hs;
  repack(w, SPL, hc, hs);
  const Acts a = make_acts(1, k, false, kNormal, 3);
  constexpr int NBLK = chunk_blocks(FMT, SPL), GR = group_rows(SPL);
  const int chunks = (int)(k / chunk_k(FMT, SPL)), cpu = chunks / S, groups = (int)(n / GR);
  const uint32_t tb = table_align<ADDR>(); /* a base as the kernel aligns it */
  std::vector<unsigned char> smem(tb + table_bytes(SPL) + 65536);
  std::vector<double> part((size_t)S * n); /* f32 values unless acc64 */
  std::vector<float> y((size_t)n);
  for (int64_t rr = 0; rr < n / R; ++rr)
    for (int ks = 0; ks < S; ++ks) {
      std::vector<double> acc((size_t)R, 0.0); /* f32 values unless acc64 */
      for (int c = ks * cpu; c < (ks + 1) * cpu; ++c) {
        const int k0 = c * chunk_k(FMT, SPL);
        for (int task = 0; task < 128 * SPL; ++task) {
          const int l = task & 31, j = (task >> 5) % SPL, q = task / (32 * SPL), slot = SPL * l + j;
          for (int h = 0; h < 4; ++h)
            for (int lo = 0; lo < 16; ++lo) {
              const int hi = 4 * q + h, e = hi * 16 + lo;
              float A, B;
              /* the norm's tables take x * gamma at the same positions */
              auto xg = [&](int64_t kk) { return norm ? a.x[kk] * a.gamma[kk] : a.x[kk]; };
              if (FMT == kNF4) {
                A = nf4_value(lo) * xg(k0 + 2 * slot);
                B = nf4_value(hi) * xg(k0 + 2 * slot + 1);
              } else {
                const int64_t kx = k0 + 4 * slot;
                A = (float)((lo & 3) - 1) * xg(kx) + (float)((lo >> 2) - 1) * xg(kx + 1);
                B = (float)((hi & 3) - 1) * xg(kx + 2) + (float)((hi >> 2) - 1) * xg(kx + 3);
              }
              const float t = A + B;
              memcpy(&smem[tb + table_off<ADDR>(j, e, l)], &t, 4);
            }
        }
        for (int b0 = 0; b0 < R; b0 += batch) {
          std::vector<float> v((size_t)32 * batch); /* [lane][row] */
          for (int lane = 0; lane < 32; ++lane) {
            const uint32_t lane_base = tb + (uint32_t)lane * 4u;
            const int blk = lane / (32 / NBLK);
            for (int r = 0; r < batch; ++r) {
              const int64_t row = rr * R + b0 + r, g = row / GR, rin = row % GR;
              /* the row's SPL bytes: word rin * SPL / 4, bytes from (rin * SPL) % 4 */
              const uint32_t word = hc[(size_t)(((c * groups + g) * 32 + lane) * 4 + rin * SPL / 4)];
              const float sc = hs[(size_t)(((c * groups + g) * NBLK + blk) * GR + rin)];
              float t[4] = {0, 0, 0, 0};
              for (int J = 0; J < SPL; ++J) {
                const int B = (int)(rin * SPL) % 4 + J;
                memcpy(&t[J], &smem[entry_addr<ADDR>(word, B, lane_base) + table_off<ADDR>(J, 0, 0)], 4);
              }
              v[(size_t)lane * batch + r] = (SPL == 4 ? (t[0] + t[1]) + (t[2] + t[3]) : t[0] + t[1]) * sc;
            }
          }
          /* the reduce-scatter's order: pairs of lanes, halves of the rows */
          for (int r = 0; r < batch; ++r) {
            std::vector<float> lanes(32);
            for (int lane = 0; lane < 32; ++lane) lanes[lane] = v[(size_t)lane * batch + r];
            /* steps h = batch/2 .. 1 add lane pairs differing in bit h; then
             * (batch 16) bit 16: the same sums as a tree over the lanes */
            for (int h = batch / 2; h >= 1; h >>= 1)
              for (int lane = 0; lane < 32; ++lane)
                if (!(lane & h)) {
                  const float s2 = lanes[lane] + lanes[lane | h];
                  lanes[lane] = s2;
                  lanes[lane | h] = s2;
                }
            if (batch == 16) lanes[0] = lanes[0] + lanes[16];
            double &A = acc[(size_t)(b0 + r)];
            A = acc64 ? A + (double)lanes[0] : (double)((float)A + lanes[0]);
          }
        }
      }
      for (int r = 0; r < R; ++r) part[(size_t)ks * n + rr * R + r] = acc[(size_t)r];
    }
  float inv = 1.0f;
  if (norm) { /* the CTAs' sums of x^2 over their chunks, added in order */
    float t = 0.0f;
    for (int ks = 0; ks < S; ++ks) {
      float ss = 0.0f;
      for (int64_t kk = (int64_t)ks * cpu * chunk_k(FMT, SPL); kk < (int64_t)(ks + 1) * cpu * chunk_k(FMT, SPL); ++kk)
        ss = fmaf(a.x[kk], a.x[kk], ss);
      t = ks ? t + ss : ss;
    }
    inv = 1.0f / sqrtf(t / (float)k + 1e-5f);
  }
  for (int64_t i = 0; i < n; ++i) {
    double s = part[(size_t)i];
    for (int j = 1; j < S; ++j) s = acc64 ? s + part[(size_t)j * n + i] : (double)((float)s + (float)part[(size_t)j * n + i]);
    y[(size_t)i] = acc64 ? (float)(norm ? s * (double)inv : s) : (norm ? (float)s * inv : (float)s);
  }
  const std::vector<int64_t> rows = sample_rows(n, 256);
  const Ref ref = reference(w, a, 1, norm, 1e-5f, rows);
  const Check ch = check(ref, y.data(), 1, n, false);
  printf("emu %s ADDR %d SPL %d %lldx%lld R %d S %d batch %d%s%s: %s (worst %.4f of the bound)\n", fmt_name(FMT), ADDR,
         SPL, (long long)n, (long long)k, R, S, batch, norm ? " norm" : "", acc64 ? " acc64" : "", ch.pass ? "pass" : "FAIL",
         ch.worst);
  return ch.pass;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::pair<int64_t, int64_t>> shapes = {{28672, 8192}, {8192, 28672}, {14336, 4096}, {4096, 4096}};
  std::string fmts = "nf4,q2g128,q2g64", json, only;
  int only_s = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--shapes") && i + 1 < argc) shapes = parse_shapes(argv[++i]);
    else if (!strcmp(argv[i], "--fmts") && i + 1 < argc) fmts = argv[++i];
    else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--S") && i + 1 < argc) only_s = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--deadline") && i + 1 < argc) g_deadline_s = atof(argv[++i]);
    else if (!strcmp(argv[i], "--no-time")) g_no_time = true;
    else if (!strcmp(argv[i], "--emu")) {
      bool ok = emulate<kNF4, 0, 4>(512, 1024, 256, 2, 32) && emulate<kNF4, 1, 4>(512, 1024, 512, 4, 16) &&
                emulate<kQ2G128, 1, 4>(512, 2048, 256, 2, 16) && emulate<kQ2G64, 0, 4>(256, 2048, 256, 4, 32) &&
                emulate<kQ2G64, 1, 4>(256, 1024, 128, 1, 16) && emulate<kNF4, 0, 2>(512, 1024, 256, 2, 32) &&
                emulate<kNF4, 1, 2>(256, 512, 128, 1, 16) && emulate<kQ2G128, 0, 2>(512, 2048, 256, 4, 16) &&
                emulate<kQ2G64, 1, 2>(256, 1024, 256, 2, 32) && emulate<kNF4, 1, 4>(512, 1024, 256, 4, 16, true) &&
                emulate<kQ2G128, 1, 4>(512, 2048, 256, 2, 16, true) && emulate<kQ2G64, 0, 2>(256, 1024, 256, 2, 32, true) &&
                emulate<kNF4, 1, 4>(512, 1024, 256, 4, 16, false, true) &&
                emulate<kQ2G128, 1, 4>(512, 2048, 256, 2, 16, true, true);
      return ok ? 0 : 1;
    }
    else {
      fprintf(stderr, "usage: lut [--shapes NxK,...] [--fmts nf4,q2g64,q2g128] [--json FILE] [--only VARIANT] [--S KSPLIT] [--deadline SECONDS] [--no-time]\n");
      return 2;
    }
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs, %zu KB shared per block (opt-in)\n", prop.name, prop.multiProcessorCount,
         prop.sharedMemPerBlockOptin / 1024);
  std::vector<Result> res;
  /* shape by shape, every format, so that a deadline cuts the later shapes */
  for (const auto &shape : shapes) {
    if (fmts.find("nf4") != std::string::npos) run_format<kNF4>(shape, prop.multiProcessorCount, only, only_s, res);
    if (fmts.find("q2g128") != std::string::npos) run_format<kQ2G128>(shape, prop.multiProcessorCount, only, only_s, res);
    if (fmts.find("q2g64") != std::string::npos) run_format<kQ2G64>(shape, prop.multiProcessorCount, only, only_s, res);
  }
  /* best per format and shape */
  printf("\nbest (total = main + partial sums, 20 launches in a graph, weights rotated over 512 MB):\n");
  for (size_t i = 0; i < res.size(); ++i) {
    bool best = true;
    for (size_t j = 0; j < res.size(); ++j)
      if (res[j].fmt == res[i].fmt && res[j].n == res[i].n && res[j].k == res[i].k && res[j].pass &&
          !res[j].loads_only && res[j].m == res[i].m && res[j].us_total < res[i].us_total)
        best = false;
    if (best && res[i].pass && !res[i].loads_only)
      printf("  %-6s %6lldx%-6lld m %d %7.2f us (main %7.2f)  %6.0f GB/s  %s R %d S %d\n", res[i].fmt.c_str(),
             (long long)res[i].n, (long long)res[i].k, res[i].m, res[i].us_total, res[i].us_main, res[i].gbs,
             res[i].variant.c_str(), res[i].R, res[i].S);
  }
  if (!json.empty()) {
    FILE *f = fopen(json.c_str(), "w");
    if (f) {
      fprintf(f, "{\"device\": \"%s\", \"results\": [\n", prop.name);
      for (size_t i = 0; i < res.size(); ++i)
        fprintf(f,
                "  {\"fmt\": \"%s\", \"n\": %lld, \"k\": %lld, \"m\": %d, \"variant\": \"%s\", \"R\": %d, \"S\": %d, "
                "\"units\": %d, \"us_main\": %.3f, \"us_total\": %.3f, \"gbs\": %.1f, \"pass\": %s, "
                "\"worst\": %.4f, \"loads_only\": %s}%s\n",
                res[i].fmt.c_str(), (long long)res[i].n, (long long)res[i].k, res[i].m, res[i].variant.c_str(), res[i].R,
                res[i].S, res[i].units, res[i].us_main, res[i].us_total, res[i].gbs, res[i].pass ? "true" : "false",
                res[i].worst, res[i].loads_only ? "true" : "false", i + 1 < res.size() ? "," : "");
      fprintf(f, "]}\n");
      fclose(f);
    }
  }
  return 0;
}
