/* Device helpers shared by the CUDA kernels: cache-hinted loads, the
 * tensor-core instruction, packed half/bf16 arithmetic. Plain inline PTX so
 * that the instruction chosen is the one the comment promises, whatever the
 * compiler version.
 *
 * The per-lane helpers are also compiled for the host (QGC_HD, plain C++
 * fallbacks under !__CUDA_ARCH__) so that a CPU emulation of the kernel's
 * index arithmetic can check layouts and fragments where no GPU is at hand
 * (bench/NOTES.md). Only the mma itself is device-only. */
#ifndef QGC_KERNELS_UTIL_CUH
#define QGC_KERNELS_UTIL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#define QGC_HD __host__ __device__ __forceinline__
/* #pragma unroll for the device pass only (the host compiler warns). */
#ifdef __CUDA_ARCH__
#define QGC_UNROLL _Pragma("unroll")
#else
#define QGC_UNROLL
#endif

namespace qgc {

/* Weights are read exactly once per call and never again before the next
 * call has pushed them out of L2: keep them out of L1, and let each miss
 * fetch a whole 256-byte L2 line (DRAM likes long bursts). volatile keeps
 * the prefetches where the source puts them: ahead of the barriers and mma
 * work of the round before (the scoreboard waits only at first use). */
QGC_HD uint4 ld_stream_v4(const void *p) {
  uint4 r;
#ifdef __CUDA_ARCH__
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
#else
  memcpy(&r, p, sizeof r);
#endif
  return r;
}
/* A hint: fetch the 128-byte line holding p into L2, without a register or
 * a scoreboard entry (non-blocking), so that DRAM sees requests several
 * rounds ahead of the register loads. Callers pass valid addresses only. */
QGC_HD void prefetch_l2(const void *p) {
#ifdef __CUDA_ARCH__
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}
QGC_HD uint2 ld_stream_v2(const void *p) {
  uint2 r;
#ifdef __CUDA_ARCH__
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
#else
  memcpy(&r, p, sizeof r);
#endif
  return r;
}
QGC_HD uint32_t ld_stream_u32(const void *p) {
  uint32_t r;
#ifdef __CUDA_ARCH__
  asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(r) : "l"(p));
#else
  memcpy(&r, p, sizeof r);
#endif
  return r;
}
QGC_HD uint32_t ld_stream_u16(const void *p) {
  unsigned short r;
#ifdef __CUDA_ARCH__
  asm volatile("ld.global.nc.L1::no_allocate.u16 %0, [%1];" : "=h"(r) : "l"(p));
#else
  memcpy(&r, p, sizeof r);
#endif
  return r;
}

/* Activations are small and read by every warp of the CTA (and by every
 * CTA): the read-only path, cached in L1. */
QGC_HD uint4 ld_x_v4(const void *p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const uint4 *>(p));
#else
  uint4 r;
  memcpy(&r, p, sizeof r);
  return r;
#endif
}
QGC_HD uint32_t ld_x_u16(const void *p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const unsigned short *>(p));
#else
  unsigned short r;
  memcpy(&r, p, sizeof r);
  return r;
#endif
}
QGC_HD float ld_x_f32(const void *p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const float *>(p));
#else
  float r;
  memcpy(&r, p, sizeof r);
  return r;
#endif
}

QGC_HD float bits_f32(uint32_t w) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(w);
#else
  float f;
  memcpy(&f, &w, sizeof f);
  return f;
#endif
}
QGC_HD uint32_t f32_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t w;
  memcpy(&w, &f, sizeof w);
  return w;
#endif
}
QGC_HD float bf16_lo(uint32_t w) { return bits_f32(w << 16); }
QGC_HD float bf16_hi(uint32_t w) { return bits_f32(w & 0xffff0000u); }

/* D = A * B + D on the tensor cores, m16n8k16, f32 accumulation.
 * Fragments (PTX ISA, mma.m16n8k16): lane = 4 * g + t;
 *   a0 = (row g, k 2t..2t+1)   a1 = (row g+8, k 2t..2t+1)
 *   a2 = (row g, k 2t+8..+9)   a3 = (row g+8, k 2t+8..+9)
 *   b0 = (k 2t..2t+1, col g)   b1 = (k 2t+8..+9, col g)
 *   d0,d1 = (row g, col 2t, 2t+1)   d2,d3 = (row g+8, col 2t, 2t+1)
 * Every output element is one dot product over the 16 k slots of its own
 * row of A and column of B: other columns never enter it. */
__device__ __forceinline__ void mma_f16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_bf16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* Halves of a word as floats (low half = lower k), for the host paths. */
QGC_HD float f16_at(uint32_t w, int hi) { return __half2float(__ushort_as_half((unsigned short)(w >> (16 * hi)))); }
QGC_HD float bf16_at(uint32_t w, int hi) { return hi ? bf16_hi(w) : bf16_lo(w); }

/* Packed fused multiply-add on two halves (fp16 or bf16) held in a word.
 * (The host fallback rounds twice; the kernels only use it where the result
 * is exact.) */
QGC_HD uint32_t hfma2_f16(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else
  uint32_t d = 0;
  for (int h = 0; h < 2; h++) {
    const float v = f16_at(a, h) * f16_at(b, h) + f16_at(c, h);
    d |= (uint32_t)__half_as_ushort(__float2half_rn(v)) << (16 * h);
  }
  return d;
#endif
}
QGC_HD uint32_t hfma2_bf16(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else
  uint32_t d = 0;
  for (int h = 0; h < 2; h++) {
    const float v = bf16_at(a, h) * bf16_at(b, h) + bf16_at(c, h);
    d |= (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(v)) << (16 * h);
  }
  return d;
#endif
}

QGC_HD uint4 lds_v4(const void *p) { return *reinterpret_cast<const uint4 *>(p); }
QGC_HD void sts_v4(void *p, uint4 v) { *reinterpret_cast<uint4 *>(p) = v; }

}  // namespace qgc

#endif
