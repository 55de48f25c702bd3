/* Weight decode into tensor-core A fragments (pairs of halves), host and
 * device (the host emulation runs the same functions).
 *
 * NF4: a code byte is an (even k, odd k) pair; a 256-entry table of fp16
 * pairs (NF4 values in fp16: allowed by the contract) gives the A register
 * in one shared-memory load. The table is replicated per lane (entry v of
 * lane l at byte 128 v + 4 l), so a warp's 32 lookups hit 32 banks: 32 KB,
 * SHF + LOP3 + LDS per code byte.
 *
 * NF4 two-term (LUT 2): each table value as fp16 hi + fp16 lo (lo = the
 * fp16 rounding of value - hi: 22 significant bits, relative error <= 1.1e-7
 * over the 16 values against 3.25e-4 for hi alone). One 8-byte entry per
 * code byte holds both pairs (hi pair, lo pair); one LDS.64 per byte. A
 * 64-bit load is served per half-warp, so 16 copies suffice: entry v of
 * lane l at byte 128 v + 8 (l % 16), 32 KB as the one-term table, the same
 * SHF + LOP3 address. The kernel issues two mma per step with the same B
 * words, row-split (nf4_frag2): weight rows g (hi and lo) and g + 8.
 *
 * Q2_0: (code - 1) is exact in fp16 and bf16. OR-ing a 2-bit code c into the
 * mantissa of a power of two (1024 in fp16, 128 in bf16) at bit pair p gives
 * 2^E + c 4^p exactly; one packed FMA (x 4^-p, -(2^E 4^-p + 1)) yields c - 1
 * for two codes. Per 16 codes: 8 LOP3 + 8 HFMA2 + 1 (fp16) or 2 (bf16) SHF. */
#ifndef LAB_DECODE_CUH
#define LAB_DECODE_CUH

#include "layout.h"
#include "ptx.cuh"

