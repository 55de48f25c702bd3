/* The B operand (activations): the words of one lane for one 64-k part of
 * a scale block, host and device (the CPU emulation test runs these
 * functions as they are; the callers do the shuffles).
 *
 * Lane (g, t) owns column g of an 8-column group and the 16 consecutive
 * elements [kb + 16 t, +16) of each 64-k part of a block: exactly its B
 * words, w[2s + h] = (x[16t + 4s + 2h], x[16t + 4s + 2h + 1]) as a pair of
 * halves (layout.h's k order).
 *
 * direct (Q2_0, bf16 x, no norm): the words are x as stored; with A =
 *   code - 1 in bf16 every product is exact. kDG (Q2_0, bf16 x, RMSNorm
 *   with bf16 gamma): the same words, and gamma's words in the same
 *   layout for A = (code - 1) gamma (kernels_matvec.cuh); the sums of
 *   squares from the words (ssq_words).
 * one or two fp16 terms (NF4, whose table needs fp16 A): v = x (times gamma
 *   with RMSNorm; 1/rms is applied to the finished dot product) is scaled
 *   by 2^-e, e per activation row and 64-block, so that the block's
 *   largest magnitude M lands in [2^14, 2^15), then split into fp16 terms:
 *   one (exact for bf16 x without norm) or two (f32 x or norm; even columns
 *   carry the first term, odd columns the residual). The error per element
 *   is at most 2^-22 |v| + 2^-39 M with two terms (2^-39 M with one), and
 *   elements under 2^-40 M are lost: the one documented exception to the
 *   accuracy contract (DESIGN.md section 5).
 * three bf16 terms (Q2_0 with f32 x or norm): t0 = v cut to bf16, t1 = the
 *   rest cut to bf16, t2 = what remains (at most 8 significant bits): their
 *   sum is v exactly, with bf16's exponent range, so no block scaling and
 *   no range limit (only terms under 2^-126 can round or be flushed by the
 *   tensor cores: < 2^-126 per element). Cutting (not rounding) never
 *   overflows; a non-finite v is t0 alone, so it reaches y as IEEE says.
 *   Columns 3a + j carry term j of activation row a.
 * four int8 digits (kI4: Q2_0, bf16 x, no norm; the integer mma): per
 *   scale block and activation row, E with max |x| < 2^E, and the integer
 *   X = x 2^(28-E) = d0 2^21 + d1 2^14 + d2 2^7 + d3 (d0 = X >> 21 in
 *   [-128, 127], the others X's next 7-bit fields, in [0, 127]). X is
 *   exact when the element is zero or its exponent is at least E - 21
 *   (as bf16 its last bit is then at or above 2^(E-28)). The mma sums
 *   codes (0..2) times digits exactly in
 *   int32; the block's digit sums, subtracted, make the codes c - 1; digit
 *   columns D, D + 1 (D even) meet as c_D 128 + c_D+1, still exact, then
 *   one f32 rounding times 2^(E-14-7D) and the scale.
 *   A block that is not exact (an element more than 21 binades below the
 *   largest, a non-finite one, or max |x| under 2^-96) is flagged: its
 *   digits are zero and the kernel sums it with bf16 mma from x, exactly
 *   as the direct mode (kernels_matvec.cuh). Columns 4a + D carry digit D
 *   of activation row a.
 * Every value depends on the activation row and k only, never on m or on
 * which warp builds it: batched rows stay bit-identical to m = 1. */
#ifndef QGC_KERNELS_STAGE_CUH
#define QGC_KERNELS_STAGE_CUH

#include "kernels_ptx.cuh"

