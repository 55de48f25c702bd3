/* The CUDA module's data paths, emulated on the CPU (no GPU needed): the
 * resident layout (repack.c: tile-chunk stream, short last chunks, the
 * packed tail rows), the plan (matvec_plan.h) on an H200-like device and on
 * GB10's limits, and the kernel's dataflow driven in its order: the bulk
 * copies into ring slots (bytes past a copy poisoned), the slot views,
 * the A decode (NF4 two-term table, Q2_0 bf16, Q2_0 codes for the integer
 * mma), the B staging per CTA (in phases) or per warp (and x's int8 digits
 * with their flagged blocks), the tensor-core mma (float and integer)
 * emulated from the PTX fragment layout, the scale accumulation and the slice combine; the tail rows as
 * the tail kernel sums them. Checked against the oracle under the accuracy
 * contract for every format, activation mode, dtype, RMSNorm, tail, m and
 * k-split; batched rows bit-identical to m = 1; resident bytes equal to the
 * packed size. The GPU suite (test_cuda_backend) then checks the real
 * instructions. QGEMV_TEST_QUICK=1 trims the shapes. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

extern "C" {
#include "expect.h"
#include "testutil.h"
}
#include "../src/backend-cuda/matvec_plan.h"

using namespace qgc;

namespace {

bool quick; /* QGEMV_TEST_QUICK=1 (valgrind runs): fewer shapes */
int phased_launches; /* emulated launches that staged B in phases */
int b3_wide_launches; /* emulated kB3 launches of 32 columns (four groups) */
int b3_g3_launches;   /* emulated kB3 launches of 24 columns (three groups) */
int prmt_launches;    /* emulated NF4 launches with lookups in registers (nf4_prmt_steps) */
int ng2t2_launches;   /* emulated NF4 launches of two column groups at two tiles (QGC_EXP_NG2T2) */
/* emulated launches of the norm's bf16 modes, gamma in A (kDG) and x gamma
 * as two bf16 terms (kB2): B per CTA for all of k, in phases, B per warp */
int dg_launches[3];
int b2_launches[3];

/* An H200 (132 SMs, 227 KB per block) and GB10's limits (48 SMs, 99 KB);
 * the H200 with Q2_0's integer mma (QGEMV_CUDA_PLAN x=int). */
const qgc_device_facts kH200 = {132, 232448, 233472, true, {}};
const qgc_device_facts kGB10 = {48, 101376, 102400, true, {}};
const qgc_device_facts kH200Int = {132, 232448, 233472, true, {0, 0, 0, 0, 0, QGC_X_INT, 0, 0}};

/* The resident image of a weight in host memory. */
struct HostLayout {
  qgc_layout L;
  std::vector<uint8_t> mem;
};

void make_layout(const qgemv_weight_desc &d, qg_layout_id id, HostLayout &h) {
  qgc_layout &L = h.L;
  L = qgc_layout();
  qgc_layout_shape(&L, &d, id);
  EXPECT(L.bytes == qgc_packed_row_bytes(d.format, d.k, d.group) * (size_t)d.n,
                "resident %zu bytes, packed %zu", L.bytes, qgc_packed_row_bytes(d.format, d.k, d.group) * (size_t)d.n);
  h.mem.assign(L.bytes + 64, 0xee);
  const size_t tb = (size_t)L.ntiles * (size_t)L.tile_bytes;
  /* two calls, as the upload does in pieces */
  const int64_t half = L.ntiles / 2;
  qgc_repack_tiles(&L, &d, 0, half, h.mem.data());
  qgc_repack_tiles(&L, &d, half, L.ntiles - half, h.mem.data() + (size_t)half * (size_t)L.tile_bytes);
  if (L.bytes > tb) qgc_repack_tail(&L, &d, h.mem.data() + tb);
  for (size_t i = L.bytes; i < h.mem.size(); i++) EXPECT(h.mem[i] == 0xee, "repack wrote past the layout");
  L.dev = h.mem.data();
  L.tiles = h.mem.data();
  L.tail = L.bytes > tb ? h.mem.data() + tb : nullptr;
}

/* A matvec's arguments on h's weight (its id, n and k). */
qg_matvec_args args_on(const HostLayout &h, int64_t m, const void *x, qgemv_dtype xt, void *y, qgemv_dtype yt,
                       const void *gamma = nullptr, qgemv_dtype gt = QGEMV_F32) {
  qg_matvec_args a = {};
  a.layout = &h.L;
  a.layout_id = h.L.id;
  a.n = h.L.n;
  a.k = h.L.k;
  a.m = m;
  a.x = x;
  a.x_dtype = xt;
  a.y = y;
  a.y_dtype = yt;
  a.gamma = gamma;
  a.gamma_dtype = gt;
  a.eps = 1e-5f;
  return a;
}

/* One m16n8k16 mma over a warp: d += A B from the 32 lanes' fragments
 * (kernels_ptx.cuh), products summed in double. */
void mma_emul(bool bf16, const uint32_t (&a)[32][4], const uint32_t (*b0)[32], const uint32_t (*b1)[32],
              float (&d)[32][4]) {
  float A[16][16], B[16][8];
  for (int l = 0; l < 32; l++) {
    const int g = l >> 2, t = l & 3;
    for (int h = 0; h < 2; h++) {
      auto v = [&](uint32_t w) { return bf16 ? bf16_bits_f32(w >> (16 * h)) : half_bits_f32(w >> (16 * h)); };
      A[g][2 * t + h] = v(a[l][0]);
      A[g + 8][2 * t + h] = v(a[l][1]);
      A[g][2 * t + 8 + h] = v(a[l][2]);
      A[g + 8][2 * t + 8 + h] = v(a[l][3]);
      B[2 * t + h][g] = v((*b0)[l]);
      B[2 * t + 8 + h][g] = v((*b1)[l]);
    }
  }
  for (int l = 0; l < 32; l++) {
    const int g = l >> 2, t = l & 3;
    for (int r = 0; r < 4; r++) {
      const int row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
      double sum = 0.0;
      for (int kk = 0; kk < 16; kk++) sum += (double)A[row][kk] * (double)B[kk][col];
      d[l][r] = (float)((double)d[l][r] + sum);
    }
  }
}

/* Step s of q2_frag (the template's step as a run-time value). */
void q2_frag_at(int s, uint32_t wg, uint32_t wh, uint32_t (&a)[4]) {
  switch (s) {
    case 0: q2_frag<0>(wg, wh, a); break;
    case 1: q2_frag<1>(wg, wh, a); break;
    case 2: q2_frag<2>(wg, wh, a); break;
    default: q2_frag<3>(wg, wh, a); break;
  }
}

/* One m16n8k32 integer mma (kI4): d += A B, A unsigned bytes, B signed,
 * from the lanes' fragments (kernels_ptx.cuh mma_u8s8), exact. */
void imma_emul(const uint32_t (&a)[32][4], const uint32_t (*b0)[32], const uint32_t (*b1)[32], int (&d)[32][4]) {
  int A[16][32], B[32][8];
  for (int l = 0; l < 32; l++) {
    const int g = l >> 2, t = l & 3;
    for (int i = 0; i < 4; i++) {
      A[g][4 * t + i] = (a[l][0] >> (8 * i)) & 0xff;
      A[g + 8][4 * t + i] = (a[l][1] >> (8 * i)) & 0xff;
      A[g][16 + 4 * t + i] = (a[l][2] >> (8 * i)) & 0xff;
      A[g + 8][16 + 4 * t + i] = (a[l][3] >> (8 * i)) & 0xff;
      B[4 * t + i][g] = (int8_t)(((*b0)[l] >> (8 * i)) & 0xff);
      B[16 + 4 * t + i][g] = (int8_t)(((*b1)[l] >> (8 * i)) & 0xff);
    }
  }
  for (int l = 0; l < 32; l++) {
    const int g = l >> 2, t = l & 3;
    for (int r = 0; r < 4; r++) {
      const int row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
      for (int kk = 0; kk < 32; kk++) d[l][r] += A[row][kk] * B[kk][col];
    }
  }
}

/* B of one lane, column group and 64-part: 8 words; 2^e of the lane's
 * output columns. */
struct LaneB {
  uint32_t w[4][4][8]; /* [G][q][word] */
  float p0[4], p1[4];
};

/* Everything the kernel's B staging makes for one (scale block of k,
 * column): words per t and part, 2^e, the block sum of squares, as
 * stage_range (and stage_b) compute it. */
template <int L, int XM>
void stage_block(const Params &p, int64_t eb, int col, uint32_t (&w)[4][4][8], float &pc, float &qsum) {
  using F = Fmt<L>;
  constexpr int QB = F::QB, SPL = xmode_splits(XM);
  const XSrc src = {p.gamma, p.x_bf16 != 0, p.x_vec != 0, p.g_bf16 != 0, p.g_vec != 0};
  float v[4][QB][16], amax[4], qb[4];
  for (int t = 0; t < 4; t++) {
    const int64_t e0 = eb * F::BK + 16 * t;
    uint32_t tw[QB][8];
    qb[t] = 0.0f;
    amax[t] = 0.0f;
    if (xmode_raw(XM)) {
      stage_direct<QB>(static_cast<const char *>(p.x) + (int64_t)col * p.k * 2, e0, src.x_vec, tw);
      for (int q = 0; q < QB; q++) memcpy(w[t][q], tw[q], 32);
      if (XM == kDG) qb[t] = ssq_words<QB>(tw);
      continue;
    }
    amax[t] = stage_load<QB>(static_cast<const char *>(p.x) + (int64_t)(col / SPL) * p.k * (p.x_bf16 ? 2 : 4), src,
                             e0, v[t], &qb[t]);
  }
  pc = 1.0f;
  qsum = (qb[0] + qb[1]) + (qb[2] + qb[3]);
  if (xmode_raw(XM)) return;
  const float am = fmaxf(fmaxf(amax[0], amax[1]), fmaxf(amax[2], amax[3]));
  for (int t = 0; t < 4; t++) {
    uint32_t tw[QB][8];
    if (xmode_cut(XM))
      stage_pack_b3<QB>(v[t], col % SPL, tw);
    else
      pc = stage_pack<SPL, QB>(v[t], am, col % SPL, tw);
    for (int q = 0; q < QB; q++) memcpy(w[t][q], tw[q], 32);
  }
}

/* kI4's staged buffer for all of k, as stage_range_i4 makes it: digit
 * words [block][col][t][q][4], negated digit sums and factors [block][col],
 * flags [block][activation]. */
struct I4Staged {
  std::vector<uint32_t> words;
  std::vector<int> nsum;
  std::vector<float> fac;
  std::vector<uint8_t> flag;
};
template <int L>
void stage_i4_all(const Params &p, I4Staged &st) {
  using F = Fmt<L>;
  constexpr int QB = F::QB;
  const int64_t neb_k = p.k / F::BK;
  const int nact = p.ncols / kDigits;
  st.words.assign((size_t)neb_k * p.ncols * 4 * QB * 4, 0u);
  st.nsum.assign((size_t)neb_k * p.ncols, 0);
  st.fac.assign((size_t)neb_k * p.ncols, 0.0f);
  st.flag.assign((size_t)neb_k * nact, 0);
  const XSrc src = {nullptr, true, p.x_vec != 0, false, false};
  for (int64_t eb = 0; eb < neb_k; eb++)
    for (int a = 0; a < nact; a++) {
      float v[4][QB][16], amax = 0.0f, qb = 0.0f;
      for (int t = 0; t < 4; t++)
        amax = fmaxf(amax, stage_load<QB>(static_cast<const char *>(p.x) + (int64_t)a * p.k * 2, src,
                                          eb * F::BK + 16 * t, v[t], &qb));
      const int E = i4_block_exp(amax);
      bool bad = i4_block_bad(amax, E);
      for (int t = 0; t < 4; t++)
        for (int q = 0; q < QB; q++)
          for (int j = 0; j < 16; j++) bad = bad || i4_elem_inexact(v[t][q][j], E);
      int tot[kDigits] = {0, 0, 0, 0};
      for (int t = 0; t < 4; t++) {
        uint32_t w[QB][kDigits][4];
        int sum[kDigits];
        stage_i4<QB>(v[t], E, bad, w, sum);
        for (int D = 0; D < kDigits; D++) {
          tot[D] += sum[D];
          for (int q = 0; q < QB; q++)
            memcpy(&st.words[(((((size_t)eb * p.ncols + a * kDigits + D) * 4 + t) * QB) + q) * 4], w[q][D], 16);
        }
      }
      for (int D = 0; D < kDigits; D++) {
        st.nsum[eb * p.ncols + a * kDigits + D] = -tot[D];
        st.fac[eb * p.ncols + a * kDigits + D] = bad ? 0.0f : i4_digit_factor(E, D);
      }
      st.flag[eb * nact + a] = bad;
    }
}

/* One scale block eb of a chunk (slot) of every tile of a warp, as
 * chunk_i4 and i4_fallback compute it: acc [tt][G][lane][4]. */
