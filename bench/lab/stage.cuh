/* The B operand (activations), built per warp and per scale block by the
 * lanes that own each mma column; host and device (the host emulation runs
 * the same functions, doing the two shuffles itself).
 *
 * Lane (g, t) owns column col = 8 G + g of column group G and the 16
 * consecutive elements [kb + 64 q + 16 t, +16) of each 64-k part q of the
 * scale block: exactly its B words, w[q][2s + h] = (x[16t + 4s + 2h],
 * x[16t + 4s + 2h + 1]) as a pair of halves (layout.h's k order).
 *
 * direct (Q2_0, bf16 x): the words are x as stored (exact bf16 products).
 * staged: v = x (times gamma with RMSNorm; 1/rms is applied to the finished
 * dot product) is scaled by 2^-e, e per activation row and scale block, so
 * that the block's largest magnitude lands in [2^14, 2^15), then split into
 * fp16 terms: one (exact for bf16 x) or two (22 bits, f32 x or norm); with
 * two, even columns carry the first term and odd columns the residual.
 * The error per element v is at most 2^-22 |v| + 2^-39 M with two terms
 * (2^-39 M with one), M the block's largest magnitude; elements under
 * 2^-40 M are lost (bench/NOTES.md v3 round 2, question 5).
 * B3 (Q2_0 with f32 x or norm): v split into three bf16 terms, t0 =
 * bf16(v), t1 = bf16(v - t0), t2 = bf16(v - t0 - t1): their sum is v
 * exactly (24 significant bits), with bf16's exponent range, so no block
 * scaling and no lost small elements (only terms under 2^-126, bf16
 * subnormal, can round or be flushed by the tensor cores: an absolute
 * error < 2^-126 per element). Columns
 * a*3 + j carry term j; with the exact bf16 A of Q2_0 every product is
 * exact and only the f32 accumulation rounds.
 * Every value depends on the activation row and k only, never on m or on
 * which warp builds it: batched rows stay bit-identical to m = 1. */
#ifndef LAB_STAGE_CUH
#define LAB_STAGE_CUH

#include "layout.h"
#include "ptx.cuh"

namespace lab {

LAB_HD uint4 ld_x16(const void *p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const uint4 *>(p));
#else
  uint4 r;
  memcpy(&r, p, 16);
  return r;
#endif
}

/* 16 elements (f32 or bf16) at element e0 of a row. */
LAB_HD void load16(const void *row, int64_t e0, bool bf16, float (&v)[16]) {
  if (bf16) {
    const char *p = static_cast<const char *>(row) + e0 * 2;
    const uint4 a = ld_x16(p), b = ld_x16(p + 16);
    const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
LAB_UNROLL
    for (int i = 0; i < 8; ++i) {
      v[2 * i] = bits_f32(w[i] << 16);
      v[2 * i + 1] = bits_f32(w[i] & 0xffff0000u);
    }
  } else {
    const char *p = static_cast<const char *>(row) + e0 * 4;
LAB_UNROLL
    for (int i = 0; i < 4; ++i) {
      const uint4 a = ld_x16(p + 16 * i);
      v[4 * i] = bits_f32(a.x);
      v[4 * i + 1] = bits_f32(a.y);
      v[4 * i + 2] = bits_f32(a.z);
      v[4 * i + 3] = bits_f32(a.w);
    }
  }
}

/* direct mode: the lane's raw bf16 words of part q. */
template <int QB>
LAB_HD void stage_direct(const void *row, int64_t e0, uint32_t (&w)[QB][8]) {
LAB_UNROLL
  for (int q = 0; q < QB; ++q) {
    const char *p = static_cast<const char *>(row) + (e0 + 64 * q) * 2;
    const uint4 a = ld_x16(p), b = ld_x16(p + 16);
    w[q][0] = a.x, w[q][1] = a.y, w[q][2] = a.z, w[q][3] = a.w;
    w[q][4] = b.x, w[q][5] = b.y, w[q][6] = b.z, w[q][7] = b.w;
  }
}

