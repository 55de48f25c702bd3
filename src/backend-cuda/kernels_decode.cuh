/* Weight decode: resident codes (layout.h) -> tensor-core A fragments, host
 * and device (the CPU emulation test runs these functions as they are).
 *
 * NF4: two fp16 terms per table value, hi + lo (hi: the fp16 under the
 * value in magnitude, nf4_hi_bits; lo = the fp16 rounding of value - hi:
 * 22 significant bits, relative error <= 1.1e-7 over the 16 values). One
 * term alone (relative error up to 3.25e-4, code 2) breaks the accuracy
 * contract on correlated inputs: a row of one repeated code
 * against all-positive x has error / R = 3.25e-4 sqrt(k), 0.029 at k =
 * 8192 (bench/NOTES.md v3 round 2). A code byte is an (even k, odd k)
 * pair; its 8-byte table entry holds (hi pair, lo pair), one LDS.64 per
 * byte. 64-bit loads are served per half warp, so 16 copies of the table
 * are conflict-free: entry v of lane l at byte 128 v + 8 (l % 16), 32 KB,
 * addressed with SHF + LOP3. The kernel issues two mma per step with the
 * same B, row-split (nf4_frag2).
 *
 * Q2_0: (code - 1) is exact in bf16, and so is every product with a bf16
 * B term. OR-ing a 2-bit code c into the mantissa of 2^(7-2p) at bit
 * pair p gives 2^(7-2p) + c exactly; one packed add yields c - 1 for two
 * codes. Per 16 codes: 8 LOP3 + 8 packed adds + 2 shifts. */
#ifndef QGC_KERNELS_DECODE_CUH
#define QGC_KERNELS_DECODE_CUH

#include "kernels_ptx.cuh"

