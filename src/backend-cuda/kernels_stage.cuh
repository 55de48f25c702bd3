/* Staging of the activations as the fp16 B operand of the tensor cores.
 *
 * Exactness: x (f32 or bf16; with RMSNorm x * gamma, the row's 1/rms being
 * applied to the finished dot products instead) is scaled per activation row
 * and 64-k block by a power of two 2^-e that puts the block's largest
 * magnitude in [2^14, 2^15), then split into fp16 terms: one term is exact
 * for bf16 inputs (8 significant bits) and two terms carry 22 bits for f32
 * (error <= 2^-22 relative per element, far inside 1e-3 R). Each term is a
 * column of the mma's B, and the block's dot product is scaled back by 2^e
 * together with the weight scale. Elements below 2^-38 of their block's
 * largest magnitude fall under fp16's subnormals and are lost; that is an
 * absolute error of at most 2^-39 * max|x| per element.
 *
 * Per round the CTA stages the k range that its warps consume in that round:
 *   bbuf [rb][col][t]: 32 bytes = the 8 words of lane t for the block's 4
 *        mma steps; column stride 144 bytes (16 bytes of padding put the 8
 *        lanes of each 16-byte shared-memory phase on distinct banks).
 *   pbuf [rb][16]: 2^e per column; unused columns keep the 0 the kernel
 *        wrote at its start (their B is zero, so 0 * 0 stays 0).
 * A unit of work is (slot, rb, t): 16 consecutive elements; the 4 units of a
 * block sit on 4 consecutive lanes and agree on e by two shuffles. */
#ifndef QGC_KERNELS_STAGE_CUH
#define QGC_KERNELS_STAGE_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "kernels_util.cuh"