namespace qgc {

/* Experiment (off in the library): with B per CTA and all of k staged,
 * the ring's later stages are issued once every thread has issued its
 * first (1) or last (2) pass's loads of x, not after the staging's
 * barrier, so that the weights flow during the staging with x's loads
 * ahead of them in the memory system. x's vector loads are then volatile,
 * so that the compiler keeps them before the bulk copies. On the H100 (1)
 * was slower than the library at 14 of 20 m = 1 cases (up to 1.09x);
 * with QGC_EXP_EARLY=0 (no stage before the wait) 0.90-0.96x with f32 x
 * or the norm at 4096 x 4096 and up to 1.17x slower elsewhere
 * (bench/NOTES.md v52): the lead for a plan rule by shape and mode.
 * 3: that rule (matvec_plan.h): no stage before the wait and the ring
 * after x's first loads for f32 x where a warp's whole stream fits its
 * ring; the library's order elsewhere (written in v52, not run). */
#ifndef QGC_EXP_S2X
#define QGC_EXP_S2X 0
#endif

/* 16 bytes of activations: one vector load where aligned (the read-only
 * path: every warp and CTA reads x), else halves. */
QGC_HD uint4 ld_x16(const void *p, bool vec) {
#ifdef __CUDA_ARCH__
  if (QGC_EXP_S2X && vec) {
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
  }
  if (vec) return __ldg(reinterpret_cast<const uint4 *>(p));
  const unsigned short *h = reinterpret_cast<const unsigned short *>(p);
  uint32_t w[4];
QGC_UNROLL
  for (int i = 0; i < 4; ++i) w[i] = (uint32_t)__ldg(h + 2 * i) | ((uint32_t)__ldg(h + 2 * i + 1) << 16);
  return make_uint4(w[0], w[1], w[2], w[3]);
#else
  (void)vec;
  uint4 r;
  memcpy(&r, p, 16);
  return r;
#endif
}

/* Q2_0 g64's staging with B per CTA on sm_90 issues every load of x and
 * gamma a thread makes before it converts any of them (stage_load's LF,
 * and kDG's gamma words beside x's), in the kernels of one tile per warp
 * and one column group: there 0.95-0.99x the time of Q2_0 g64 at m = 1
 * with f32 x or the norm on the H100 (bench/NOTES.md v52, v53: 8192 x
 * 28672 too), where the two-tile kernels (28672 x 8192 at m = 1: 4 bytes
 * of new spill) took 1.02x and the batched ones of two and three column
 * groups 1.01-1.06x (v53), and NF4's 1.005-1.04x (v52). The same values,
 * the same bits. Not g128 (two 64-k parts a lane: on sm_90 up to 344
 * bytes of spill) and not sm_121 (g64 up to 1292 bytes): neither
 * measured. B per warp and the direct mode keep the old order. 0: the
 * old order everywhere, for A/B runs. */
#ifndef QGC_EXP_LF
#define QGC_EXP_LF 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1000
#define QGC_LF_ARCH 1
#else
#define QGC_LF_ARCH 0
#endif
/* Experiment (off): g128 loads first a 64-k part at a time (stage_load's
 * LF 2), which holds one part's raw words as g64 does, not two. */
#ifndef QGC_EXP_LF128
#define QGC_EXP_LF128 0
#endif
/* A kernel's staging order (NG column groups, T tiles per warp; kI4's
 * staging takes the defaults): 0 each load converted as it comes, 1
 * every load first, 2 every load of a 64-k part first. */
template <bool NF4, int QB, int NG = 1, int T = 1>
QGC_HD constexpr int stage_lf() {
  return !(QGC_EXP_LF && QGC_LF_ARCH) || NF4 ? 0 : QB == 1 ? (NG == 1 && T == 1 ? 1 : 0) : QGC_EXP_LF128 ? 2 : 0;
}

/* load16 in two steps (stage_load's LF): the raw words (bf16: r[0..1]),
 * then the values. */
QGC_HD void load16_raw(const void *row, int64_t e0, bool bf16, bool vec, uint4 (&r)[4]) {
  const char *p = static_cast<const char *>(row) + e0 * (bf16 ? 2 : 4);
QGC_UNROLL
  for (int i = 0; i < 4; ++i)
    if (i < 2 || !bf16) r[i] = ld_x16(p + 16 * i, vec);
}
QGC_HD void unpack16(const uint4 (&r)[4], bool bf16, float (&v)[16]) {
QGC_UNROLL
  for (int i = 0; i < 4; ++i) {
    const uint32_t w[4] = {r[i].x, r[i].y, r[i].z, r[i].w};
QGC_UNROLL
    for (int j = 0; j < 4; ++j) {
      if (bf16 && i < 2) {
        v[8 * i + 2 * j] = bits_f32(w[j] << 16);
        v[8 * i + 2 * j + 1] = bits_f32(w[j] & 0xffff0000u);
      } else if (!bf16) {
        v[4 * i + j] = bits_f32(w[j]);
      }
    }
  }
}

/* 16 elements (f32 or bf16) at element e0 of a row. */
QGC_HD void load16(const void *row, int64_t e0, bool bf16, bool vec, float (&v)[16]) {
  if (bf16) {
    const char *p = static_cast<const char *>(row) + e0 * 2;
    const uint4 a = ld_x16(p, vec), b = ld_x16(p + 16, vec);
    const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
QGC_UNROLL
    for (int i = 0; i < 8; ++i) {
      v[2 * i] = bits_f32(w[i] << 16);
      v[2 * i + 1] = bits_f32(w[i] & 0xffff0000u);
    }
  } else {
    const char *p = static_cast<const char *>(row) + e0 * 4;
QGC_UNROLL
    for (int i = 0; i < 4; ++i) {
      const uint4 a = ld_x16(p + 16 * i, vec);
      v[4 * i] = bits_f32(a.x);
      v[4 * i + 1] = bits_f32(a.y);
      v[4 * i + 2] = bits_f32(a.z);
      v[4 * i + 3] = bits_f32(a.w);
    }
  }
}

/* direct: the lane's raw bf16 words of the QB parts of a block. */
template <int QB>
QGC_HD void stage_direct(const void *row, int64_t e0, bool vec, uint32_t (&w)[QB][8]) {
QGC_UNROLL
  for (int q = 0; q < QB; ++q) {
    const char *p = static_cast<const char *>(row) + (e0 + 64 * q) * 2;
    const uint4 a = ld_x16(p, vec), b = ld_x16(p + 16, vec);
    w[q][0] = a.x, w[q][1] = a.y, w[q][2] = a.z, w[q][3] = a.w;
    w[q][4] = b.x, w[q][5] = b.y, w[q][6] = b.z, w[q][7] = b.w;
  }
}

/* Where the activations come from. */
struct XSrc {
  const void *gamma; /* [k] or null (no norm) */
  bool x_bf16, x_vec, g_bf16, g_vec;
};

struct NoHook {
  QGC_HD void operator()() const {}
};
/* Step 1 of the terms: the lane's values (times gamma) and their largest
 * magnitude; *ss gets the squares of x added in element order (norm).
 * LF (stage_lf): 1 every load of x and gamma issued before any is
 * converted, 2 those of each 64-k part; the same values (QGC_EXP_LF).
 * Three copies of the same steps in three orders: one shared helper
 * changed the PTX of every kernel (v52). hook: called once the first
 * part's loads are issued (QGC_EXP_S2X). */
template <int QB, int LF = 0, typename H = NoHook>
QGC_HD float stage_load(const void *row, const XSrc &s, int64_t e0, float (&v)[QB][16], float *ss, H hook = H()) {
  float amax = 0.0f;
  if constexpr (LF == 2) {
QGC_UNROLL
    for (int q = 0; q < QB; ++q) {
      uint4 xr[4], gr[4];
      load16_raw(row, e0 + 64 * q, s.x_bf16, s.x_vec, xr);
      if (s.gamma != nullptr) load16_raw(s.gamma, e0 + 64 * q, s.g_bf16, s.g_vec, gr);
      if (q == 0) hook();
      unpack16(xr, s.x_bf16, v[q]);
      if (s.gamma != nullptr) {
        float gm[16];
        unpack16(gr, s.g_bf16, gm);
QGC_UNROLL
        for (int j = 0; j < 16; ++j) {
          *ss = fmaf(v[q][j], v[q][j], *ss);
          v[q][j] *= gm[j];
        }
      }
QGC_UNROLL
      for (int j = 0; j < 16; ++j) amax = fmaxf(amax, fabsf(v[q][j]));
    }
  } else if constexpr (LF == 1) {
    uint4 xr[QB][4], gr[QB][4];
QGC_UNROLL
    for (int q = 0; q < QB; ++q) {
      load16_raw(row, e0 + 64 * q, s.x_bf16, s.x_vec, xr[q]);
      if (s.gamma != nullptr) load16_raw(s.gamma, e0 + 64 * q, s.g_bf16, s.g_vec, gr[q]);
    }
    hook();
QGC_UNROLL
    for (int q = 0; q < QB; ++q) {
      unpack16(xr[q], s.x_bf16, v[q]);
      if (s.gamma != nullptr) {
        float gm[16];
        unpack16(gr[q], s.g_bf16, gm);
QGC_UNROLL
        for (int j = 0; j < 16; ++j) {
          *ss = fmaf(v[q][j], v[q][j], *ss);
          v[q][j] *= gm[j];
        }
      }
QGC_UNROLL
      for (int j = 0; j < 16; ++j) amax = fmaxf(amax, fabsf(v[q][j]));
    }
  } else {
QGC_UNROLL
    for (int q = 0; q < QB; ++q) {
      load16(row, e0 + 64 * q, s.x_bf16, s.x_vec, v[q]);
      float gm[16];
      if (QGC_EXP_S2X && s.gamma != nullptr) load16(s.gamma, e0 + 64 * q, s.g_bf16, s.g_vec, gm);
      if (q == 0) hook();
      if (s.gamma != nullptr) {
        if (!QGC_EXP_S2X) load16(s.gamma, e0 + 64 * q, s.g_bf16, s.g_vec, gm);
QGC_UNROLL
        for (int j = 0; j < 16; ++j) {
          *ss = fmaf(v[q][j], v[q][j], *ss);
          v[q][j] *= gm[j];
        }
      }
QGC_UNROLL
      for (int j = 0; j < 16; ++j) amax = fmaxf(amax, fabsf(v[q][j]));
    }
  }
  return amax;
}

/* The sum of squares of a lane's bf16 words (direct, kDG), in
 * stage_load's order and with its operations: the same bits as the terms'
 * modes add for the same x. */
template <int QB>
QGC_HD float ssq_words(const uint32_t (&w)[QB][8]) {
  float ss = 0.0f;
QGC_UNROLL
  for (int q = 0; q < QB; ++q)
QGC_UNROLL
    for (int i = 0; i < 8; ++i) {
      const float lo = bits_f32(w[q][i] << 16), hi = bits_f32(w[q][i] & 0xffff0000u);
      ss = fmaf(lo, lo, ss);
      ss = fmaf(hi, hi, ss);
    }
  return ss;
}

QGC_HD uint32_t pack_h2(float a, float b) { return f32_to_half_bits(a) | (f32_to_half_bits(b) << 16); }

/* Step 2, fp16 terms (amax = the block's, over the 4 lanes of the column):
 * the words of term `split` (0 or 1; 0 when SPLITS == 1) and the block's
 * factor 2^e. Branch-free in `split`: the two terms' lanes share a warp. */
template <int SPLITS, int QB>
QGC_HD float stage_pack(const float (&v)[QB][16], float amax, int split, uint32_t (&w)[QB][8]) {
  /* e such that amax 2^-e is in [2^14, 2^15); 2^-e and 2^e stay normal
   * (zero or subnormal amax: e = -126; inf/NaN: e = 114). */
  int e = (int)((f32_bits(amax) >> 23) & 0xffu) - 127 - 14;
  e = e < -126 ? -126 : e;
  const float sf = bits_f32((uint32_t)(127 - e) << 23);
  const float drop = split ? 1.0f : 0.0f;
  /* the first term clamped to fp16's finite range: for an infinite v the
   * term itself made 0 x inf = NaN in term 0 and inf - inf = NaN in term
   * 1, where IEEE gives y an infinity (v15's GPU test of non-finite x) */
  const auto hfin = [](uint32_t h) { return fminf(fmaxf(half_bits_f32(h), -65504.0f), 65504.0f); };
QGC_UNROLL
  for (int q = 0; q < QB; ++q) {
QGC_UNROLL
    for (int i = 0; i < 8; ++i) {
      const float a = v[q][2 * i] * sf, b = v[q][2 * i + 1] * sf;
      const uint32_t first = pack_h2(a, b);
      if (SPLITS == 1)
        w[q][i] = first;
      else
        w[q][i] = pack_h2(fmaf(-drop, hfin(first), a), fmaf(-drop, hfin(first >> 16), b));
    }
  }
  return bits_f32((uint32_t)(127 + e) << 23);
}

/* Three bf16 terms: the bits of term `split` (0, 1, 2) of v. */
QGC_HD uint32_t b3_term(float v, int split) {
  const uint32_t vb = f32_bits(v);
  if ((vb & 0x7f800000u) == 0x7f800000u) return split ? 0u : f32_to_bf16_bits(v); /* inf, NaN */
  const float t0 = bits_f32(vb & 0xffff0000u), r1 = v - t0;
  const float t1 = bits_f32(f32_bits(r1) & 0xffff0000u), r2 = r1 - t1;
  return (split == 0 ? vb : f32_bits(split == 1 ? t1 : r2)) >> 16;
}

/* The terms in turn, for a thread that makes every term of its values
 * (B per CTA): the bits of the next term of v, and v left with the rest.
 * Pass j gives b3_term(v0, j) (a non-finite v: itself, then zeros) at a
 * third of the work of three b3_term calls per pass (Q2_0 f32 x and
 * RMSNorm, bench/NOTES.md v9). */
QGC_HD uint32_t b3_next(float &v) {
  const uint32_t vb = f32_bits(v);
  if ((vb & 0x7f800000u) == 0x7f800000u) {
    v = 0.0f;
    return f32_to_bf16_bits(bits_f32(vb));
  }
  v -= bits_f32(vb & 0xffff0000u);
  return vb >> 16;
}
template <int QB>
QGC_HD void stage_next_b3(float (&v)[QB][16], uint32_t (&w)[QB][8]) {
QGC_UNROLL
  for (int q = 0; q < QB; ++q)
QGC_UNROLL
    for (int i = 0; i < 8; ++i) {
      const uint32_t lo = b3_next(v[q][2 * i]);
      w[q][i] = lo | (b3_next(v[q][2 * i + 1]) << 16);
    }
}

/* Whether all the lane's values are finite (the largest magnitude's bits
 * under infinity's): then stage_next_b3_finite may make their terms. */
template <int QB>
QGC_HD bool b3_all_finite(const float (&v)[QB][16]) {
  uint32_t m = 0;
QGC_UNROLL
  for (int q = 0; q < QB; ++q)
QGC_UNROLL
    for (int j = 0; j < 16; ++j) m = max(m, f32_bits(v[q][j]) & 0x7fffffffu);
  return m < 0x7f800000u;
}
/* stage_next_b3's bits for finite values, without its test per element:
 * one PRMT packs a pair's high halves, and v keeps what the cut leaves (5
 * instructions per pair; the test's branches made the three-term staging
 * about 1000 instructions per thread, 2 us of Q2_0's prologue at 28672 x
 * 8192, bench/NOTES.md v15). */
template <int QB>
QGC_HD void stage_next_b3_finite(float (&v)[QB][16], uint32_t (&w)[QB][8]) {
QGC_UNROLL
  for (int q = 0; q < QB; ++q)
QGC_UNROLL
    for (int i = 0; i < 8; ++i) {
      const uint32_t a = f32_bits(v[q][2 * i]), b = f32_bits(v[q][2 * i + 1]);
      w[q][i] = prmt(a, b, 0x7632u);
      v[q][2 * i] -= bits_f32(a & 0xffff0000u);
      v[q][2 * i + 1] -= bits_f32(b & 0xffff0000u);
    }
}

/* The words of bf16 term `split` of the lane's values; branch-free in
 * split (the three terms' lanes share a warp). */
template <int QB>
QGC_HD void stage_pack_b3(const float (&v)[QB][16], int split, uint32_t (&w)[QB][8]) {
QGC_UNROLL
  for (int q = 0; q < QB; ++q)
QGC_UNROLL
    for (int i = 0; i < 8; ++i) w[q][i] = b3_term(v[q][2 * i], split) | (b3_term(v[q][2 * i + 1], split) << 16);
}

/* kI4: digits per activation element, the exponent of a block. */
constexpr int kDigits = 4;
/* E with amax < 2^E (amax >= 0; 0 for a zero block). */
QGC_HD int i4_block_exp(float amax) {
  const int be = (int)(f32_bits(amax) >> 23) & 0xff;
  return amax > 0.0f ? be - 126 : 0;
}
/* Whether the digits of a block of exponent E cannot hold it exactly: the
 * block (too small for 2^(E-28) to be normal), or an element (non-finite,
 * or nonzero below 2^(E-21): as bf16 its last bit is below 2^(E-28)). */
QGC_HD bool i4_block_bad(float amax, int E) { return !(amax <= 3.0e38f) || (amax > 0.0f && E < -95); }
QGC_HD bool i4_elem_inexact(float x, int E) {
  const int be = (int)(f32_bits(x) >> 23) & 0xff;
  return be == 0xff || (x != 0.0f && be < E + 106);
}
/* The factor of digit column D: 2^(E - 7 - 7 D) (normal for unflagged E). */
QGC_HD float i4_digit_factor(int E, int D) { return bits_f32((uint32_t)(120 + E - 7 * D) << 23); }

/* The sum of the four signed bytes of w. */
QGC_HD int sum_s8x4(uint32_t w) {
#ifdef __CUDA_ARCH__
  return __dp4a((int)w, 0x01010101, 0);
#else
  return (int)(int8_t)w + (int)(int8_t)(w >> 8) + (int)(int8_t)(w >> 16) + (int)(int8_t)(w >> 24);
#endif
}

/* The lane's digit words of QB 64-parts: word p byte b holds element j =
 * 2p + 8 (b & 1) + (b >> 1) of the lane's 16, the order of the codes'
 * bit pairs in a Q2_0 word (layout.h), so that (w >> 2p) & 0x03030303 is
 * the matching A register. sum[D] gets the lane's digits D added. zero:
 * all digits 0 (a flagged block). */
template <int QB>
QGC_HD void stage_i4(const float (&v)[QB][16], int E, bool zero, uint32_t (&w)[QB][kDigits][4],
                     int (&sum)[kDigits]) {
  const float sf = bits_f32((uint32_t)(155 - E) << 23); /* 2^(28-E) */
QGC_UNROLL
  for (int D = 0; D < kDigits; ++D) sum[D] = 0;
QGC_UNROLL
  for (int q = 0; q < QB; ++q) {
QGC_UNROLL
    for (int wp = 0; wp < 4; ++wp) {
      uint32_t d[kDigits] = {0u, 0u, 0u, 0u};
QGC_UNROLL
      for (int b = 0; b < 4; ++b) {
        const int j = 2 * wp + 8 * (b & 1) + (b >> 1);
        const int X = zero ? 0 : (int)(v[q][j] * sf);
        d[0] |= ((uint32_t)(X >> 21) & 0xffu) << (8 * b);
        d[1] |= ((uint32_t)(X >> 14) & 0x7fu) << (8 * b);
        d[2] |= ((uint32_t)(X >> 7) & 0x7fu) << (8 * b);
        d[3] |= ((uint32_t)X & 0x7fu) << (8 * b);
      }
QGC_UNROLL
      for (int D = 0; D < kDigits; ++D) {
        w[q][D][wp] = d[D];
        sum[D] += sum_s8x4(d[D]);
      }
    }
  }
}

}  // namespace qgc

#endif