template <int L>
void i4_block(const Params &p, const I4Staged &st, const char *slot, int ci, int nb64, int eb, int T, int NG,
              float *acc) {
  using F = Fmt<L>;
  constexpr int QB = F::QB;
  const int64_t geb = (int64_t)ci * F::NEB + eb;
  const int nact = p.ncols / kDigits;
  auto words = [&](int l, int tt, int blk, uint32_t &wg, uint32_t &wh) {
    if (ci + 1 == p.nch && nb64 < F::B64)
      View<L, true>{slot, l, l >> 2, nb64}.q2_words(tt, blk >> 1, blk & 1, wg, wh);
    else
      View<L, false>{slot, l, l >> 2, F::B64}.q2_words(tt, blk >> 1, blk & 1, wg, wh);
  };
  auto scale = [&](int l, int tt, int h) {
    if (ci + 1 == p.nch && nb64 < F::B64) return View<L, true>{slot, l, l >> 2, nb64}.scale(tt, h, eb);
    return View<L, false>{slot, l, l >> 2, F::B64}.scale(tt, h, eb);
  };
  for (int tt = 0; tt < T; tt++) {
    static int c[4][32][4];
    for (int G = 0; G < NG; G++)
      for (int l = 0; l < 32; l++) {
        const int c0 = 8 * G + 2 * (l & 3);
        const int n0 = c0 < p.ncols ? st.nsum[geb * p.ncols + c0] : 0;
        const int n1 = c0 + 1 < p.ncols ? st.nsum[geb * p.ncols + c0 + 1] : 0;
        c[G][l][0] = c[G][l][2] = n0;
        c[G][l][1] = c[G][l][3] = n1;
      }
    for (int q = 0; q < QB; q++) {
      const int blk = eb * QB + q;
      static uint32_t rg[32][4], rh[32][4];
      for (int l = 0; l < 32; l++) {
        uint32_t wg, wh;
        words(l, tt, blk, wg, wh);
        for (int i = 0; i < 4; i++) rg[l][i] = (wg >> (2 * i)) & 0x03030303u, rh[l][i] = (wh >> (2 * i)) & 0x03030303u;
      }
      for (int s = 0; s < 2; s++) {
        static uint32_t a[32][4], b0[4][32], b1[4][32];
        for (int l = 0; l < 32; l++) {
          const int g = l >> 2, t = l & 3;
          a[l][0] = rg[l][2 * s], a[l][1] = rh[l][2 * s], a[l][2] = rg[l][2 * s + 1], a[l][3] = rh[l][2 * s + 1];
          for (int G = 0; G < NG; G++) {
            const int col = 8 * G + g;
            const uint32_t *w = &st.words[(((((size_t)geb * p.ncols + col) * 4 + t) * QB) + q) * 4];
            b0[G][l] = col < p.ncols ? w[2 * s] : 0u;
            b1[G][l] = col < p.ncols ? w[2 * s + 1] : 0u;
          }
        }
        for (int G = 0; G < NG; G++) imma_emul(a, &b0[G], &b1[G], c[G]);
      }
    }
    for (int l = 0; l < 32; l++) {
      const float sg = scale(l, tt, 0), sh = scale(l, tt, 1);
      for (int G = 0; G < NG; G++) {
        const int c0 = 8 * G + 2 * (l & 3);
        const float pf = c0 < p.ncols ? st.fac[geb * p.ncols + c0 + 1] : 0.0f;
        float *ac = acc + ((size_t)(tt * NG + G) * 32 + l) * 4;
        ac[0] = fmaf((float)(c[G][l][0] * 128 + c[G][l][1]), sg * pf, ac[0]);
        ac[2] = fmaf((float)(c[G][l][2] * 128 + c[G][l][3]), sh * pf, ac[2]);
      }
    }
    /* flagged blocks: bf16 (code - 1) times x, row 2G + a' in column 4a' */
    for (int G = 0; G < NG; G++) {
      bool fl[2];
      for (int ap = 0; ap < 2; ap++) fl[ap] = 2 * G + ap < nact && st.flag[geb * nact + 2 * G + ap];
      if (!fl[0] && !fl[1]) continue;
      static float cf[32][4];
      memset(cf, 0, sizeof cf);
      for (int q = 0; q < QB; q++) {
        static uint32_t xw[32][8];
        for (int l = 0; l < 32; l++) {
          const int g = l >> 2, t = l & 3, ap = g >> 2;
          uint32_t w1[1][8] = {{0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u}};
          if ((g & 3) == 0 && fl[ap])
            stage_direct<1>(static_cast<const char *>(p.x) + (int64_t)(2 * G + ap) * p.k * 2,
                            geb * F::BK + 64 * q + 16 * t, p.x_vec != 0, w1);
          memcpy(xw[l], w1[0], 32);
        }
        for (int s = 0; s < 4; s++) {
          static uint32_t a[32][4], b0[32], b1[32];
          for (int l = 0; l < 32; l++) {
            uint32_t wg, wh;
            words(l, tt, eb * QB + q, wg, wh);
            q2_frag_at(s, wg, wh, a[l]);
            b0[l] = xw[l][2 * s], b1[l] = xw[l][2 * s + 1];
          }
          mma_emul(true, a, &b0, &b1, cf);
        }
      }
      for (int l = 0; l < 32; l++) {
        const int t = l & 3;
        if ((t & 1) || !fl[t >> 1]) continue;
        float *ac = acc + ((size_t)(tt * NG + G) * 32 + l) * 4;
        ac[0] = fmaf(cf[l][0], scale(l, tt, 0), ac[0]);
        ac[2] = fmaf(cf[l][2], scale(l, tt, 1), ac[2]);
      }
    }
  }
}

/* One launch of matvec_kernel<L, XM, NG, T, BS> emulated. */
template <int L, int XM>
void emulate_launch(const qgc_plan &pl, const std::vector<uint2> &lut) {
  using F = Fmt<L>;
  constexpr int QB = F::QB, NEB = F::NEB, SPL = xmode_splits(XM), CH = F::CH;
  const Params &p = pl.p;
  const int NG = pl.kc.ng, T = pl.kc.t, BS = pl.kc.bs, KS = p.KS, W = (int)pl.kc.block / 32;
  const bool bf = xmode_bf16(XM), phased = BS && p.phases > 1;
  const int R = phased ? p.phases : 1, P = phase_chunks(p.nch, KS, p.phases);
  phased_launches += phased;
  /* the values the host made for the kernel's prologue */
  ck_assert_int_eq(p.P, P);
  ck_assert_int_eq(p.nbe, b_scale_blocks(p.k, F::BK, NEB, p.nch, KS, p.phases));
  for (int s = 0; s <= KS; s++)
    EXPECT(slice_start(p, s) == (int)((int64_t)s * p.nch / KS), "slice %d starts at chunk %d", s, slice_start(p, s));
  /* the staging's and the epilogue's divisions by multiply, over every
   * dividend the kernel can take */
  const int cps = XM == kI4 ? 1 : p.ncols * p.nbe * 4 > (int)pl.kc.block ? SPL : 1;
  ck_assert_int_eq(p.st_cps, cps);
  ck_assert_int_eq(p.st_groups, XM == kI4 ? p.ncols / kDigits : p.ncols / cps);
  for (int cu = 0; cu < p.st_groups * p.nbe; cu++)
    EXPECT(div_by((uint32_t)cu, p.st_magic) == cu / p.st_groups, "staging unit %d: div_by wrong", cu);
  const int ru = p.G * T * 16;
  for (int o = 0; o < ru * p.m; o++)
    EXPECT(div_by((uint32_t)o, p.ru_magic) == o / ru, "epilogue output %d: div_by wrong", o);
  for (int b = 0; b < (int)pl.kc.grid; b++)
    EXPECT(cta_units(p, b) == (b < p.units ? (p.units - b + (int)pl.kc.grid - 1) / (int)pl.kc.grid : 0),
           "CTA %d: %d units", b, cta_units(p, b));
  b3_wide_launches += XM == kB3 && NG == 4;
  b3_g3_launches += XM == kB3 && NG == 3;
  if (XM == kDG) dg_launches[!BS ? 2 : phased ? 1 : 0]++;
  if (XM == kB2) b2_launches[!BS ? 2 : phased ? 1 : 0]++;
  const int64_t neb_k = p.k / F::BK;
  ck_assert_int_le(p.ncols, 8 * NG);
  ck_assert_int_eq(p.ncols, p.m * SPL);
  /* NF4's lookups in registers, as the kernel takes them */
  const bool prmt = nf4_prmt_steps(NG, BS) != 0;
  ck_assert(nf4_prmt_steps(NG, BS) == 0 || nf4_prmt_steps(NG, BS) == 0x5);
  prmt_launches += F::kNF4 && prmt;
  ng2t2_launches += F::kNF4 && NG == 2 && T == 2;
  ck_assert_int_eq(W % KS, 0);
  ck_assert_int_eq(W / KS, p.G);
  /* Blocks of k per column as staged (the same bits every CTA makes). */
  std::vector<uint32_t> bwords((size_t)neb_k * p.ncols * 4 * QB * 8);
  std::vector<float> bp((size_t)neb_k * p.ncols), bq((size_t)neb_k * p.ncols);
  I4Staged i4;
  if (XM == kI4) {
    EXPECT(BS && p.x_bf16 && p.gamma == nullptr, "digits: B per CTA, bf16 x, no norm");
    stage_i4_all<L>(p, i4);
  }
  for (int64_t eb = 0; eb < neb_k && XM != kI4; eb++)
    for (int col = 0; col < p.ncols; col++) {
      uint32_t w[4][4][8];
      stage_block<L, XM>(p, eb, col, w, bp[eb * p.ncols + col], bq[eb * p.ncols + col]);
      for (int t = 0; t < 4; t++)
        for (int q = 0; q < QB; q++) memcpy(&bwords[((((size_t)eb * p.ncols + col) * 4 + t) * QB + q) * 8], w[t][q], 32);
    }
  std::vector<char> slot((size_t)T * CH);
  std::vector<float> part((size_t)W * T * NG * 32 * 4), ssw((size_t)W * NG * 8);
  for (unsigned cta = 0; cta < pl.kc.grid; cta++)
    for (int u = (int)cta; u < p.units; u += (int)pl.kc.grid) {
      std::fill(part.begin(), part.end(), 0.0f);
      std::fill(ssw.begin(), ssw.end(), 0.0f);
      for (int wi = 0; wi < W; wi++) {
        const int gi = wi / KS, sl = wi % KS, rg = u * p.G + gi;
        if (rg >= p.T_groups) continue;
        const int c0 = (int)((int64_t)sl * p.nch / KS), c1 = (int)((int64_t)(sl + 1) * p.nch / KS);
        float *acc = &part[(size_t)wi * T * NG * 128];
        for (int ph = 0; ph < R; ph++) {
          const int i0 = phased ? ph * P : 0, i1 = phased ? std::min(c1 - c0, i0 + P) : c1 - c0;
          for (int i = i0; i < i1; i++) {
            const int ci = c0 + i, nb64 = ci + 1 == p.nch ? p.last_b64 : F::B64;
            const int bytes = ci + 1 < p.nch ? CH : p.last_bytes;
            std::fill(slot.begin(), slot.end(), (char)0xff); /* NaN scales, odd codes */
            for (int tt = 0; tt < T; tt++) {
              const int64_t tile = std::min(rg * T + tt, p.tiles - 1);
              memcpy(slot.data() + tt * CH, p.w + tile * p.tile_bytes + (int64_t)ci * CH, (size_t)bytes);
            }
            for (int eb = 0; eb * QB < nb64; eb++) {
              const int64_t geb = (int64_t)ci * NEB + eb; /* block of k */
              if (BS && phased) /* the phased buffer holds the same bits at (s P + j) NEB + e */
                EXPECT((sl * P + i - i0) * NEB + eb < b_scale_blocks(p.k, F::BK, NEB, p.nch, KS, p.phases),
                       "phased B block past the buffer");
              if (pl.kc.xm == kI4) {
                i4_block<L>(p, i4, slot.data(), ci, nb64, eb, T, NG, acc);
                continue;
              }
              static LaneB lb[32];
              for (int l = 0; l < 32; l++) {
                const int g = l >> 2, t = l & 3;
                for (int G = 0; G < NG; G++) {
                  const int col = 8 * G + g, c0c = 8 * G + 2 * t;
                  for (int q = 0; q < QB; q++)
                    for (int j = 0; j < 8; j++)
                      lb[l].w[G][q][j] =
                          col < p.ncols ? bwords[((((size_t)geb * p.ncols + col) * 4 + t) * QB + q) * 8 + j] : 0u;
                  lb[l].p0[G] = bf ? 1.0f : c0c < p.ncols ? bp[geb * p.ncols + c0c] : 0.0f;
                  lb[l].p1[G] = bf ? 1.0f : c0c + 1 < p.ncols ? bp[geb * p.ncols + c0c + 1] : 0.0f;
                }
                if (!BS && p.gamma != nullptr && t == 0)
                  for (int G = 0; G < NG; G++)
                    if (8 * G + g < p.ncols) ssw[(size_t)wi * NG * 8 + G * 8 + g] += bq[geb * p.ncols + 8 * G + g];
              }
              for (int tt = 0; tt < T; tt++) {
                static float c[4][32][4], c2[4][32][4];
                memset(c, 0, sizeof c);
                memset(c2, 0, sizeof c2);
                for (int q = 0; q < QB; q++) {
                  const int blk = eb * QB + q;
                  for (int s = 0; s < 4; s++) {
                    static uint32_t a[32][4], a2[32][4], b0[4][32], b1[4][32];
                    for (int l = 0; l < 32; l++) {
                      const int g = l >> 2;
                      const uint32_t lane8 = 8u * (l & 15);
                      uint4 uw;
                      uint32_t wg = 0, wh = 0;
                      if (ci + 1 == p.nch && nb64 < F::B64) {
                        const View<L, true> v{slot.data(), l, g, nb64};
                        if (F::kNF4) uw = v.word(tt, blk); else v.q2_words(tt, blk >> 1, blk & 1, wg, wh);
                      } else {
                        const View<L, false> v{slot.data(), l, g, F::B64};
                        if (F::kNF4) uw = v.word(tt, blk); else v.q2_words(tt, blk >> 1, blk & 1, wg, wh);
                      }
                      if (F::kNF4) {
                        switch (s) {
                          case 0: prmt ? nf4_frag2<0, 0x5>(lut.data(), p.nf4_pl, lane8, uw, a[l], a2[l]) : nf4_frag2<0, 0>(lut.data(), p.nf4_pl, lane8, uw, a[l], a2[l]); break;
                          case 1: prmt ? nf4_frag2<1, 0x5>(lut.data(), p.nf4_pl, lane8, uw, a[l], a2[l]) : nf4_frag2<1, 0>(lut.data(), p.nf4_pl, lane8, uw, a[l], a2[l]); break;
                          case 2: prmt ? nf4_frag2<2, 0x5>(lut.data(), p.nf4_pl, lane8, uw, a[l], a2[l]) : nf4_frag2<2, 0>(lut.data(), p.nf4_pl, lane8, uw, a[l], a2[l]); break;
                          default: prmt ? nf4_frag2<3, 0x5>(lut.data(), p.nf4_pl, lane8, uw, a[l], a2[l]) : nf4_frag2<3, 0>(lut.data(), p.nf4_pl, lane8, uw, a[l], a2[l]); break;
                        }
                      } else {
                        q2_frag_at(s, wg, wh, a[l]);
                        if (XM == kDG) { /* A = (code - 1) gamma, as block_mma makes it */
                          uint32_t gw[1][8];
                          stage_direct<1>(p.gamma, geb * F::BK + 64 * q + 16 * (l & 3), p.g_vec != 0, gw);
                          a[l][0] = hmul2_bf16(a[l][0], gw[0][2 * s]);
                          a[l][1] = hmul2_bf16(a[l][1], gw[0][2 * s]);
                          a[l][2] = hmul2_bf16(a[l][2], gw[0][2 * s + 1]);
                          a[l][3] = hmul2_bf16(a[l][3], gw[0][2 * s + 1]);
                        }
                      }
                      for (int G = 0; G < NG; G++) {
                        b0[G][l] = lb[l].w[G][q][2 * s];
                        b1[G][l] = lb[l].w[G][q][2 * s + 1];
                      }
                    }
                    for (int G = 0; G < NG; G++) {
                      mma_emul(bf, a, &b0[G], &b1[G], c[G]);
                      if (F::kNF4) mma_emul(false, a2, &b0[G], &b1[G], c2[G]);
                    }
                  }
                }
                for (int l = 0; l < 32; l++) {
                  const int g = l >> 2;
                  float sg, sh;
                  if (ci + 1 == p.nch && nb64 < F::B64) {
                    const View<L, true> v{slot.data(), l, g, nb64};
                    v.scales(tt, eb, sg, sh); /* the kernels' read of both rows' scales */
                  } else {
                    const View<L, false> v{slot.data(), l, g, F::B64};
                    v.scales(tt, eb, sg, sh);
                  }
                  for (int G = 0; G < NG; G++) {
                    float cc[4] = {c[G][l][0], c[G][l][1], c[G][l][2], c[G][l][3]};
                    if (F::kNF4) {
                      cc[0] = c[G][l][0] + c[G][l][2], cc[1] = c[G][l][1] + c[G][l][3];
                      cc[2] = c2[G][l][0] + c2[G][l][2], cc[3] = c2[G][l][1] + c2[G][l][3];
                    }
                    float *ac = acc + ((size_t)(tt * NG + G) * 32 + l) * 4;
                    ac[0] = fmaf(cc[0], sg * lb[l].p0[G], ac[0]);
                    ac[1] = fmaf(cc[1], sg * lb[l].p1[G], ac[1]);
                    ac[2] = fmaf(cc[2], sh * lb[l].p0[G], ac[2]);
                    ac[3] = fmaf(cc[3], sh * lb[l].p1[G], ac[3]);
                  }
                }
              }
            }
          }
        }
      }
      /* combine and store, in the kernel's order */
      const int ru = p.G * T * 16;
      for (int o = 0; o < ru * p.m; o++) {
        const int rl = o % ru, a = o / ru, ogi = rl / (T * 16), tt = (rl / 16) % T, r = rl % 16;
        const int tile = (u * p.G + ogi) * T + tt;
        if (u * p.G + ogi >= p.T_groups || tile >= p.tiles) continue;
        float tot = 0.0f;
        for (int spl = 0; spl < SPL; spl++) {
          const int col = a * SPL + spl, cg = col >> 3, j = col & 7;
          const int ln = (r & 7) * 4 + (j >> 1), ri = (r >> 3) * 2 + (j & 1);
          float v = 0.0f;
          for (int s = 0; s < KS; s++) {
            const float e = part[((((size_t)(ogi * KS + s) * T + tt) * NG + cg) * 32 + ln) * 4 + ri];
            v = s == 0 ? e : v + e;
          }
          tot = spl == 0 ? v : tot + v;
        }
        if (p.gamma != nullptr) {
          float q = 0.0f;
          for (int s = 0; s < KS; s++) {
            float e;
            if (BS) { /* stage_range's slice sums: the slice's blocks in order */
              const int c0 = (int)((int64_t)s * p.nch / KS), c1 = (int)((int64_t)(s + 1) * p.nch / KS);
              e = 0.0f;
              for (int64_t b = (int64_t)c0 * NEB; b < std::min((int64_t)c1 * NEB, neb_k); b++) e += bq[b * p.ncols + a * SPL];
            } else {
              e = ssw[(size_t)(ogi * KS + s) * NG * 8 + a * SPL];
            }
            q = s == 0 ? e : q + e;
          }
          tot *= 1.0f / sqrtf(q * p.inv_k + p.eps);
        }
        const int64_t idx = (int64_t)a * p.n + (int64_t)tile * 16 + r;
        if (p.y_bf16)
          static_cast<uint16_t *>(p.y)[idx] = (uint16_t)f32_to_bf16_bits(tot);
        else
          static_cast<float *>(p.y)[idx] = tot;
      }
    }
}