namespace qgc {

/* The 16 NormalFloat values (DESIGN.md section 4). */
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

/* The table: entries of 8 bytes, 16 copies. Experiment (off in the
 * library): QGC_EXP_LUT256 spaces the code bytes' entries 256 bytes apart
 * (the 16 copies in the first 128; a 64 KB table), so that one PRMT makes
 * a lookup's address (the byte at bits 8-15, the lane's copy below it)
 * where SHF + LOP3 make it now. */
#ifndef QGC_EXP_LUT256
#define QGC_EXP_LUT256 0
#endif
constexpr int kLutStride = QGC_EXP_LUT256 ? 256 : 128; /* bytes from one code byte's entries to the next's */

/* The hi term of a table value: the nearest fp16 where it is smaller in
 * magnitude, else the next one toward zero, so that for every value but
 * 0 the lo term is nonzero and of the value's sign. Then an infinite activation
 * times hi and times lo gives the infinity IEEE gives (a lo of 0, as the
 * nearest hi made for +-1, gave 0 x inf = NaN; v15's GPU test of
 * non-finite x). hi + lo is as close as with the nearest hi (relative
 * error <= 1.1e-7 over the 16 values either way, test_nf4_table_terms). */
QGC_HD uint32_t nf4_hi_bits(float v) {
  const uint32_t h = f32_to_half_bits(v);
  const float hv = half_bits_f32(h);
  return v != 0.0f && fabsf(hv) >= fabsf(v) ? h - 1u : h; /* fp16 bits step toward zero by one */
}

/* The entry of code byte v: (hi of the low nibble's value, hi of the high
 * nibble's), (lo, lo). */
QGC_HD uint2 nf4_lut_entry(int v) {
  const float a = nf4_value(v & 15), b = nf4_value(v >> 4);
  const uint32_t ha = nf4_hi_bits(a), hb = nf4_hi_bits(b);
  const uint32_t la = f32_to_half_bits(a - half_bits_f32(ha)), lb = f32_to_half_bits(b - half_bits_f32(hb));
  return make_uint2(ha | (hb << 16), la | (lb << 16));
}

/* Byte J of w looked up in this lane's copy (lane8 = 8 (lane % 16)). */
template <int J>
QGC_HD uint2 nf4_pair(const uint2 *lut, uint32_t w, uint32_t lane8) {
#if QGC_EXP_LUT256
  const uint32_t off = prmt(w, lane8, 0x5504u | (J << 4));
#else
  const uint32_t off = ((J == 0 ? (w << 7) : (w >> (8 * J - 7))) & 0x7f80u) | lane8;
#endif
  return *reinterpret_cast<const uint2 *>(reinterpret_cast<const char *>(lut) + off);
}

/* The table in registers, for the lookups that the shared-memory pipe
 * cannot take: NF4's kernel is held by that pipe (75% of its wavefronts
 * busy at 28672 x 8192, 32 of the 43 per tile-block are the table's,
 * bench/NOTES.md v10), while its ALU pipe is a third busy. The 16 values'
 * hi and lo fp16 as four byte planes (hi's low bytes, hi's high bytes, lo's
 * low, lo's high) of four words each: value c at byte c % 4 of word 4 p +
 * c / 4. One PRMT looks up four codes among 8 entries. */
QGC_HD void nf4_planes(uint32_t (&pl)[16]) {
  for (int i = 0; i < 16; ++i) pl[i] = 0;
  for (int c = 0; c < 16; ++c) {
    const uint2 e = nf4_lut_entry(c | c << 4);
    const uint32_t b[4] = {e.x & 0xffu, (e.x >> 8) & 0xffu, e.y & 0xffu, (e.y >> 8) & 0xffu};
    for (int p = 0; p < 4; ++p) pl[4 * p + c / 4] |= b[p] << (8 * (c % 4));
  }
}

/* The four codes of s's low 16 bits (nibble i: code i) in one plane: byte
 * i of the result. s7: the nibbles without bit 3; m: byte i all ones
 * where code i >= 8. */
QGC_HD uint32_t nf4_plane4(const uint32_t *pl, uint32_t s7, uint32_t m) {
  return (prmt(pl[0], pl[1], s7) & ~m) | (prmt(pl[2], pl[3], s7) & m);
}

/* The table entries of two code bytes (s's low 16 bits) from the planes,
 * as nf4_pair gives them: a[0], a[1] the hi and lo pair of the first byte,
 * a[2], a[3] of the second. 20 ALU instructions for 4 codes, against 2
 * LDS.64 (4 wavefronts of the shared-memory pipe). */
QGC_HD void nf4_prmt2(const uint32_t (&pl)[16], uint32_t s, uint32_t (&a)[4]) {
  const uint32_t s7 = s & 0x7777u, m = prmt(0x0000ff00u, 0u, (s >> 3) & 0x1111u);
  const uint32_t hl = nf4_plane4(pl, s7, m), hh = nf4_plane4(pl + 4, s7, m);
  const uint32_t ll = nf4_plane4(pl + 8, s7, m), lh = nf4_plane4(pl + 12, s7, m);
  a[0] = prmt(hl, hh, 0x5140u), a[1] = prmt(ll, lh, 0x5140u);
  a[2] = prmt(hl, hh, 0x7362u), a[3] = prmt(ll, lh, 0x7362u);
}

/* The two A fragments of step S of an NF4 block word u; weight row g + 8
 * from the planes where bit S of PRMT_STEPS is set (nf4_prmt2), else from
 * the shared table. (x, y: row g's 8
 * bytes; z, w: row g + 8's), row-split: aA takes weight row g's hi values
 * as A rows 0-7 and its lo values as A rows 8-15, so that each LDS.64 lands
 * in the fragment's register pair as it is (no moves); aB does weight row
 * g + 8. Weight row g's sum is then D row g + D row g + 8 of the first mma
 * (and row g + 8's the same of the second). */
template <int S, int PRMT_STEPS, int TEX_STEPS = 0>
QGC_HD void nf4_frag2(const uint2 *lut, const uint32_t (&pl)[16], uint32_t lane8, const uint4 &u, uint32_t (&aA)[4],
                      uint32_t (&aB)[4], unsigned long long tex = 0) {
  constexpr int J = 2 * (S & 1);
  const uint32_t wg = S < 2 ? u.x : u.y, wh = S < 2 ? u.z : u.w;
  const uint2 g0 = nf4_pair<J>(lut, wg, lane8), g1 = nf4_pair<J + 1>(lut, wg, lane8);
  aA[0] = g0.x, aA[1] = g0.y, aA[2] = g1.x, aA[3] = g1.y;
  (void)tex;
#ifdef __CUDA_ARCH__
  if constexpr ((TEX_STEPS >> S) & 1) { /* experiment QGC_EXP_NF4_TEX: the texture path's own requests */
    const uint2 h0 = tex1Dfetch<uint2>(tex, (int)((wh >> (8 * J)) & 0xffu));
    const uint2 h1 = tex1Dfetch<uint2>(tex, (int)((wh >> (8 * J + 8)) & 0xffu));
    aB[0] = h0.x, aB[1] = h0.y, aB[2] = h1.x, aB[3] = h1.y;
    return;
  }
#endif
  if constexpr ((PRMT_STEPS >> S) & 1) {
    nf4_prmt2(pl, J ? wh >> 16 : wh, aB);
  } else {
    const uint2 h0 = nf4_pair<J>(lut, wh, lane8), h1 = nf4_pair<J + 1>(lut, wh, lane8);
    aB[0] = h0.x, aB[1] = h0.y, aB[2] = h1.x, aB[3] = h1.y;
  }
}

/* Pair I (0..7) of a Q2_0 word as bf16x2 (code - 1). Bit pair p (0..2)
 * of the 7 mantissa bits ORed into 2^(7-2p) (128, 32, 8: magic - p
 * 0x01000100) gives 2^(7-2p) + c exactly, so one packed add of -(2^(7-2p)
 * + 1) yields c - 1 (a multiply by 4^-p from one magic, as before, kept
 * the multipliers in registers: 2-4% slower at m = 1 on the H200,
 * bench/NOTES.md v13). Pairs 3..5 after a shift by 6, pairs 6..7 after a
 * shift by 12. magic: kQ2Magic, which the kernels pass from their
 * parameters (Params::q2_magic): as a compile-time constant, ptxas splits
 * (v & mask) | magic into two LOP3 with an immediate each (both operands
 * constant), a third of Q2_0's instructions (bench/NOTES.md v9); with
 * magic in a register it is one. */
constexpr uint32_t kQ2Magic = 0x43004300u;
template <int I>
QGC_HD uint32_t q2_pair_bf16(uint32_t w, uint32_t magic) {
  constexpr int P = I % 3;
  constexpr uint32_t kMask = 0x00030003u << (2 * P);
  constexpr uint32_t kAdd[3] = {0xc301c301u, 0xc204c204u, 0xc110c110u}; /* -129, -33, -9 */
  const uint32_t v = w >> (6 * (I / 3));
  return hadd2_bf16((v & kMask) | (magic - P * 0x01000100u), kAdd[P]);
}

/* The A fragment of step S of one Q2_0 block from the words of rows g, g+8
 * (bf16: the kernels pair Q2_0 with bf16 B only). */
template <int S>
QGC_HD void q2_frag(uint32_t wg, uint32_t wh, uint32_t (&a)[4], uint32_t magic = kQ2Magic) {
  a[0] = q2_pair_bf16<2 * S>(wg, magic);
  a[1] = q2_pair_bf16<2 * S>(wh, magic);
  a[2] = q2_pair_bf16<2 * S + 1>(wg, magic);
  a[3] = q2_pair_bf16<2 * S + 1>(wh, magic);
}

}  // namespace qgc

#endif