/* staged mode, step 1: the lane's values (times gamma) and their largest
 * magnitude; *ss gets the squares of x added in element order (norm). */
template <int QB>
LAB_HD float stage_load(const void *row, const void *gamma, bool x_bf16, bool g_bf16, int64_t e0,
                        float (&v)[QB][16], float *ss) {
  float amax = 0.0f;
LAB_UNROLL
  for (int q = 0; q < QB; ++q) {
    load16(row, e0 + 64 * q, x_bf16, v[q]);
    if (gamma != nullptr) {
      float gm[16];
      load16(gamma, e0 + 64 * q, g_bf16, gm);
LAB_UNROLL
      for (int j = 0; j < 16; ++j) {
        *ss = fmaf(v[q][j], v[q][j], *ss);
        v[q][j] *= gm[j];
      }
    }
LAB_UNROLL
    for (int j = 0; j < 16; ++j) amax = fmaxf(amax, fabsf(v[q][j]));
  }
  return amax;
}

LAB_HD uint32_t pack_h2(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  uint32_t w;
  memcpy(&w, &h, 4);
  return w;
}
LAB_HD float2 unpack_h2(uint32_t w) {
  __half2 h;
  memcpy(&h, &w, 4);
  return __half22float2(h);
}

/* staged mode, step 2 (amax = the block's, over the 4 lanes of the column):
 * the words of fp16 term `split` (0 or 1; always 0 when SPLITS == 1) and the
 * block's factor 2^e. Branch-free in `split`: the two terms' lanes share a
 * warp. */
template <int SPLITS, int QB>
LAB_HD float stage_pack(const float (&v)[QB][16], float amax, int split, uint32_t (&w)[QB][8]) {
  /* e such that amax 2^-e is in [2^14, 2^15); 2^-e and 2^e stay normal
   * (zero or subnormal amax: e = -126; inf/NaN: e = 114). */
  int e = (int)((f32_bits(amax) >> 23) & 0xffu) - 127 - 14;
  e = e < -126 ? -126 : e;
  const float sf = bits_f32((uint32_t)(127 - e) << 23);
  const float drop = split ? 1.0f : 0.0f;
LAB_UNROLL
  for (int q = 0; q < QB; ++q) {
LAB_UNROLL
    for (int i = 0; i < 8; ++i) {
      const float a = v[q][2 * i] * sf, b = v[q][2 * i + 1] * sf;
      const uint32_t first = pack_h2(a, b);
      if (SPLITS == 1) {
        w[q][i] = first;
      } else {
        const float2 f = unpack_h2(first);
        w[q][i] = pack_h2(fmaf(-drop, f.x, a), fmaf(-drop, f.y, b));
      }
    }
  }
  return bits_f32((uint32_t)(127 + e) << 23);
}

LAB_HD uint32_t pack_bf2(float a, float b) {
  return (uint32_t)f32_to_bf16_rn_bits(a) | ((uint32_t)f32_to_bf16_rn_bits(b) << 16);
}

/* B3: the words of bf16 term `split` (0, 1, 2) of the lane's values;
 * branch-free in split (the three terms' lanes share a warp). */
template <int QB>
LAB_HD void stage_pack_b3(const float (&v)[QB][16], int split, uint32_t (&w)[QB][8]) {
LAB_UNROLL
  for (int q = 0; q < QB; ++q) {
LAB_UNROLL
    for (int j = 0; j < 16; ++j) {
      const float t0 = bf16_bits_f32(f32_to_bf16_rn_bits(v[q][j]));
      const float r1 = v[q][j] - t0;
      const float t1 = bf16_bits_f32(f32_to_bf16_rn_bits(r1));
      const float r2 = r1 - t1;
      const float tj = split == 0 ? t0 : split == 1 ? t1 : r2;
      const uint32_t b = f32_to_bf16_rn_bits(tj);
      if (j & 1)
        w[q][j >> 1] |= b << 16;
      else
        w[q][j >> 1] = b;
    }
  }
}

}  // namespace lab

#endif