/* The tail kernel's sums, for the last n % 16 rows. */
template <int L>
void emulate_tail(const TailParams &tp) {
  using F = Fmt<L>;
  const int64_t nb = tp.k / F::kGroup;
  const size_t bb = 2 + F::kGroup / 4;
  for (int r = 0; r < tp.nrows; r++)
    for (int64_t a = 0; a < tp.m; a++) {
      const char *xa = static_cast<const char *>(tp.x) + (size_t)a * (size_t)tp.k * (tp.x_bf16 ? 2 : 4);
      std::vector<float> dot(kTailThreads, 0.0f), ss(kTailThreads, 0.0f);
      for (int th = 0; th < kTailThreads; th++)
        for (int64_t b = th; b < nb; b += kTailThreads) {
          float s = 0.0f, d;
          if (F::kNF4)
            d = reinterpret_cast<const float *>(tp.rows + (size_t)tp.nrows * (size_t)(tp.k / 2))[(size_t)r * nb + b];
          else {
            const uint8_t *blk = tp.rows + ((size_t)r * nb + b) * bb;
            d = half_bits_f32((uint32_t)blk[0] | ((uint32_t)blk[1] << 8));
          }
          for (int j = 0; j < F::kGroup; j++) {
            const int64_t kk = b * F::kGroup + j;
            float xv = tp.x_bf16 ? bf16_bits_f32(reinterpret_cast<const uint16_t *>(xa)[kk])
                                 : reinterpret_cast<const float *>(xa)[kk];
            if (tp.gamma != nullptr) {
              ss[th] = fmaf(xv, xv, ss[th]);
              xv *= tp.g_bf16 ? bf16_bits_f32(static_cast<const uint16_t *>(tp.gamma)[kk])
                              : static_cast<const float *>(tp.gamma)[kk];
            }
            float wv;
            if (F::kNF4)
              wv = nf4_value((tp.rows[(size_t)r * (size_t)(tp.k / 2) + kk / 2] >> (4 * (kk & 1))) & 15);
            else
              wv = (float)(((tp.rows[((size_t)r * nb + b) * bb + 2 + j / 4] >> (2 * (j & 3))) & 3) - 1);
            s = fmaf(wv, xv, s);
          }
          dot[th] = fmaf(s, d, dot[th]);
        }
      for (int st = kTailThreads / 2; st > 0; st >>= 1)
        for (int th = 0; th < st; th++) dot[th] += dot[th + st], ss[th] += ss[th + st];
      float tot = dot[0];
      if (tp.gamma != nullptr) tot *= 1.0f / sqrtf(ss[0] * tp.inv_k + tp.eps);
      const int64_t i = a * tp.n + tp.row0 + r;
      if (tp.y_bf16)
        static_cast<uint16_t *>(tp.y)[i] = (uint16_t)f32_to_bf16_bits(tot);
      else
        static_cast<float *>(tp.y)[i] = tot;
    }
}

/* qgc_matvec with the launches emulated. */
void emulate_matvec(const HostLayout &h, const qg_matvec_args &a, const qgc_device_facts &dev) {
  static std::vector<uint2> lut;
  if (lut.empty())
    for (int i = 0; i < kLutBytes / 8; i++) lut.push_back(nf4_lut_entry(i / (kLutStride / 8)));
  qgc_plan pl = qgc_make_plan(&h.L, &a, dev);
  EXPECT(pl.fits, "the plan does not fit");
  EXPECT(pl.kc.smem > 0 && pl.kc.smem <= dev.smem_optin,
                "plan needs %zu bytes of shared memory", pl.kc.smem);
  ck_assert(!pl.main || pl.kc.grid >= 1);
  ck_assert_int_le(pl.kc.block, 32 * kWideWarps);
  if (pl.kc.block > kMaxThreads) /* the wide kernel's one configuration */
    ck_assert(wide_config(h.L.format == QGEMV_NF4, pl.kc.xm, pl.kc.ng, pl.kc.t, pl.kc.bs));
  ck_assert_int_le(pl.KS, h.L.nch);
  if (pl.tail) qgc_with_layout(h.L.id, [&](auto lay) { emulate_tail<decltype(lay)::value>(pl.tp); });
  for (int64_t r0 = 0; pl.main && r0 < a.m; r0 += pl.rows) {
    qgc_plan_rows(&pl, &a, r0);
    const bool has = qgc_with_layout(h.L.id, [&](auto lay) {
      constexpr int L = decltype(lay)::value;
      constexpr int X0 = Fmt<L>::kNF4 ? kS1 : kDirect, X1 = Fmt<L>::kNF4 ? kS2 : kB3;
      const bool normbf = pl.kc.xm == kDG || pl.kc.xm == kB2;
      EXPECT(pl.kc.xm == X0 || pl.kc.xm == X1 || (!Fmt<L>::kNF4 && (pl.kc.xm == kI4 || normbf)),
                    "activation mode %d", pl.kc.xm);
      /* the norm's bf16 modes (gamma in A, or kB2's two terms) exactly where
       * they are exact: Q2_0, bf16 x, bf16 gamma; kB2 where qgc_norm_b2 says */
      ck_assert_int_eq(normbf, !Fmt<L>::kNF4 && a.gamma != nullptr && a.x_dtype == QGEMV_BF16 &&
                                   a.gamma_dtype == QGEMV_BF16);
      if (normbf) ck_assert_int_eq(pl.kc.xm == kB2, qgc_norm_b2(&h.L, dev));
      if (pl.kc.xm == X0)
        emulate_launch<L, X0>(pl, lut);
      else if (pl.kc.xm == X1)
        emulate_launch<L, X1>(pl, lut);
      else if constexpr (!Fmt<L>::kNF4) {
        if (pl.kc.xm == kDG)
          emulate_launch<L, kDG>(pl, lut);
        else if (pl.kc.xm == kB2)
          emulate_launch<L, kB2>(pl, lut);
        else
          emulate_launch<L, kI4>(pl, lut);
      }
    });
    EXPECT(has, "layout %d has no kernels", (int)h.L.id);
    EXPECT(groups_ok(pl.kc.xm, h.L.group, pl.kc.ng) && (pl.kc.bs || warp_b_ok(pl.kc.xm, pl.kc.ng)) && pl.kc.t >= 1 &&
                      (pl.kc.t <= (h.L.format == QGEMV_NF4 ? max_tiles<QGEMV_NF4>(pl.kc.ng, pl.kc.xm)
                                                           : max_tiles<QGEMV_Q2_0>(pl.kc.ng, pl.kc.xm)) ||
                       (ng2t2_config(h.L.format == QGEMV_NF4, pl.kc.ng, pl.kc.t, pl.kc.bs) &&
                        pl.kc.block <= 32u * kNg2T2Warps)),
                  "kernel choice ng %d t %d", pl.kc.ng, pl.kc.t);
  }
}