namespace qgc {

constexpr int kColStride = 144;

struct StageSrc {
  const void *x;     /* [m_active, k] of this launch */
  const void *gamma; /* NULL: no norm */
  int64_t k;
  int64_t nblk64;    /* k / 64 */
  int rb_per_round;  /* 64-blocks per round */
  int m_active;
  int ncols;         /* m_active * SPLITS */
  bool x_bf16, x_vec, g_bf16, g_vec;
};

/* 16 elements of a row of dtype bf16 or f32 starting at element e0. */
QGC_HD void load16(const void *base, int64_t e0, bool bf16, bool vec, float (&v)[16]) {
  if (bf16) {
    const uint16_t *p = static_cast<const uint16_t *>(base) + e0;
    if (vec) {
      const uint4 a = ld_x_v4(p), b = ld_x_v4(p + 8);
      const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
QGC_UNROLL
      for (int i = 0; i < 8; ++i) {
        v[2 * i] = bf16_lo(w[i]);
        v[2 * i + 1] = bf16_hi(w[i]);
      }
    } else {
QGC_UNROLL
      for (int i = 0; i < 16; ++i) v[i] = bits_f32(ld_x_u16(p + i) << 16);
    }
  } else {
    const float *p = static_cast<const float *>(base) + e0;
    if (vec) {
QGC_UNROLL
      for (int i = 0; i < 4; ++i) {
        const uint4 a = ld_x_v4(p + 4 * i);
        v[4 * i] = bits_f32(a.x);
        v[4 * i + 1] = bits_f32(a.y);
        v[4 * i + 2] = bits_f32(a.z);
        v[4 * i + 3] = bits_f32(a.w);
      }
    } else {
QGC_UNROLL
      for (int i = 0; i < 16; ++i) v[i] = ld_x_f32(p + i);
    }
  }
}

QGC_HD uint32_t h2_bits(__half2 h) {
  uint32_t w;
  memcpy(&w, &h, sizeof w);
  return w;
}

/* A unit's 16 values: x (times gamma with RMSNorm); returns the sum of the
 * squares of x in element order (0 without RMSNorm). */
QGC_HD float stage_unit_load(const StageSrc &s, int slot, int64_t e0, float (&v)[16]) {
  load16(s.x, (int64_t)slot * s.k + e0, s.x_bf16, s.x_vec, v);
  if (s.gamma == nullptr) return 0.0f;
  float g[16], q = 0.0f;
  load16(s.gamma, e0, s.g_bf16, s.g_vec, g);
QGC_UNROLL
  for (int j = 0; j < 16; ++j) {
    q = fmaf(v[j], v[j], q);
    v[j] *= g[j];
  }
  return q;
}

QGC_HD float unit_absmax(const float (&v)[16]) {
  float amax = 0.0f;
QGC_UNROLL
  for (int j = 0; j < 16; ++j) amax = fmaxf(amax, fabsf(v[j]));
  return amax;
}

/* Scales a unit by the block's 2^-e (amax: the block's largest magnitude),
 * splits it into fp16 terms and stores them as B words (and 2^e). */
template <int SPLITS>
QGC_HD void stage_unit_store(const StageSrc &s, const float (&v)[16], float amax, int rb, int slot, int t,
                             char *bbuf, float *pbuf) {
  /* e such that amax * 2^-e is in [2^14, 2^15); both 2^-e and 2^e stay
   * normal f32 (zero or subnormal amax: e = -126; inf/NaN: e = 114). */
  int e = (int)((f32_bits(amax) >> 23) & 0xffu) - 127 - 14;
  e = e < -126 ? -126 : e;
  const float sf = bits_f32((uint32_t)(127 - e) << 23);
  const float p = bits_f32((uint32_t)(127 + e) << 23);
  uint32_t w1[8], w2[8];
QGC_UNROLL
  for (int j = 0; j < 8; ++j) {
    const float a = v[2 * j] * sf, b = v[2 * j + 1] * sf;
    const __half2 h = __floats2half2_rn(a, b);
    w1[j] = h2_bits(h);
    if (SPLITS == 2) {
      const float2 f = __half22float2(h);
      w2[j] = h2_bits(__floats2half2_rn(a - f.x, b - f.y));
    }
  }
  char *dst = bbuf + ((size_t)rb * s.ncols + (size_t)slot * SPLITS) * kColStride + t * 32;
  sts_v4(dst, make_uint4(w1[0], w1[1], w1[2], w1[3]));
  sts_v4(dst + 16, make_uint4(w1[4], w1[5], w1[6], w1[7]));
  if (SPLITS == 2) {
    sts_v4(dst + kColStride, make_uint4(w2[0], w2[1], w2[2], w2[3]));
    sts_v4(dst + kColStride + 16, make_uint4(w2[4], w2[5], w2[6], w2[7]));
  }
  if (t == 0) {
QGC_UNROLL
    for (int sp = 0; sp < SPLITS; ++sp) pbuf[rb * 16 + slot * SPLITS + sp] = p;
  }
}

/* Stages round `round` into bbuf/pbuf. NUI: units per thread (compile-time
 * bound); ss[i] accumulates x^2 of unit threadIdx.x + i * blockDim.x over the
 * rounds (RMSNorm), in a fixed order that does not depend on m. */
template <int SPLITS, int NUI>
__device__ __forceinline__ void stage_round(const StageSrc &s, int64_t round, char *bbuf, float *pbuf,
                                            float (&ss)[NUI]) {
  const int units = s.m_active * s.rb_per_round * 4;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned group_mask = 0xfu << (lane & 28u);
QGC_UNROLL
  for (int i = 0; i < NUI; ++i) {
    const int u = threadIdx.x + i * blockDim.x;
    if (u >= units) break; /* units is a multiple of 4: a group leaves together */
    const int t = u & 3, rb = (u >> 2) % s.rb_per_round, slot = (u >> 2) / s.rb_per_round;
    const int64_t blk = round * s.rb_per_round + rb;
    if (blk >= s.nblk64) continue; /* the round runs past k: the whole group skips */
    const int64_t e0 = blk * 64 + 16 * t;
    float v[16];
    ss[i] += stage_unit_load(s, slot, e0, v);
    float amax = unit_absmax(v);
    amax = fmaxf(amax, __shfl_xor_sync(group_mask, amax, 1));
    amax = fmaxf(amax, __shfl_xor_sync(group_mask, amax, 2));
    stage_unit_store<SPLITS>(s, v, amax, rb, slot, t, bbuf, pbuf);
  }
}

}  // namespace qgc

#endif
