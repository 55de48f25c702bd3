/* Weight decode: packed codes -> tensor-core A fragments (pairs of halves).
 *
 * NF4: a code byte is a (even k, odd k) pair; a 256-entry table of half2
 * pairs (fp16 NF4 values, allowed by the accuracy contract) turns it into
 * the A register in one shared-memory load. The table is replicated per lane
 * (entry v of lane l at byte 128 v + 4 l) so the 32 lookups of a warp always
 * fall in 32 distinct banks: 32 KB, 2 integer ops + 1 LDS per byte.
 *
 * Q2_0: (code - 1) is exact in fp16 and bf16. OR-ing a 2-bit code c into the
 * mantissa of a large power of two gives the exact half 2^E + c 4^p (p = bit
 * pair inside the mantissa); one packed FMA (x 4^-p, - (2^E 4^-p + 1)) then
 * yields c - 1 for two codes at once. The repacked word puts the two codes
 * of a pair 16 bits apart, so no shuffling is needed: per 16 codes
 * 8 LOP3 + 8 HFMA2 + 1 (fp16) or 2 (bf16) shifts. */
#ifndef QGC_KERNELS_DECODE_CUH
#define QGC_KERNELS_DECODE_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "kernels_util.cuh"

namespace qgc {

constexpr int kLutBytes = 256 * 128;

/* The 16 NormalFloat values (DESIGN.md s.4), as f32. */
QGC_HD float nf4_value(int c) {
  switch (c & 15) {
    case 0: return -1.0f;
    case 1: return -0.6961928009986877f;
    case 2: return -0.5250730514526367f;
    case 3: return -0.39491748809814453f;
    case 4: return -0.28444138169288635f;
    case 5: return -0.18477343022823334f;
    case 6: return -0.09105003625154495f;
    case 7: return 0.0f;
    case 8: return 0.07958029955625534f;
    case 9: return 0.16093020141124725f;
    case 10: return 0.24611230194568634f;
    case 11: return 0.33791524171829224f;
    case 12: return 0.44070982933044434f;
    case 13: return 0.5626170039176941f;
    case 14: return 0.7229568362236023f;
    default: return 1.0f;
  }
}

/* Table entry of code byte v: fp16 pair (value of the low nibble, of the
 * high nibble), low half first. */
QGC_HD uint32_t nf4_lut_entry(int v) {
  return (uint32_t)__half_as_ushort(__float2half_rn(nf4_value(v & 15))) |
         ((uint32_t)__half_as_ushort(__float2half_rn(nf4_value(v >> 4))) << 16);
}

/* Fills the per-lane replicated pair table; every thread of the CTA takes
 * part. The caller's next __syncthreads publishes it. */
__device__ __forceinline__ void nf4_lut_init(char *lut) {
  for (int i = threadIdx.x; i < 256 * 8; i += blockDim.x) {
    const int v = i >> 3, quad = i & 7; /* quad: lanes 4 quad .. 4 quad + 3 */
    const uint32_t w = nf4_lut_entry(v);
    sts_v4(lut + v * 128 + quad * 16, make_uint4(w, w, w, w));
  }
}

/* Byte j of w looked up in this lane's copy of the table (lane4 = 4 * lane). */
template <int J>
QGC_HD uint32_t nf4_pair(const char *lut, uint32_t w, uint32_t lane4) {
  const uint32_t off = (J == 0 ? (w << 7) : (w >> (8 * J - 7))) & 0x7f80u;
  return *reinterpret_cast<const uint32_t *>(lut + (off | lane4));
}

/* A fragment of step S (0..3) of one 64-k block: wg, wh are the block's
 * word of rows g and g+8 that holds steps S & ~1 and S | 1. */
template <int S>
QGC_HD void nf4_step_frag(const char *lut, uint32_t lane4, uint32_t wg, uint32_t wh,
                                              uint32_t (&a)[4]) {
  constexpr int J = 2 * (S & 1);
  a[0] = nf4_pair<J>(lut, wg, lane4);
  a[1] = nf4_pair<J>(lut, wh, lane4);
  a[2] = nf4_pair<J + 1>(lut, wg, lane4);
  a[3] = nf4_pair<J + 1>(lut, wh, lane4);
}

/* Pair I (0..7) of a repacked Q2_0 word as fp16x2 (code - 1). Magic 1024:
 * 10 mantissa bits hold bit pairs p = 0..4; pairs 5..7 after a shift by 10
 * (the compiler shares the shifted word between the pairs that use it). */
template <int I>
QGC_HD uint32_t q2_pair_f16(uint32_t w) {
  constexpr int P = I < 5 ? I : I - 5;
  constexpr uint32_t kMask = 0x00030003u << (2 * P);
  /* x 4^-P and -(1024 4^-P + 1), as fp16x2 */
  constexpr uint32_t kMul[5] = {0x3c003c00u, 0x34003400u, 0x2c002c00u, 0x24002400u, 0x1c001c00u};
  constexpr uint32_t kAdd[5] = {0xe401e401u, 0xdc04dc04u, 0xd410d410u, 0xcc40cc40u, 0xc500c500u};
  const uint32_t v = I < 5 ? w : w >> 10;
  return hfma2_f16((v & kMask) | 0x64006400u, kMul[P], kAdd[P]);
}

/* The same as bf16x2. Magic 128: 7 mantissa bits hold bit pairs 0..2;
 * pairs 3..5 after a shift by 6, pairs 6..7 after a shift by 12. */
template <int I>
QGC_HD uint32_t q2_pair_bf16(uint32_t w) {
  constexpr int P = I % 3;
  constexpr uint32_t kMask = 0x00030003u << (2 * P);
  /* x 4^-P and -(128 4^-P + 1), as bf16x2 */
  constexpr uint32_t kMul[3] = {0x3f803f80u, 0x3e803e80u, 0x3d803d80u};
  constexpr uint32_t kAdd[3] = {0xc301c301u, 0xc204c204u, 0xc110c110u};
  const uint32_t v = w >> (6 * (I / 3));
  return hfma2_bf16((v & kMask) | 0x43004300u, kMul[P], kAdd[P]);
}

template <bool BF16, int I>
QGC_HD uint32_t q2_pair(uint32_t w) {
  if (BF16) return q2_pair_bf16<I>(w);
  return q2_pair_f16<I>(w);
}

/* A fragment of step S of one Q2_0 block from the words of rows g and g+8:
 * pair 2S is k +0,+1 and pair 2S+1 is k +2,+3 of the step. */
template <bool BF16, int S>
QGC_HD void q2_step_frag(uint32_t wg, uint32_t wh, uint32_t (&a)[4]) {
  a[0] = q2_pair<BF16, 2 * S>(wg);
  a[1] = q2_pair<BF16, 2 * S>(wh);
  a[2] = q2_pair<BF16, 2 * S + 1>(wg);
  a[3] = q2_pair<BF16, 2 * S + 1>(wh);
}

}  // namespace qgc

#endif