struct Format {
  qg_layout_id id;
  qgemv_format f;
  int32_t group;
  const char *name;
};
Format format_at(int fi) {
  const qgemv_format_info info = tu_format(fi);
  return Format{(qg_layout_id)fi, info.format, info.group, info.name};
}

struct Case {
  int fi;
  int64_t n, k, m;
  qgemv_dtype xt, yt;
  bool norm;
  qgemv_dtype gt;
  const qgc_device_facts *dev;
  dist_kind dist;
};

/* Runs one case, checks the contract, returns the output bytes. */
std::vector<uint8_t> run_case(const Case &c, uint64_t seed) {
  const Format F = format_at(c.fi);
  rng r = {seed};
  tu_weight w;
  tu_weight_make(&r, c.dist, F.f, F.group, c.n, c.k, &w);
  HostLayout h;
  make_layout(w.desc, F.id, h);
  std::vector<float> xf((size_t)(c.m * c.k)), gf((size_t)c.k);
  fill_random(&r, c.dist, xf.data(), xf.size());
  for (auto &g : gf) g = (float)(0.5 + rng_uniform(&r));
  void *x = tu_convert(xf.data(), xf.size(), c.xt);
  void *gamma = c.norm ? tu_convert(gf.data(), gf.size(), c.gt) : nullptr;
  const size_t ybytes = (size_t)(c.m * c.n) * tu_dtype_size(c.yt);
  tu_guarded y = tu_guarded_new(ybytes);
  const qg_matvec_args a = args_on(h, c.m, x, c.xt, y.mem, c.yt, gamma, c.gt);
  emulate_matvec(h, a, *c.dev);
  char where[256];
  const double worst = tu_check_contract(&w.desc, c.m, c.xt, x, c.gt, gamma, 1e-5f, c.yt, y.mem, where, sizeof where);
  EXPECT(worst <= 1.0, "%s %lldx%lld m=%lld x=%s y=%s norm=%d sms=%d %s: worst %.3g of the bound at %s", F.name,
                (long long)c.n, (long long)c.k, (long long)c.m, c.xt == QGEMV_F32 ? "f32" : "bf16",
                c.yt == QGEMV_F32 ? "f32" : "bf16", (int)c.norm, c.dev->sms, dist_name(c.dist), worst, where);
  EXPECT(tu_guard_intact(&y), "write past the end of y");
  std::vector<uint8_t> out(y.mem, y.mem + ybytes);
  tu_guarded_free(&y);
  free(x);
  free(gamma);
  tu_weight_free(&w);
  return out;
}

/* Shapes with short last chunks (k % 512 from 64 to 448, k % 256 = 64,
 * 128, 192, odd counts of 64-blocks), tail rows (n % 16 from 1 to 15, n <
 * 16), one chunk per row, several chunks per slice, and both devices. */
START_TEST(test_every_combination) {
  const int64_t shapes[][2] = {{37, 320}, {130, 1152}, {21, 448}, {300, 256}, {5, 192}, {48, 1664}};
  const qgc_device_facts *devs[] = {&kH200, &kGB10, &kH200Int};
  const int64_t ms[] = {1, 3};
  uint64_t seed = 100 + (uint64_t)_i;
  const int nshapes = quick ? 3 : 6, ndev = quick ? 1 : format_at(_i).f == QGEMV_NF4 ? 2 : 3;
  for (int si = 0; si < nshapes; si++)
    for (int di = 0; di < ndev; di++)
      for (int64_t m : ms)
        for (int xt = 0; xt < 2; xt++)
          for (int yt = 0; yt < 2; yt++)
            for (int norm = 0; norm < 2; norm++) {
              const int64_t n = shapes[si][0], k = shapes[si][1];
              if (k % format_at(_i).group) continue;
              Case c = {_i, n, k, m, (qgemv_dtype)xt, (qgemv_dtype)yt, norm != 0, (qgemv_dtype)xt, devs[di],
                        (dist_kind)(seed % DIST_COUNT)};
              run_case(c, seed++);
            }
}
END_TEST

/* A device of two SMs makes long slices and many units per CTA (the ring
 * runs across units); batched f32 at k = 16384 stages B in phases. */
START_TEST(test_geometries) {
  static const qgc_device_facts small = {2, 232448, 233472, true, {}};
  const int before = phased_launches;
  const int64_t shapes[][2] = {{96, 2048}, {64, 16384}};
  for (int si = 0; si < 2; si++)
    for (int64_t m : {1, 6, 9})
      for (int xt = 0; xt < 2; xt++) {
        if (quick && (m == 6 || (si == 1 && xt == 1))) continue; /* valgrind runs */
        const int64_t k = tu_whole_blocks(_i, shapes[si][1]);
        Case c = {_i, shapes[si][0], k, m, (qgemv_dtype)xt, QGEMV_F32, xt == 0, QGEMV_F32, &small, DIST_NORMAL};
        run_case(c, 300 + (uint64_t)(si * 10 + m));
      }
  EXPECT(phased_launches > before, "no launch staged B in phases");
}
END_TEST

/* A layout's shape (no memory) and the arguments of a call on it, for
 * the plan alone. */
struct PlanCall {
  qgc_layout L;
  qg_matvec_args a;
};
void plan_call(const Format &F, int64_t n, int64_t k, int64_t m, int xt, PlanCall &c) {
  qgemv_weight_desc d = {};
  d.format = F.f;
  d.n = n;
  d.k = k;
  d.group = F.group;
  c.L = qgc_layout();
  qgc_layout_shape(&c.L, &d, F.id);
  c.a = qg_matvec_args();
  c.a.layout = &c.L;
  c.a.layout_id = F.id;
  c.a.n = n;
  c.a.k = k;
  c.a.m = m;
  c.a.x_dtype = c.a.y_dtype = (qgemv_dtype)xt;
}

/* div_by: n / d by one multiply, for every divisor the kernels take and
 * dividends up to far past what they divide. */
START_TEST(test_div_magic) {
  long bad = 0;
  uint32_t bad_n = 0, bad_d = 0;
  const auto check = [&](uint32_t n, uint32_t d, uint64_t M) {
    if (div_by(n, M) != (int)(n / d)) ++bad, bad_n = n, bad_d = d;
  };
  for (uint32_t d = 1; d <= 4096; d++) {
    const uint64_t M = div_magic(d);
    const uint32_t top = 0xffffffffu / d; /* n d < 2^32 */
    for (uint32_t n = 0; n < 70000 && n <= top; n += (n < 5000 ? 1 : 97)) check(n, d, M);
    for (uint32_t n = top > 3000 ? top - 3000 : 0; n < top; n++) check(n, d, M);
    check(top, d, M);
  }
  EXPECT(bad == 0, "%ld quotients wrong, e.g. %u / %u", bad, bad_n, bad_d);
}
END_TEST

/* The plan: B in phases when B for all of k does not fit (batched f32
 * at k = 28672 on the H200), k-splits within the device's shared memory,
 * and the H200 lab winners' geometry where they apply. */
START_TEST(test_plan) {
  const Format F = format_at(_i);
  const int64_t shapes[][2] = {{28672, 8192}, {8192, 28672}, {4096, 4096}, {4096, 14336}, {14336, 4096}};
  for (auto &s : shapes)
    for (const qgc_device_facts *dev : {&kH200, &kGB10})
      for (int64_t m : {1, 8, 16})
        for (int xt = 0; xt < 2; xt++) {
          PlanCall c;
          plan_call(F, s[0], s[1], m, xt, c);
          qg_matvec_args &a = c.a;
          const qgc_plan pl = qgc_make_plan(&c.L, &a, *dev);
          EXPECT(pl.kc.smem > 0 && pl.kc.smem <= dev->smem_optin,
                        "%s %lldx%lld m=%lld: %zu bytes of shared memory", F.name, (long long)s[0], (long long)s[1],
                        (long long)m, pl.kc.smem);
          ck_assert_int_eq(pl.KS * pl.G * 32, (int)pl.kc.block);
          /* KS from (n, k, device) only */
          a.m = 1;
          ck_assert_int_eq(qgc_make_plan(&c.L, &a, *dev).KS, pl.KS);
          /* Q2_0 direct (bf16 x) at KS 2 and m = 1: the wide kernel, 28
           * warps of one tile (v10) */
          const bool wide = F.f == QGEMV_Q2_0 && xt == QGEMV_BF16 && m == 1 && pl.KS == 2;
          if (dev == &kH200 && m == 1 && s[0] == 28672) ck_assert_int_eq(pl.kc.t, wide ? 1 : 2);
          if (dev == &kH200 && m == 1 && s[0] == 28672 && xt == QGEMV_F32) ck_assert_int_eq(pl.kc.bs, 1);
          /* 1792 tiles at KS 2: 16 warps make 112 CTAs on 132 SMs; NF4 at
           * m = 1 takes 14 (128 CTAs), Q2_0 f32 keeps 16 (v8), Q2_0 bf16
           * takes 28 of one tile (128 CTAs) */
          if (dev == &kH200 && m == 1 && s[0] == 28672)
            EXPECT(pl.kc.block == (F.f == QGEMV_NF4 ? 448u : wide ? 896u : 512u) &&
                              pl.kc.grid == (F.f == QGEMV_NF4 || wide ? 128u : 112u),
                          "%s 28672x8192 m=1: %u threads, %u CTAs", F.name, pl.kc.block, pl.kc.grid);
          /* Q2_0 g64 direct batched in one column group: the wide kernel
           * where its CTAs make one wave over 3/4 of the SMs or more
           * (28672 x 8192 at KS 2, 14336 x 4096 at KS 4: 128 CTAs), not at
           * 8192 x 28672 (74 CTAs), nor for g128 or 16 rows (v11), nor at
           * 14336 x 4096's KS 2 of QGC_EXP_KS2_FILL (64 CTAs, v24) */
          if (dev == &kH200 && F.f == QGEMV_Q2_0 && xt == QGEMV_BF16 && m == 8) {
            const bool want = F.group == 64 && (s[0] == 28672 || (s[0] == 14336 && !QGC_EXP_KS2_FILL));
            EXPECT((pl.kc.block == 896u) == want && (!want || (pl.kc.t == 1 && pl.kc.bs && pl.kc.grid == 128u)),
                          "%s %lldx%lld m=8: %u threads, t %d, bs %d, %u CTAs", F.name, (long long)s[0],
                          (long long)s[1], pl.kc.block, pl.kc.t, pl.kc.bs, pl.kc.grid);
          }
          if (m == 16) ck_assert_int_le(pl.kc.block, 32 * kMaxWarps);
          /* test_cuda_backend's test_batched_wide_plan runs this choice on
           * the GPU at 28667 x 1024 */
          if (dev == &kH200 && F.f == QGEMV_Q2_0 && F.group == 64 && xt == QGEMV_BF16 && m == 8 && s[0] == 28672) {
            PlanCall t;
            plan_call(F, 28667, 1024, 8, xt, t);
            const qgc_plan pt = qgc_make_plan(&t.L, &t.a, *dev);
            EXPECT(pt.kc.block == 896u && pt.KS == 2 && pt.kc.grid == 128u, "28667x1024 m=8: %u threads, KS %d",
                          pt.kc.block, pt.KS);
          }
          /* NF4 in two column groups at two tiles per warp in 14 warps
           * (QGC_EXP_NG2T2): bf16 x m = 16 and f32 x batched at a k-split
           * of 2, here and at 28667 x 1024, where test_batched_wide_plan
           * runs it on the GPU */
          if (dev == &kH200 && F.f == QGEMV_NF4 && s[0] == 28672 && (xt == QGEMV_F32 ? m > 1 : m == 16)) {
            PlanCall t;
            plan_call(F, 28667, 1024, m, xt, t);
            const qgc_plan pt = qgc_make_plan(&t.L, &t.a, *dev);
            for (const qgc_plan *q : {&pl, &pt})
              EXPECT(q->kc.ng == 2 && (q->kc.t == 2) == (QGC_EXP_NG2T2 != 0) && q->KS == 2 &&
                                q->kc.block == (QGC_EXP_NG2T2 ? 448u : 512u),
                            "NF4 %s m=%lld: ng %d, t %d, KS %d, %u threads", xt == QGEMV_F32 ? "f32" : "bf16",
                            (long long)m, q->kc.ng, q->kc.t, q->KS, q->kc.block);
          }
          /* 12 warps at KS 4 made more than one wave of CTAs: never taken */
          if (dev == &kH200 && pl.KS == 4) EXPECT(pl.kc.block != 384u, "%s %lldx%lld m=%lld: 12 warps at KS 4",
                                                         F.name, (long long)s[0], (long long)s[1], (long long)m);
          /* KS 8 (4096 rows): CTAs of one row group, 8 warps, two per SM,
           * for batched bf16 x (B per warp) (v20) and, with QGC_EXP_KS8_M1
           * (the default), for m = 1 where two fit an SM (all but f32 x at
           * k = 14336, which keeps 16 warps) (v21) */
          if (dev == &kH200 && pl.KS == 8 && (m == 1 || xt == QGEMV_BF16)) {
            const bool one_group = m > 1 || (QGC_EXP_KS8_M1 && (xt == QGEMV_BF16 || s[1] == 4096));
            EXPECT(pl.kc.block == (one_group ? 256u : 512u) && pl.kc.grid == (one_group ? 256u : 128u),
                          "%s %lldx%lld m=%lld: %u threads, %u CTAs", F.name, (long long)s[0], (long long)s[1],
                          (long long)m, pl.kc.block, pl.kc.grid);
          }
          /* 14336 x 4096 (896 tiles), QGC_EXP_KS2_FILL: KS 2 and one tile
           * per warp at every m, where KS 4 made 112 CTAs of 8 tiles; NF4 in
           * 14 warps (128 CTAs), Q2_0 in 16 (112) (v24) */
          if (dev == &kH200 && s[0] == 14336 && QGC_EXP_KS2_FILL) {
            const bool nf4 = F.f == QGEMV_NF4;
            EXPECT(pl.KS == 2 && pl.kc.t == 1 && pl.kc.bs && pl.kc.block == (nf4 ? 448u : 512u) &&
                              pl.kc.grid == (nf4 ? 128u : 112u),
                          "%s 14336x4096 %s m=%lld: KS %d, t %d, bs %d, %u threads, %u CTAs", F.name,
                          xt == QGEMV_F32 ? "f32" : "bf16", (long long)m, pl.KS, pl.kc.t, pl.kc.bs, pl.kc.block,
                          pl.kc.grid);
          }
          /* NF4 f32 batched at KS 4 (14336 x 4096 before QGC_EXP_KS2_FILL):
           * 8 warps, all of k's B in one phase, where 16 warps took two (v21) */
          if (dev == &kH200 && F.f == QGEMV_NF4 && xt == QGEMV_F32 && m > 1 && s[0] == 14336 && !QGC_EXP_KS2_FILL)
            EXPECT(pl.KS == 4 && pl.kc.bs && pl.kc.block == (QGC_EXP_NF4_W8 ? 256u : 512u) &&
                              pl.phases == (QGC_EXP_NF4_W8 ? 1 : 2),
                          "NF4 14336x4096 f32 m=%lld: KS %d, bs %d, %u threads, %d phases", (long long)m, pl.KS,
                          pl.kc.bs, pl.kc.block, pl.phases);
          /* B per CTA with 14 warps and at most 4 phases before 16 warps
           * with more phases or B per warp (v8) */
          if (dev == &kH200 && m == 16 && s[0] == 28672 && F.f == QGEMV_Q2_0)
            EXPECT(pl.kc.bs && pl.phases <= 4 && pl.kc.block == 448, "%s 28672x8192 m=16: bs %d, %d phases, %u threads",
                          F.name, pl.kc.bs, pl.phases, pl.kc.block);
          /* k = 28672, f32 x: B in 2 phases; 16 warps of one tile, or
           * for NF4 (QGC_EXP_NF4_T2W8) 8 warps of two, the same CTAs (v24) */
          if (dev == &kH200 && m == 1 && s[1] == 28672 && xt == QGEMV_F32) {
            const bool t2 = F.f == QGEMV_NF4 && QGC_EXP_NF4_T2W8;
            EXPECT(pl.kc.bs && pl.kc.block == (t2 ? 256u : 512u) && pl.kc.t == (t2 ? 2 : 1) &&
                              pl.phases == 2 && pl.kc.grid == 128,
                          "%s 8192x28672 f32 m=1: %s warps, B in 2 phases (got %u threads, t %d, %d phases, %u CTAs)",
                          F.name, t2 ? "8" : "16", pl.kc.block, pl.kc.t, pl.phases, pl.kc.grid);
          }
          if (dev == &kH200 && m == 1 && s[1] == 28672 && xt == QGEMV_BF16 && F.f == QGEMV_NF4)
            EXPECT(pl.kc.t == (QGC_EXP_NF4_T2W8 ? 2 : 1) && pl.kc.block == (QGC_EXP_NF4_T2W8 ? 256u : 512u) &&
                              pl.phases == 1 && pl.kc.grid == 128,
                          "NF4 8192x28672 bf16 m=1: t %d, %u threads, %d phases, %u CTAs", pl.kc.t, pl.kc.block,
                          pl.phases, pl.kc.grid);
          if (dev == &kH200 && m == 8 && s[1] == 28672 && xt == QGEMV_F32 && F.f == QGEMV_NF4)
            EXPECT(pl.kc.bs && pl.phases > 1, "batched f32 at k = 28672: B in phases");
          /* three bf16 terms in 24 columns (eight rows per launch) where
           * m = 1 takes one tile per warp (8192 rows), and at g128 for m =
           * 8; else 16 columns of two tiles (v19). Before QGC_EXP_B3G3, 32
           * columns at g128 for m = 8, and for m = 16 at 8192 rows (v7). At
           * 4096 rows (k-split 8) neither fits. */
          if (dev == &kH200 && F.f == QGEMV_Q2_0 && (F.group == 128 || QGC_EXP_B3G3) && xt == QGEMV_F32 && m > 1) {
            const int want = s[0] == 4096                   ? 2
                             : QGC_EXP_B3G3                 ? (s[0] == 8192 || (F.group == 128 && m == 8) ? 3 : 2)
                             : m == 8 || s[0] == 8192 ? 4
                                                            : 2;
            EXPECT(pl.kc.ng == want, "%s f32 %lldx%lld m=%lld: %d column groups, not %d", F.name,
                          (long long)s[0], (long long)s[1], (long long)m, pl.kc.ng, want);
          }
          /* x=auto: the integer mma from 3.5 tiles per SM (8192 rows on the
           * H200), for every m of a weight, else the direct mode */
          qgc_device_facts aut = *dev;
          aut.tune.x = QGC_X_AUTO;
          a.m = m;
          const qgc_plan pa = qgc_make_plan(&c.L, &a, aut);
          bool fits = false; /* and only where its largest launch fits */
          qgc_with_layout(F.id, [&](auto lay) { fits = qgc_i4_fits<decltype(lay)::value>(&c.L, aut, pl.KS); });
          const bool want = F.f != QGEMV_NF4 && xt == QGEMV_BF16 && 2 * c.L.ntiles >= 7 * (int64_t)dev->sms && fits;
          if (dev == &kH200 && s[0] >= 8192 && F.f != QGEMV_NF4 && xt == QGEMV_BF16)
            EXPECT(want, "%s %lldx%lld: x=auto should take the integer mma on the H200", F.name,
                          (long long)s[0], (long long)s[1]);
          EXPECT(pa.fits && pa.kc.xm == (want ? kI4 : F.f == QGEMV_NF4 ? pl.kc.xm : xt == QGEMV_BF16 ? kDirect : kB3),
                        "%s %lldx%lld m=%lld x=auto: mode %d", F.name, (long long)s[0], (long long)s[1], (long long)m,
                        pa.kc.xm);
        }
}
END_TEST