namespace lab {

constexpr int kLutWords = 256 * 32;

/* The 16 NormalFloat values (DESIGN.md section 4). */
LAB_HD float nf4_value(int c) {
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

/* Table entry of code byte v: fp16 (low nibble's value, high nibble's). */
LAB_HD uint32_t nf4_lut_entry(int v) {
  return f32_to_half_bits(nf4_value(v & 15)) | (f32_to_half_bits(nf4_value(v >> 4)) << 16);
}

/* Byte J of w looked up in this lane's copy (lane4 = 4 * lane). */
template <int J>
LAB_HD uint32_t nf4_pair(const uint32_t *lut, uint32_t w, uint32_t lane4) {
  const uint32_t off = (J == 0 ? (w << 7) : (w >> (8 * J - 7))) & 0x7f80u;
  return *reinterpret_cast<const uint32_t *>(reinterpret_cast<const char *>(lut) + (off | lane4));
}

/* The same lookup in a table with 256-byte rows (entry v of lane l at byte
 * 256 v + 4 l, 64 KB, half of each row unused): one PRMT builds the address
 * (byte J of w above lane4's byte), so PRMT + LDS per code byte. */
LAB_HD uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t sel) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, sel);
#else
  const uint64_t v = (uint64_t)x | ((uint64_t)y << 32);
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= (uint32_t)((v >> (8 * ((sel >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
#endif
}
template <int J>
LAB_HD uint32_t nf4_pair256(const uint32_t *lut, uint32_t w, uint32_t lane4) {
  const uint32_t off = byte_perm(w, lane4, 0x5504u | (J << 4));
  return *reinterpret_cast<const uint32_t *>(reinterpret_cast<const char *>(lut) + off);
}

/* Two-term table: the 8-byte entry of code byte v (hi pair, lo pair). */
LAB_HD uint2 nf4_lut2_entry(int v) {
  const float a = nf4_value(v & 15), b = nf4_value(v >> 4);
  const uint32_t ha = f32_to_half_bits(a), hb = f32_to_half_bits(b);
  const uint32_t la = f32_to_half_bits(a - half_bits_f32(ha)), lb = f32_to_half_bits(b - half_bits_f32(hb));
  return make_uint2(ha | (hb << 16), la | (lb << 16));
}
constexpr int kLut2Entries = 256 * 16; /* uint2 entries, 32 KB */

/* Byte J of w looked up in the two-term table (lane8 = 8 * (lane % 16)). */
template <int J>
LAB_HD uint2 nf4_pair2(const uint2 *lut, uint32_t w, uint32_t lane8) {
  const uint32_t off = (J == 0 ? (w << 7) : (w >> (8 * J - 7))) & 0x7f80u;
  return *reinterpret_cast<const uint2 *>(reinterpret_cast<const char *>(lut) + (off | lane8));
}

/* Two-term fragments of step S, row-split: one mma takes weight row g's
 * hi values as A rows 0-7 and its lo values as A rows 8-15 (a0, a1 = the
 * entry of byte J: hi pair, lo pair; a2, a3 = byte J + 1), so that each
 * LDS.64 lands in the fragment's register pair as it is (no moves); the
 * second mma does row g + 8 (aB). Weight row g's sum is then D row g + D
 * row g + 8 of the first mma. */
template <int S>
LAB_HD void nf4_frag2(const uint2 *lut, uint32_t lane8, const uint4 &u, uint32_t (&aA)[4], uint32_t (&aB)[4]) {
  constexpr int J = 2 * (S & 1);
  const uint32_t wg = S < 2 ? u.x : u.y, wh = S < 2 ? u.z : u.w;
  const uint2 g0 = nf4_pair2<J>(lut, wg, lane8), g1 = nf4_pair2<J + 1>(lut, wg, lane8);
  const uint2 h0 = nf4_pair2<J>(lut, wh, lane8), h1 = nf4_pair2<J + 1>(lut, wh, lane8);
  aA[0] = g0.x, aA[1] = g0.y, aA[2] = g1.x, aA[3] = g1.y;
  aB[0] = h0.x, aB[1] = h0.y, aB[2] = h1.x, aB[3] = h1.y;
}

/* A fragment of step S from the lane's NF4 word of one block (x,y row g;
 * z,w row g+8): bytes 2S, 2S+1 of each row's 8 bytes. */
template <int S, int LUT256 = 0>
LAB_HD void nf4_frag(const uint32_t *lut, uint32_t lane4, const uint4 &u, uint32_t (&a)[4]) {
  constexpr int J = 2 * (S & 1);
  const uint32_t wg = S < 2 ? u.x : u.y, wh = S < 2 ? u.z : u.w;
  if (LUT256) {
    a[0] = nf4_pair256<J>(lut, wg, lane4);
    a[1] = nf4_pair256<J>(lut, wh, lane4);
    a[2] = nf4_pair256<J + 1>(lut, wg, lane4);
    a[3] = nf4_pair256<J + 1>(lut, wh, lane4);
  } else {
    a[0] = nf4_pair<J>(lut, wg, lane4);
    a[1] = nf4_pair<J>(lut, wh, lane4);
    a[2] = nf4_pair<J + 1>(lut, wg, lane4);
    a[3] = nf4_pair<J + 1>(lut, wh, lane4);
  }
}

/* Pair I (0..7) of a Q2_0 word as fp16x2 (code - 1). Magic 1024: the 10
 * mantissa bits take bit pairs 0..4; pairs 5..7 after a shift by 10. */
template <int I>
LAB_HD uint32_t q2_pair_f16(uint32_t w) {
  constexpr int P = I < 5 ? I : I - 5;
  constexpr uint32_t kMask = 0x00030003u << (2 * P);
  constexpr uint32_t kMul[5] = {0x3c003c00u, 0x34003400u, 0x2c002c00u, 0x24002400u, 0x1c001c00u};
  constexpr uint32_t kAdd[5] = {0xe401e401u, 0xdc04dc04u, 0xd410d410u, 0xcc40cc40u, 0xc500c500u};
  const uint32_t v = I < 5 ? w : w >> 10;
  return hfma2_f16((v & kMask) | 0x64006400u, kMul[P], kAdd[P]);
}

/* The same as bf16x2. Magic 128: 7 mantissa bits take pairs 0..2; pairs
 * 3..5 after a shift by 6, pairs 6..7 after a shift by 12. */
template <int I>
LAB_HD uint32_t q2_pair_bf16(uint32_t w) {
  constexpr int P = I % 3;
  constexpr uint32_t kMask = 0x00030003u << (2 * P);
  constexpr uint32_t kMul[3] = {0x3f803f80u, 0x3e803e80u, 0x3d803d80u};
  constexpr uint32_t kAdd[3] = {0xc301c301u, 0xc204c204u, 0xc110c110u};
  const uint32_t v = w >> (6 * (I / 3));
  return hfma2_bf16((v & kMask) | 0x43004300u, kMul[P], kAdd[P]);
}

/* A fragment of step S of one Q2_0 block from the words of rows g, g+8. */
template <bool BF16, int S>
LAB_HD void q2_frag(uint32_t wg, uint32_t wh, uint32_t (&a)[4]) {
  if (BF16) {
    a[0] = q2_pair_bf16<2 * S>(wg);
    a[1] = q2_pair_bf16<2 * S>(wh);
    a[2] = q2_pair_bf16<2 * S + 1>(wg);
    a[3] = q2_pair_bf16<2 * S + 1>(wh);
  } else {
    a[0] = q2_pair_f16<2 * S>(wg);
    a[1] = q2_pair_f16<2 * S>(wh);
    a[2] = q2_pair_f16<2 * S + 1>(wg);
    a[3] = q2_pair_f16<2 * S + 1>(wh);
  }
}

/* Scale of 64-block (or g128 group) e of a chunk, for one row's scale words. */
template <int FMT>
LAB_HD float chunk_scale(const uint4 &s, int e) {
  if (FMT == kNF4) return bits_f32(e == 0 ? s.x : e == 1 ? s.y : e == 2 ? s.z : s.w);
  const uint32_t w = (e >> 1) == 0 ? s.x : (e >> 1) == 1 ? s.y : (e >> 1) == 2 ? s.z : s.w;
  return half_bits_f32(w >> (16 * (e & 1)));
}

}  // namespace lab

#endif