/* QGEMV_CUDA_PLAN: the plan takes what the override asks (k-split, tiles,
 * B mode, warps, phases) or reports that it does not fit, and the result
 * still meets the contract. */
START_TEST(test_plan_tune) {
  struct Tune {
    qgc_plan_tune t;
    bool fits_one; /* at k = one block or group: one chunk per row */
  };
  const Tune tunes[] = {
      {{1, 0, 0, 0, 0, 0, 0, 0}, true},
      {{2, 1, QGC_B_WARP, 0, 0, 0, 0, 0}, false},
      {{4, 0, QGC_B_CTA, 4, 8, 0, 0, 0}, false},
      {{2, 1, QGC_B_CTA, 0, 0, 0, 0, 0}, false},
      {{2, 0, 0, 2, 0, 0, 0, 0}, false},
      {{0, 0, 0, 16, 0, 0, 0, 0}, true},
      {{2, 0, QGC_B_CTA, 0, 4, 0, 0, 0}, false},
      {{0, 0, 0, 0, 0, QGC_X_INT, 0, 0}, true},
      {{2, 1, QGC_B_CTA, 0, 0, QGC_X_INT, 0, 0}, false},
      {{0, 0, 0, 0, 0, QGC_X_DIRECT, 0, 0}, true},
      {{2, 0, 0, 14, 0, 0, 0, 0}, false}, /* warps that are no power of two: 7 row groups */
      {{4, 0, 0, 14, 0, 0, 0, 0}, false}, /* taken down to 12, a multiple of the k-split */
      {{4, 2, 0, 8, 0, 0, 0, 0}, false},  /* two tiles per warp where the tiles are few (the plan: one) */
#if QGC_EXP_NF4_WIDE_T2 && (QGC_EXP_NF4_KC128 || QGC_EXP_STAGES == 1) /* its ring fits */
      {{4, 2, QGC_B_CTA, 28, 0, 0, 0, 0}, false}, /* NF4's wide kernel of two tiles (Q2_0: does not fit) */
#endif
  };
  for (const Tune &tu : tunes) {
    qgc_device_facts dev = kH200;
    dev.tune = tu.t;
    for (int64_t k0 : {(int64_t)16384, (int64_t)64})
      for (int64_t m = quick ? 3 : 1; m <= 3; m += 2)
        for (int xt = 0; xt < (quick ? 1 : 2); xt++) {
          const int64_t n = quick ? 32 : 96, k = tu_whole_blocks(_i, k0);
          const Format F = format_at(_i);
          PlanCall c;
          plan_call(F, n, k, m, xt, c);
          const qgc_plan pl = qgc_make_plan(&c.L, &c.a, dev);
          bool i4_fits = true; /* the integer mma runs only where every m fits */
          qgc_with_layout(F.id, [&](auto lay) {
            constexpr int Li = decltype(lay)::value;
            i4_fits = qgc_i4_fits<Li>(&c.L, dev, tu.t.ks ? tu.t.ks : qgc_pick_ks<Li>(&c.L, dev));
          });
          char text[96];
          snprintf(text, sizeof text, "ks=%d t=%d b=%d w=%d phases=%d x=%d", tu.t.ks, tu.t.t, tu.t.b, tu.t.w,
                   tu.t.phases, tu.t.x);
          if (k0 == 64 && !tu.fits_one) {
            EXPECT(!pl.fits, "%s k=%lld: '%s' should not fit one chunk", F.name, (long long)k, text);
            continue;
          }
          if (tu.t.w > kMaxWarps && F.f != QGEMV_NF4) { /* two-tile wide kernels: NF4's only */
            EXPECT(!pl.fits, "%s k=%lld: '%s' has no kernel and should not fit", F.name, (long long)k, text);
            continue;
          }
          EXPECT(pl.fits, "%s k=%lld m=%lld: '%s' did not fit", F.name, (long long)k, (long long)m, text);
          if (tu.t.ks) ck_assert_int_eq(pl.KS, tu.t.ks);
          if (tu.t.t) ck_assert_int_eq(pl.kc.t, tu.t.t);
          if (tu.t.b) ck_assert_int_eq(pl.kc.bs, tu.t.b == QGC_B_CTA);
          if (tu.t.w) ck_assert_int_eq((int)pl.kc.block, 32 * (tu.t.w - tu.t.w % pl.KS));
          if (tu.t.phases) ck_assert_int_eq(pl.phases, tu.t.phases);
          if (F.f != QGEMV_NF4 && xt == QGEMV_BF16)
            ck_assert_int_eq(pl.kc.xm, tu.t.x == QGC_X_INT && i4_fits ? kI4 : kDirect);
          if (quick && (&tu - tunes) % 2) continue; /* valgrind runs: every other tune's kernel */
          run_case(Case{_i, n, k, m, (qgemv_dtype)xt, (qgemv_dtype)xt, xt == 0, (qgemv_dtype)xt, &dev, DIST_NORMAL},
                   700 + (uint64_t)m);
        }
  }
  /* t=2 for NF4's two column groups: the kernel of kNg2T2Warps warps
   * (QGC_EXP_NG2T2) at a shape the plan leaves at one tile */
  if (format_at(_i).f == QGEMV_NF4 && QGC_EXP_NG2T2) {
    qgc_device_facts dev = kH200;
    dev.tune = {4, 2, QGC_B_CTA, 0, 0, 0, 0, 0}; /* k-split 4: 8 warps of 2 row groups */
    const int64_t n = 96, k = tu_whole_blocks(_i, 4096), m = 8;
    PlanCall c;
    plan_call(format_at(_i), n, k, m, QGEMV_F32, c);
    const qgc_plan pl = qgc_make_plan(&c.L, &c.a, dev);
    EXPECT(pl.fits && pl.kc.ng == 2 && pl.kc.t == 2 && pl.kc.bs && pl.kc.block <= 32u * kNg2T2Warps,
                  "t=2, NF4 f32 m=8: fits %d, ng %d, t %d, bs %d, %u threads", pl.fits, pl.kc.ng, pl.kc.t, pl.kc.bs,
                  pl.kc.block);
    run_case(Case{_i, n, k, m, QGEMV_F32, QGEMV_F32, false, QGEMV_F32, &dev, DIST_NORMAL}, 778);
  }
}
END_TEST

/* Batched rows are bit-identical to m = 1 on each row, for m past one
 * launch and every activation mode. */
/* Every row of one batched call (n = 45, m = 19 unless given) against an m = 1 call
 * on that row, bit for bit, on device facts dev (format _i, x dtype xt & 1). */
static void check_batched_rows(int _i, int xt, int norm, const qgc_device_facts &dev, int64_t k0, int64_t m = 19,
                               int64_t n = 45) {
  const int64_t k = tu_whole_blocks(_i, k0);
  const Format F = format_at(_i);
  Case c = {_i, n, k, m, (qgemv_dtype)(xt & 1), QGEMV_F32, norm != 0, QGEMV_BF16, &dev, DIST_NORMAL};
  const std::vector<uint8_t> all = run_case(c, 7);
  rng r = {7};
  tu_weight w;
  tu_weight_make(&r, c.dist, F.f, F.group, n, k, &w);
  std::vector<float> xf((size_t)(m * k)), gf((size_t)k);
  fill_random(&r, c.dist, xf.data(), xf.size());
  for (auto &g : gf) g = (float)(0.5 + rng_uniform(&r));
  HostLayout h;
  make_layout(w.desc, F.id, h);
  void *x = tu_convert(xf.data(), xf.size(), c.xt);
  void *gamma = norm ? tu_convert(gf.data(), gf.size(), c.gt) : nullptr;
  for (int64_t row = 0; row < m; row++) {
    std::vector<float> y((size_t)n);
    const qg_matvec_args a = args_on(h, 1, static_cast<const char *>(x) + (size_t)(row * k) * tu_dtype_size(c.xt),
                                     c.xt, y.data(), QGEMV_F32, gamma, c.gt);
    emulate_matvec(h, a, dev);
    EXPECT(memcmp(y.data(), all.data() + (size_t)(row * n) * 4, (size_t)n * 4) == 0,
                  "row %lld of the batched call differs from m = 1 (format %d, x %d, norm %d)", (long long)row, _i,
                  xt, norm);
  }
  free(x);
  free(gamma);
  tu_weight_free(&w);
}

START_TEST(test_batched_rows) {
  const int wide_before = b3_wide_launches, g3_before = b3_g3_launches, prmt_before = prmt_launches;
  for (int xt = 0; xt < 3; xt++)
    for (int norm = 0; norm < 2; norm++) {
      /* xt 2: bf16 x on the integer mma (Q2_0) */
      if (xt == 2 && (norm || format_at(_i).f == QGEMV_NF4)) continue;
      check_batched_rows(_i, xt, norm, xt == 2 ? kH200Int : kH200, 384);
    }
  /* Warp counts that are no power of two: w=14 takes 14 warps at the
   * k-split 2 of Q2_0 here (7 row groups; the plan's own choice at KS 2
   * since v8) and 12 at NF4's 4 (3 row groups) */
  qgc_device_facts w14 = kH200;
  w14.tune.w = 14;
  for (int xt = 0; xt < 2; xt++) check_batched_rows(_i, xt, 0, w14, 1024);
  /* f32 x, three terms: ten rows in one launch of 32 columns (g128; with
   * QGC_EXP_B3G3 only where one launch then takes every row) */
  /* NF4 in two column groups at two tiles per warp (QGC_EXP_NG2T2):
   * on a device of 2 SMs, 224 rows are many tiles at a k-split of 2 */
  if (format_at(_i).f == QGEMV_NF4) {
    const qgc_device_facts two = {2, 232448, 233472, true, {}};
    const int before = ng2t2_launches;
    for (int xt = 0; xt < 2; xt++) check_batched_rows(_i, xt, 0, two, 512, 19, 224);
    EXPECT((ng2t2_launches > before) == (QGC_EXP_NG2T2 != 0), "%d launches of two column groups at two tiles",
                  ng2t2_launches - before);
  }
  if (format_at(_i).f == QGEMV_Q2_0 && format_at(_i).group == 128) {
    if (QGC_EXP_B3G3) check_batched_rows(_i, 0, 0, kH200, 384, 10);
    EXPECT(b3_wide_launches > wide_before, "no launch of three bf16 terms took 32 columns");
  }
  if (format_at(_i).f == QGEMV_Q2_0 && QGC_EXP_B3G3) /* f32 x: three terms, eight rows per launch */
    EXPECT(b3_g3_launches > g3_before, "no launch of three bf16 terms took 24 columns");
  if (format_at(_i).f == QGEMV_NF4)
    EXPECT(prmt_launches > prmt_before, "no NF4 launch looked up in registers (two column groups, B per CTA)");
}
END_TEST

/* NF4, one activation row, k-split 4, tiles too few for two per warp in
 * 16 warps (QGC_EXP_NF4_T2W8): two tiles per warp in 8 warps, the plan's
 * own choice, checked against the contract and, bit for bit, against the
 * rows of a batched call (whose plan keeps one tile per warp). */
START_TEST(test_nf4_two_tiles_8_warps) {
  if (format_at(_i).f != QGEMV_NF4) return;
  qgc_device_facts dev = kH200;
  dev.tune.ks = 4; /* n = 96 alone would take a larger k-split */
  const int64_t k0 = quick ? 4096 : 16384; /* valgrind runs: one case, a shorter k */
  for (int xt = quick ? 1 : 0; xt < 2; xt++)
    for (int norm = 0; norm < (quick ? 1 : 2); norm++) {
      PlanCall c;
      plan_call(format_at(_i), 96, tu_whole_blocks(_i, k0), 1, xt, c);
      if (norm) c.a.gamma = &c; /* the plan reads only whether there is one */
      const qgc_plan pl = qgc_make_plan(&c.L, &c.a, dev);
      EXPECT(pl.fits && pl.KS == 4 && pl.kc.bs && pl.kc.t == (QGC_EXP_NF4_T2W8 ? 2 : 1) &&
                        pl.kc.block == (QGC_EXP_NF4_T2W8 ? 256u : 512u),
                    "NF4 m=1 x=%s norm=%d: fits %d, KS %d, bs %d, t %d, %u threads", xt ? "bf16" : "f32", norm, pl.fits,
                    pl.KS, pl.kc.bs, pl.kc.t, pl.kc.block);
      check_batched_rows(_i, xt, norm, dev, k0, 3, 96);
    }
}
END_TEST

/* QGC_EXP_KS2_FILL on a device of 8 SMs: 56 tiles, k-split 4 by the
 * warp slots, 7 CTAs of 8 tiles, or 8 of 7 at a k-split of 2 with one tile
 * per warp (14336 x 4096 on the H200 in small), at k = 2048, not 8192. Against the contract and,
 * bit for bit, batched rows (two launches for f32 x) against m = 1. */
START_TEST(test_ks2_fill) {
  static const qgc_device_facts eight = {8, 232448, 233472, true, {}};
  const Format F = format_at(_i);
  const int64_t n = 896, k = tu_whole_blocks(_i, 2048);
  for (int xt = 0; xt < 2; xt++) /* valgrind runs: f32 x, m = 3, only */
    for (int norm = 0; norm < 2 && !(quick && (xt || norm)); norm++) {
      PlanCall c;
      plan_call(F, n, k, 1, xt, c);
      if (norm) c.a.gamma = &c; /* the plan reads only whether there is one */
      const qgc_plan pl = qgc_make_plan(&c.L, &c.a, eight);
      const bool nf4 = F.f == QGEMV_NF4;
      EXPECT(pl.fits && pl.KS == (QGC_EXP_KS2_FILL ? 2 : 4) &&
                        (!QGC_EXP_KS2_FILL || (pl.kc.t == 1 && pl.kc.grid == (nf4 ? 8u : 7u))),
                    "%s m=1 x=%s norm=%d: fits %d, KS %d, t %d, %u CTAs", F.name, xt ? "bf16" : "f32", norm, pl.fits,
                    pl.KS, pl.kc.t, pl.kc.grid);
      check_batched_rows(_i, xt, norm, eight, 2048, xt || quick ? 3 : 9, n);
    }
  /* not past k = 6144 (H200, 14336 x 8192: m = 1 slower at k-split 2) */
  PlanCall c;
  plan_call(F, n, tu_whole_blocks(_i, 8192), 1, QGEMV_BF16, c);
  ck_assert_int_eq(qgc_make_plan(&c.L, &c.a, eight).KS, 4);
}
END_TEST

/* QGC_EXP_WAVE_FIT: where the slots' geometry makes just over one wave of
 * CTAs, the k-split and warps whose busiest SM takes the fewest tiles. On
 * the H200 (bench/NOTES.md v24-v26): the k-split for every m and the
 * warps at m = 1, per shape and format (Q2_0 by the wide search, and the
 * narrow one's pick where the wide one's is one tile per warp without a
 * k-split for more than 3/4 of its tiles: 22016 x 4096); every call's
 * busiest SM no more loaded than by the plan's own geometry at that
 * k-split; GB10's plans untouched. On devices of 8 SMs (672 x 4096: NF4
 * k-split 4 in 12 warps, Q2_0 2 in 12; 1184 x 3584: k-split 2, NF4 in 10
 * warps, Q2_0 in 12; 1152 x 3584, Q2_0 only: k-split 1 in 9 warps of one
 * tile), against the contract and batched rows against m = 1 bit for
 * bit. */
START_TEST(test_wave_fit) {
  const Format F = format_at(_i);
  const bool nf4 = F.f == QGEMV_NF4, q2w = !nf4 && QGC_EXP_Q2_WIDE;
  const bool picks_known = QGC_EXP_WAVE_FIT;
  struct {
    int64_t n, k;
    int ks, w; /* the pick at m = 1 */
  } const picks[] = {{11008, 4096, q2w ? 2 : 4, 12},
                     {18944, 3584, nf4 ? 2 : q2w ? 1 : 2, nf4 ? 10 : q2w ? 9 : 12},
                     {22016, 4096, 2, 12},
                     {37888, 3584, nf4 ? 2 : q2w ? 1 : 2, nf4 ? 10 : q2w ? 9 : 12}};
  for (const auto &sh : picks)
    for (int64_t m : {1, 8, 16})
      for (int xt = 0; xt < 2; xt++) {
        PlanCall c;
        plan_call(F, sh.n, sh.k, m, xt, c);
        const qgc_plan pl = qgc_make_plan(&c.L, &c.a, kH200), pg = qgc_make_plan(&c.L, &c.a, kGB10);
        EXPECT(pl.fits && (!picks_known || (pl.KS == sh.ks && (m > 1 || pl.kc.block == 32u * sh.w))),
                      "%s %lldx%lld %s m=%lld: fits %d, KS %d, %u threads", F.name, (long long)sh.n, (long long)sh.k,
                      xt ? "bf16" : "f32", (long long)m, pl.fits, pl.KS, pl.kc.block);
        qgc_device_facts own = kH200;
        own.tune.ks = pl.KS;
        const qgc_plan po = qgc_make_plan(&c.L, &c.a, own);
        EXPECT(po.fits && qgc_busiest_sm_tiles(pl, kH200) <= qgc_busiest_sm_tiles(po, kH200),
                      "%s %lldx%lld %s m=%lld: %lld tiles on the busiest SM, the plan's own %lld", F.name,
                      (long long)sh.n, (long long)sh.k, xt ? "bf16" : "f32", (long long)m,
                      (long long)qgc_busiest_sm_tiles(pl, kH200), (long long)qgc_busiest_sm_tiles(po, kH200));
        EXPECT(pg.fits && pg.kc.block <= 256u, "GB10 %s %lldx%lld m=%lld: %u threads", F.name,
                      (long long)sh.n, (long long)sh.k, (long long)m, pg.kc.block);
      }
  /* NF4 batched: 8 warps where they stage B in one phase and the pick's
   * warps in two, at no more tiles on the busiest SM (22016 x 4096, f32
   * x); not where 8 warps take two phases too (20480 x 5120) */
  if (nf4 && QGC_EXP_WAVE_FIT && QGC_EXP_NF4_W8_PHASE)
    for (int64_t m : {8, 16}) {
      PlanCall c, c2;
      plan_call(F, 22016, 4096, m, QGEMV_F32, c);
      const qgc_plan pl = qgc_make_plan(&c.L, &c.a, kH200);
      EXPECT(pl.fits && pl.KS == 2 && pl.kc.block == 256u && pl.phases == 1,
                    "22016x4096 f32 m=%lld: KS %d, %u threads, %d phases", (long long)m, pl.KS, pl.kc.block, pl.phases);
      plan_call(F, 20480, 5120, m, QGEMV_F32, c2);
      const qgc_plan p2 = qgc_make_plan(&c2.L, &c2.a, kH200);
      EXPECT(p2.fits && p2.kc.block > 256u, "20480x5120 f32 m=%lld: %u threads", (long long)m, p2.kc.block);
    }
  /* Q2_0 bf16 x batched up to 8 rows at one tile per warp: 12 warps
   * (18944 x 3584 at k-split 1, where m = 1 takes 9); f32 x keeps the
   * pick's 9 */
  if (!nf4 && QGC_EXP_WAVE_FIT && QGC_EXP_Q2_WIDE)
    for (int xt = 0; xt < 2; xt++) {
      PlanCall c;
      plan_call(F, 18944, 3584, 8, xt, c);
      const qgc_plan pl = qgc_make_plan(&c.L, &c.a, kH200);
      const unsigned want = xt == QGEMV_BF16 && QGC_EXP_Q2_BF16_W12 ? 384u : 288u;
      EXPECT(pl.fits && pl.KS == 1 && pl.kc.t == 1 && pl.kc.block == want,
                    "18944x3584 %s m=8: KS %d, t %d, %u threads", xt ? "bf16" : "f32", pl.KS, pl.kc.t, pl.kc.block);
    }
  /* not past k = 6144 (measured at 3584 and 4096) */
  {
    PlanCall c;
    plan_call(F, 11008, 8192, 1, QGEMV_BF16, c);
    qgc_with_layout(F.id, [&](auto lay) {
      ck_assert_int_eq(qgc_wave_fit<decltype(lay)::value>(&c.L, kH200).ks, 0);
    });
  }
  static const qgc_device_facts eight = {8, 232448, 233472, true, {}};
  struct {
    int64_t n, k0;
    int ks, w;
  } const small[] = {{672, 4096, q2w ? 2 : 4, 12}, {1184, 3584, 2, nf4 ? 10 : 12}, {1152, 3584, q2w ? 1 : 2, q2w ? 9 : 12}};
  for (int si = 0; si < (quick ? 1 : nf4 ? 2 : 3); si++) /* valgrind runs: 672 x 4096, f32 x, m = 3, only */
    for (int xt = 0; xt < 2; xt++)
      for (int norm = 0; norm < 2 && !(quick && (xt || norm)); norm++) {
        const int64_t n = small[si].n, k = tu_whole_blocks(_i, small[si].k0);
        PlanCall c;
        plan_call(F, n, k, 1, xt, c);
        if (norm) c.a.gamma = &c; /* the plan reads only whether there is one */
        const qgc_plan pl = qgc_make_plan(&c.L, &c.a, eight);
        EXPECT(pl.fits && (!picks_known || (pl.KS == small[si].ks && pl.kc.block == 32u * small[si].w)),
                      "%s %lldx%lld m=1 x=%s norm=%d: fits %d, KS %d, %u threads", F.name, (long long)n,
                      (long long)k, xt ? "bf16" : "f32", norm, pl.fits, pl.KS, pl.kc.block);
        check_batched_rows(_i, xt, norm, eight, small[si].k0, xt || quick ? 3 : 9, n);
      }
}
END_TEST

/* Q2_0's norm with bf16 x and bf16 gamma, gamma in A (kDG, QGEMV_CUDA_PLAN
 * norm=dg) and x gamma as two bf16 terms (kB2, norm=b2): B per CTA for all
 * of k, in phases (phases=2) and B per warp (b=warp), batched and m = 1, on
 * the H200, two SMs and GB10, against the contract and each row against
 * m = 1 bit for bit. gamma has both signs and zeros, at scales 1, 2^-100
 * and 2^100 (one per device), and x has rows of one sign, so that a wrong
 * product or a lost sign cannot cancel out. */
START_TEST(test_gamma_in_a) {
  const Format F = format_at(_i);
  if (F.f == QGEMV_NF4) return;
  static const qgc_device_facts small = {2, 232448, 233472, true, {}};
  qgc_device_facts warp = kH200, phased = kH200;
  warp.tune.b = QGC_B_WARP;
  phased.tune.b = QGC_B_CTA;
  phased.tune.phases = 2;
  const int before[3] = {dg_launches[0], dg_launches[1], dg_launches[2]};
  const int before_b2[3] = {b2_launches[0], b2_launches[1], b2_launches[2]};
  const qgc_device_facts *devs[] = {&kH200, &small, &warp, &phased, &kGB10};
  const int gexp[] = {0, -100, 100, 0, 0};
  for (int nm = QGC_NORM_DG; nm <= QGC_NORM_B2; nm++) /* gamma in A, then two terms */
    for (int di = 0; di < 5; di++)
      for (int64_t k0 : {(int64_t)1536, (int64_t)16384}) {
        if (quick && k0 == 16384 && devs[di] != &phased) continue; /* valgrind runs: the phases need the long k */
        qgc_device_facts dv = *devs[di];
        dv.tune.norm = nm;
        const qgc_device_facts *dev = &dv;
        const int64_t n = 37, k = tu_whole_blocks(_i, k0), m = 6;
        rng r = {500 + (uint64_t)k0 + (uint64_t)dev->sms};
        tu_weight w;
        tu_weight_make(&r, DIST_NORMAL, F.f, F.group, n, k, &w);
        HostLayout h;
        make_layout(w.desc, F.id, h);
        std::vector<float> xf((size_t)(m * k)), gf((size_t)k);
        fill_random(&r, DIST_NORMAL, xf.data(), xf.size());
        for (int64_t a = 0; a < m; a++) /* rows 1 and 4: all positive */
          if (a % 3 == 1)
            for (int64_t i = 0; i < k; i++) xf[(size_t)(a * k + i)] = fabsf(xf[(size_t)(a * k + i)]);
        for (int64_t i = 0; i < k; i++) {
          const float u = ldexpf((float)(0.5 + rng_uniform(&r)), gexp[di]);
          gf[(size_t)i] = i % 7 == 0 ? 0.0f : i % 3 == 0 ? -u : u;
        }
        void *x = tu_convert(xf.data(), xf.size(), QGEMV_BF16), *gamma = tu_convert(gf.data(), gf.size(), QGEMV_BF16);
        std::vector<float> y((size_t)(m * n)), y1((size_t)n);
        qg_matvec_args a = args_on(h, m, x, QGEMV_BF16, y.data(), QGEMV_F32, gamma, QGEMV_BF16);
        emulate_matvec(h, a, *dev);
        char where[256];
        const double worst = tu_check_contract(&w.desc, m, QGEMV_BF16, x, QGEMV_BF16, gamma, 1e-5f, QGEMV_F32, y.data(),
                                               where, sizeof where);
        EXPECT(worst <= 1.0, "%s k=%lld sms=%d: worst %.3g of the bound at %s", F.name, (long long)k, dev->sms,
                      worst, where);
        for (int64_t row = 0; row < m; row++) {
          a.m = 1;
          a.x = static_cast<const uint16_t *>(x) + row * k;
          a.y = y1.data();
          emulate_matvec(h, a, *dev);
          EXPECT(memcmp(y1.data(), &y[(size_t)(row * n)], (size_t)n * 4) == 0,
                 "%s k=%lld sms=%d: row %lld differs from m = 1", F.name, (long long)k, dev->sms, (long long)row);
        }
        free(x);
        free(gamma);
        tu_weight_free(&w);
      }
  for (int i = 0; i < 3; i++) {
    EXPECT(dg_launches[i] > before[i], "%s: no kDG launch of kind %d (all of k, phases, per warp)", F.name, i);
    EXPECT(b2_launches[i] > before_b2[i], "%s: no kB2 launch of kind %d (all of k, phases, per warp)", F.name, i);
  }
}
END_TEST

/* Which weights take kB2 for the norm (qgc_norm_b2, DESIGN.md section 6):
 * uploaded for m = 1 with 3.5 tiles an SM or more (on 132 SMs 462 tiles:
 * 7392 rows and up; on GB10's 48, 168: 2688), any weight under norm=b2,
 * none under norm=dg. */
START_TEST(test_norm_b2_rule) {
  const Format F = format_at(_i);
  if (F.f == QGEMV_NF4) return;
  qgc_device_facts b2 = kH200, dg = kH200;
  b2.tune.norm = QGC_NORM_B2;
  dg.tune.norm = QGC_NORM_DG;
  for (int64_t n : {(int64_t)4096, (int64_t)7376, (int64_t)7392, (int64_t)8192, (int64_t)28672})
    for (int m1 = 0; m1 < 2; m1++) {
      tu_weight w;
      rng r = {7 + (uint64_t)n};
      tu_weight_make(&r, DIST_NORMAL, F.f, F.group, n, tu_whole_blocks(_i, 256), &w);
      HostLayout h;
      make_layout(w.desc, F.id, h);
      h.L.for_m1 = m1 != 0;
      const bool want = m1 && n >= 7392; /* 2 x 462 tiles >= 7 x 132 */
      ck_assert_msg(qgc_norm_b2(&h.L, kH200) == want, "%s n=%lld for_m1=%d", F.name,
                    (long long)n, m1);
      ck_assert(qgc_norm_b2(&h.L, b2));
      ck_assert(!qgc_norm_b2(&h.L, dg));
      ck_assert_msg(qgc_norm_b2(&h.L, kGB10) == (m1 && n >= 2688), "%s n=%lld GB10", F.name,
                    (long long)n); /* 2 x 168 tiles >= 7 x 48 */
      tu_weight_free(&w);
    }
}
END_TEST

/* Q2_0's integer mma on blocks its digits cannot hold, next to ones they
 * hold exactly: each scale block of each activation row is one of
 * normal; 2^-30 below one element of 1 (flagged: the bf16 fallback); one
 * element 2^-30 below the rest (flagged); all under 2^-96 (flagged);
 * zero; one element 21 binades below the largest's (held exactly).
 * Checked against the contract, and batched rows against m = 1. */
START_TEST(test_i4_blocks) {
  const Format F = format_at(_i);
  if (F.f == QGEMV_NF4) return;
  const int64_t n = 70, k = tu_whole_blocks(_i, 1536), m = 5, bk = F.group;
  rng r = {41 + (uint64_t)_i};
  tu_weight w;
  tu_weight_make(&r, DIST_NORMAL, F.f, F.group, n, k, &w);
  HostLayout h;
  make_layout(w.desc, F.id, h);
  std::vector<float> xf((size_t)(m * k));
  fill_random(&r, DIST_NORMAL, xf.data(), xf.size());
  int kinds[6] = {0, 0, 0, 0, 0, 0};
  for (int64_t a = 0; a < m; a++)
    for (int64_t b = 0; b < k / bk; b++) {
      float *blk = &xf[(size_t)(a * k + b * bk)];
      const int kind = (int)((a * 7 + b) % 6);
      kinds[kind]++;
      const int j = (int)((a * 13 + b * 5) % bk);
      switch (kind) {
        case 1:
          for (int64_t i = 0; i < bk; i++) blk[i] = ldexpf(blk[i], -30);
          blk[j] = 1.0f;
          break;
        case 2: blk[j] = ldexpf(1.0f, -28); blk[(j + 1) % bk] = 4.0f; break;
        case 3:
          for (int64_t i = 0; i < bk; i++) blk[i] = ldexpf(blk[i], -100);
          break;
        case 4:
          for (int64_t i = 0; i < bk; i++) blk[i] = 0.0f;
          break;
        case 5:
          for (int64_t i = 0; i < bk; i++) blk[i] = fminf(fabsf(blk[i]), 1.5f);
          blk[j] = 1.96875f, blk[(j + 1) % bk] = -ldexpf(1.0f, -20);
          break;
        default: break;
      }
    }
  void *x = tu_convert(xf.data(), xf.size(), QGEMV_BF16);
  std::vector<float> y((size_t)(m * n)), y1((size_t)n);
  qg_matvec_args a = args_on(h, m, x, QGEMV_BF16, y.data(), QGEMV_F32);
  ck_assert_int_eq(qgc_make_plan(&h.L, &a, kH200Int).kc.xm, kI4);
  emulate_matvec(h, a, kH200Int);
  char where[256];
  const double worst =
      tu_check_contract(&w.desc, m, QGEMV_BF16, x, QGEMV_F32, nullptr, 1e-5f, QGEMV_F32, y.data(), where, sizeof where);
  EXPECT(worst <= 1.0, "%s: worst %.3g of the bound at %s", F.name, worst, where);
  for (int64_t row = 0; row < m; row++) {
    a.m = 1;
    a.x = static_cast<const uint16_t *>(x) + row * k;
    a.y = y1.data();
    emulate_matvec(h, a, kH200Int);
    EXPECT(memcmp(y1.data(), &y[(size_t)(row * n)], (size_t)n * 4) == 0, "%s: row %lld differs from m = 1",
                  F.name, (long long)row);
  }
  for (int kind = 0; kind < 6; kind++) ck_assert_int_gt(kinds[kind], 0);
  free(x);
  tu_weight_free(&w);
}
END_TEST

/* Large magnitudes and tiny ones through the staging. */
START_TEST(test_magnitudes) {
  for (int d = 0; d < DIST_COUNT; d++)
    for (int fi = 0; fi < qgemv_format_count(); fi++) {
      Case c = {fi, 40, tu_whole_blocks(fi, 640), 2, QGEMV_F32, QGEMV_F32, d % 2 == 1, QGEMV_F32, &kH200, (dist_kind)d};
      run_case(c, 900 + (uint64_t)d);
    }
}
END_TEST

/* The staging's terms in turn (b3_next and, for finite values,
 * stage_next_b3_finite: B per CTA) give the bits of b3_term (B per warp)
 * for every f32 pattern class: zeros, subnormals,
 * normals of every width, the largest, infinities and NaNs. */
START_TEST(test_b3_next) {
  std::vector<uint32_t> bits = {0u, 0x80000000u, 1u, 0x807fffffu, 0x00800000u, 0x3f800000u, 0xbf800001u,
                                0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u,
                                0xffffffffu, 0x4b7fffffu, 0x33ffffffu};
  uint64_t z = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 200000; i++) {
    z ^= z << 13, z ^= z >> 7, z ^= z << 17;
    bits.push_back((uint32_t)(z >> 11));
  }
  for (uint32_t b : bits) {
    const float v0 = bits_f32(b);
    float v = v0;
    for (int j = 0; j < 3; j++) {
      const uint32_t got = b3_next(v), want = b3_term(v0, j);
      EXPECT(got == want, "f32 0x%08x term %d: b3_next 0x%04x, b3_term 0x%04x", b, j, got, want);
    }
  }
  /* The untested path (warps whose values are all finite): 16 values a
   * lane, each pair packed into one word, the same bits; b3_all_finite
   * tells the lanes apart. */
  for (size_t i = 0; i + 16 <= bits.size(); i += 16) {
    float v[1][16], v0[16];
    bool finite = true;
    for (int e = 0; e < 16; e++) {
      v[0][e] = v0[e] = bits_f32(bits[i + e]);
      finite = finite && (bits[i + e] & 0x7f800000u) != 0x7f800000u;
    }
    EXPECT(b3_all_finite<1>(v) == finite, "values %zu..: b3_all_finite %d, expected %d", i, !finite, finite);
    if (!finite) continue;
    for (int j = 0; j < 3; j++) {
      uint32_t w[1][8];
      stage_next_b3_finite<1>(v, w);
      for (int e = 0; e < 16; e++) {
        const uint32_t got = (w[0][e / 2] >> (16 * (e % 2))) & 0xffffu, want = b3_term(v0[e], j);
        EXPECT(got == want, "f32 0x%08x term %d: stage_next_b3_finite 0x%04x, b3_term 0x%04x", bits[i + e], j,
                      got, want);
      }
    }
  }
}
END_TEST

/* A bf16 x times a bf16 gamma leaves kB3's third term zero (+0 or, for a
 * negative product under 2^-126, -0) for every pair of bit-pattern
 * classes, so two terms (kB2) carry the whole product: zeros, subnormals,
 * normals, the extremes, infinities and NaNs. */
/* stage_load's LF orders (every load before any conversion, or those of
 * each 64-k part) give the same values, largest magnitude and sum of
 * squares as the order that converts each load as it comes, bit for bit
 * (a NaN's payload aside: the host keeps one operand's, which the
 * compiler may swap; the GPU's is canonical): f32 and bf16 x, no gamma,
 * f32 and bf16 gamma, one and two 64-k parts, values of every class. */
static bool same_f32(float a, float b) { return f32_bits(a) == f32_bits(b) || (a != a && b != b); }
template <int QB, int LF>
static void check_stage_load_lf(uint64_t seed) {
  uint64_t z = seed;
  auto next = [&]() {
    z ^= z << 13, z ^= z >> 7, z ^= z << 17;
    return (uint32_t)(z >> 11);
  };
  const uint32_t special[] = {0u, 0x80000000u, 1u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f7fffffu, 0x00800000u};
  for (int rep = 0; rep < 2000; rep++) {
    alignas(16) uint32_t x32[64 * QB], g32[64 * QB];
    alignas(16) uint16_t x16[64 * QB], g16[64 * QB];
    for (int i = 0; i < 64 * QB; i++) {
      const uint32_t a = rep % 7 == 0 && i % 11 == 3 ? special[next() % 8] : next();
      const uint32_t b = rep % 5 == 0 && i % 13 == 5 ? special[next() % 8] : next();
      x32[i] = a, g32[i] = b, x16[i] = (uint16_t)(a >> 16), g16[i] = (uint16_t)(b >> 16);
    }
    for (int xb = 0; xb < 2; xb++)
      for (int gm = 0; gm < 3; gm++) {
        const void *gp = gm == 0 ? nullptr : gm == 1 ? (const void *)g32 : (const void *)g16;
        const XSrc src = {gp, xb == 1, true, gm == 2, true};
        const void *row = xb ? (const void *)x16 : (const void *)x32;
        const int t = rep % 4;
        float va[QB][16], vb[QB][16], sa = 0.25f, sb = 0.25f;
        const float aa = stage_load<QB, 0>(row, src, 16 * t, va, &sa);
        const float ab = stage_load<QB, LF>(row, src, 16 * t, vb, &sb);
        EXPECT(same_f32(aa, ab) && same_f32(sa, sb),
               "QB %d rep %d x %s gamma %d: amax 0x%08x / 0x%08x, squares 0x%08x / 0x%08x", QB, rep,
               xb ? "bf16" : "f32", gm, f32_bits(aa), f32_bits(ab), f32_bits(sa), f32_bits(sb));
        for (int q = 0; q < QB; q++)
          for (int j = 0; j < 16; j++)
            EXPECT(same_f32(va[q][j], vb[q][j]), "QB %d rep %d x %s gamma %d value %d.%d: 0x%08x / 0x%08x",
                   QB, rep, xb ? "bf16" : "f32", gm, q, j, f32_bits(va[q][j]), f32_bits(vb[q][j]));
      }
  }
}

START_TEST(test_stage_load_lf) {
  check_stage_load_lf<1, 1>(0x243f6a8885a308d3ull);
  check_stage_load_lf<2, 1>(0x13198a2e03707344ull);
  check_stage_load_lf<1, 2>(0xa4093822299f31d0ull);
  check_stage_load_lf<2, 2>(0x082efa98ec4e6c89ull);
}
END_TEST

START_TEST(test_b2_product) {
  std::vector<uint16_t> h = {0x0000, 0x8000, 0x0001, 0x807f, 0x0080, 0x3f80, 0xbf81, 0x7f7f, 0xff7f, 0x7f80,
                             0xff80, 0x7fc0, 0x0f80, 0x1fff, 0x6000, 0x2000};
  uint64_t z = 0x243f6a8885a308d3ull;
  for (int i = 0; i < 4000; i++) {
    z ^= z << 13, z ^= z >> 7, z ^= z << 17;
    h.push_back((uint16_t)(z >> 40));
  }
  for (uint16_t a : h)
    for (size_t j = 0; j < h.size(); j += 7) {
      const float v = bits_f32((uint32_t)a << 16) * bits_f32((uint32_t)h[j] << 16);
      EXPECT((b3_term(v, 2) & 0x7fffu) == 0u, "bf16 0x%04x x 0x%04x: third term 0x%04x", a, h[j],
                    b3_term(v, 2));
    }
}
END_TEST

/* NF4's two fp16 terms of an infinite value: the first term is that
 * infinity, the second the same infinity (so that their products add to
 * the infinity IEEE gives), never NaN; a NaN stays NaN in both. */
START_TEST(test_pack_nonfinite) {
  const float vals[3] = {INFINITY, -INFINITY, NAN};
  for (int c = 0; c < 3; c++) {
    float v[1][16];
    for (int j = 0; j < 16; j++) v[0][j] = 0.25f * (float)(j - 7);
    v[0][5] = vals[c];
    const float amax = fabsf(vals[c]);
    for (int split = 0; split < 2; split++) {
      uint32_t w[1][8];
      stage_pack<2, 1>(v, amax, split, w);
      const float t = half_bits_f32(w[0][2] >> 16); /* element 5 */
      if (c < 2)
        EXPECT(t == vals[c], "%g, term %d: %g", (double)vals[c], split, (double)t);
      else
        EXPECT(isnan(t), "NaN, term %d: %g", split, (double)t);
    }
  }
}
END_TEST

/* The table's two terms: hi + lo within 1.1e-7 of each value, and for
 * every value but 0 both terms nonzero and of its sign (an infinite
 * activation then gives y the infinity IEEE gives, not 0 x inf). */
START_TEST(test_nf4_table_terms) {
  for (int c = 0; c < 16; c++) {
    const uint2 e = nf4_lut_entry(c | c << 4);
    const float v = nf4_value(c), hi = half_bits_f32(e.x), lo = half_bits_f32(e.y);
    EXPECT(fabs((double)hi + lo - v) <= 1.1e-7 * fabs(v), "code %d: %.9g + %.9g against %.9g", c, (double)hi,
                  (double)lo, (double)v);
    if (v != 0.0f)
      EXPECT(hi != 0.0f && lo != 0.0f && (hi > 0) == (v > 0) && (lo > 0) == (v > 0),
                    "code %d (%.9g): hi %.9g, lo %.9g", c, (double)v, (double)hi, (double)lo);
  }
}
END_TEST

/* The table in registers (nf4_prmt2, the lookups of QGC_NF4_PRMT_STEPS)
 * gives the shared table's entries for every pair of code bytes. */
START_TEST(test_nf4_planes) {
  uint32_t pl[16];
  nf4_planes(pl);
  for (uint32_t s = 0; s < 65536; s++) {
    uint32_t a[4];
    nf4_prmt2(pl, s | 0xabcd0000u, a); /* bits above the two bytes are ignored */
    const uint2 e0 = nf4_lut_entry((int)(s & 0xff)), e1 = nf4_lut_entry((int)(s >> 8));
    EXPECT(a[0] == e0.x && a[1] == e0.y && a[2] == e1.x && a[3] == e1.y,
                  "bytes 0x%04x: planes %08x %08x %08x %08x, table %08x %08x %08x %08x", s, a[0], a[1], a[2], a[3],
                  e0.x, e0.y, e1.x, e1.y);
  }
}
END_TEST

}  // namespace

/* test_cuda_layout --plan N K M DTYPE [norm] [h200|gb10]: the plan's
 * launch per format for that call on a weight uploaded for m = M (as
 * `qgemv bench --m M` uploads it), under QGEMV_CUDA_PLAN if set, printed;
 * no tests run (bench/NOTES.md reads which kernel a timed case ran
 * through it). */
int print_plans(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s --plan N K M f32|bf16 [norm] [h200|gb10]\n", argv[0]);
    return EXIT_FAILURE;
  }
  const int64_t n = atoll(argv[2]), k = atoll(argv[3]), m = atoll(argv[4]);
  const bool bf16 = strcmp(argv[5], "bf16") == 0;
  bool norm = false;
  const qgc_device_facts *dev = &kH200;
  for (int i = 6; i < argc; i++) {
    if (strcmp(argv[i], "norm") == 0) norm = true;
    else if (strcmp(argv[i], "gb10") == 0) dev = &kGB10;
    else if (strcmp(argv[i], "h200") != 0) {
      fprintf(stderr, "%s: unknown word '%s'\n", argv[0], argv[i]);
      return EXIT_FAILURE;
    }
  }
  if (n < 16 || k < 64 || m < 1 || (!bf16 && strcmp(argv[5], "f32") != 0)) {
    fprintf(stderr, "%s: N >= 16, K >= 64, M >= 1 and f32 or bf16, please\n", argv[0]);
    return EXIT_FAILURE;
  }
  qgc_device_facts facts = *dev; /* with QGEMV_CUDA_PLAN's override, as the backend reads it */
  const char *tune = getenv("QGEMV_CUDA_PLAN");
  char err[256];
  if (tune != NULL && !qgc_plan_tune_parse(tune, &facts.tune, err, sizeof err)) {
    fprintf(stderr, "%s: QGEMV_CUDA_PLAN: %s\n", argv[0], err);
    return EXIT_FAILURE;
  }
  static const char *const xmode[] = {"direct", "S1", "S2", "B3", "I4", "DG", "B2"};
  static const float gamma_stub = 1.0f; /* the plan reads only whether there is one */
  printf("format n k m x norm: xm ng t b phases ks warps ctas smem rows\n");
  for (int fi = 0; fi < QG_LAYOUT_COUNT; fi++) {
    qgemv_format_info info; /* not format_at: no Check calls outside a test */
    if (qgemv_format_get(fi, &info) != QGEMV_OK) return EXIT_FAILURE;
    const Format F{(qg_layout_id)fi, info.format, info.group, info.name};
    PlanCall c;
    plan_call(F, n, k, m, bf16 ? QGEMV_BF16 : QGEMV_F32, c);
    c.L.for_m1 = m == 1;
    if (norm) c.a.gamma = &gamma_stub, c.a.gamma_dtype = c.a.x_dtype;
    const qgc_plan pl = qgc_make_plan(&c.L, &c.a, facts);
    if (!pl.fits) {
      printf("%s %lld %lld %lld %s %d: does not fit\n", F.name, (long long)n, (long long)k, (long long)m, argv[5], norm);
      continue;
    }
    printf("%s %lld %lld %lld %s %d: %s %d %d %s %d %d %u %u %zu %d\n", F.name, (long long)n, (long long)k,
           (long long)m, argv[5], norm, pl.kc.xm >= 0 && pl.kc.xm < 7 ? xmode[pl.kc.xm] : "?", pl.kc.ng, pl.kc.t,
           pl.kc.bs ? "cta" : "warp", pl.phases, pl.KS, pl.kc.block / 32, pl.kc.grid, pl.kc.smem, pl.rows);
  }
  return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--plan") == 0) return print_plans(argc, argv);
  if (qgemv_format_count() != QG_LAYOUT_COUNT) {
    fprintf(stderr, "the library lists %d formats, the module's headers %d layouts\n", qgemv_format_count(),
            (int)QG_LAYOUT_COUNT);
    return EXIT_FAILURE;
  }
  quick = tu_quick();
  Suite *s = suite_create("cuda_layout");
  TCase *tc = tcase_create("emulated");
  tcase_set_timeout(tc, 900);
  tcase_add_loop_test(tc, test_every_combination, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_geometries, 0, QG_LAYOUT_COUNT);
  tcase_add_test(tc, test_div_magic);
  tcase_add_loop_test(tc, test_plan, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_plan_tune, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_batched_rows, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_nf4_two_tiles_8_warps, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_ks2_fill, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_wave_fit, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_i4_blocks, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_gamma_in_a, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_norm_b2_rule, 0, QG_LAYOUT_COUNT);
  tcase_add_test(tc, test_magnitudes);
  tcase_add_test(tc, test_b3_next);
  tcase_add_test(tc, test_stage_load_lf);
  tcase_add_test(tc, test_b2_product);
  tcase_add_test(tc, test_pack_nonfinite);
  tcase_add_test(tc, test_nf4_table_terms);
  tcase_add_test(tc, test_nf4_planes);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
