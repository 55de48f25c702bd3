/* Host emulation of the lab kernel's dataflow (no GPU): the same layout
 * bytes (repack), the same decode and B-staging functions, the mma by its
 * PTX fragment definition (in double), the same epilogue and slice-order
 * combine, checked against the double reference under the contract. It
 * proves the layout, the k permutation, the fragment maps and the index
 * arithmetic of the epilogue and combine; the GPU run then measures.
 * Exit status 0 when every case passes. */
#include <math.h>
#include <stdio.h>

#include <vector>

#include "decode.cuh"
#include "host_data.h"
#include "layout.h"
#include "stage.cuh"

using namespace lab;

namespace {

/* The 256-byte-row NF4 table (entry v of lane l at byte 256 v + 4 l). */
const uint32_t *lut256() {
  static uint32_t t[256 * 64];
  static bool init = false;
  if (!init) {
    for (int i = 0; i < kLutWords; ++i) t[(i >> 5) * 64 + (i & 31)] = nf4_lut_entry(i >> 5);
    init = true;
  }
  return t;
}

/* The kernel's chunk consumption for one (tile, slice), all 32 lanes. */
template <int FMT, int XM, int NG, int LUT>
void emulate_warp(const std::vector<uint8_t> &lay, const Weight &w, const Acts &x, int64_t m, bool norm,
                  int64_t tile, int c0, int c1, const uint32_t *lut, float (&acc)[32][NG][4], float (&ss)[32][NG]) {
  constexpr int CH = fmt_chunk_bytes(FMT), KC = fmt_kc(FMT), BK = fmt_bk(FMT), QB = BK / 64, NEB = KC / BK;
  constexpr int SPL = xmode_splits(XM), SRB = fmt_scale_row_bytes(FMT);
  const int64_t nch = w.k / KC, k = w.k, ncols = m * SPL;
  for (int c = c0; c < c1; ++c) {
    const uint8_t *cb = &lay[(size_t)(tile * nch + c) * CH];
    for (int eb = 0; eb < NEB; ++eb) {
      const int64_t kb = (int64_t)c * KC + eb * BK;
      static uint32_t bw[32][NG][QB][8];
      float pc[32][NG], p0[32][NG], p1[32][NG];
      for (int G = 0; G < NG; ++G) {
        float v[32][QB][16], amax[32], qb[32];
        for (int lane = 0; lane < 32; ++lane) {
          const int g = lane >> 2, t = lane & 3, col = 8 * G + g;
          const int64_t e0 = kb + 16 * t;
          amax[lane] = 0.0f;
          if (XM == kDirect) {
            if (col < m)
              stage_direct<QB>(&x.xbits[(size_t)(col * k * 2)], e0, bw[lane][G]);
            else
              for (int q = 0; q < QB; ++q)
                for (int i = 0; i < 8; ++i) bw[lane][G][q][i] = 0;
            pc[lane][G] = 1.0f;
            continue;
          }
          qb[lane] = 0.0f;
          if (col < ncols) {
            const int a = col / SPL;
            amax[lane] = stage_load<QB>(&x.xbits[(size_t)(a * k * (x.bf16 ? 2 : 4))], norm ? x.gbits.data() : nullptr,
                                        x.bf16, x.bf16, e0, v[lane], &qb[lane]);
          } else {
            for (int q = 0; q < QB; ++q)
              for (int j = 0; j < 16; ++j) v[lane][q][j] = 0.0f;
          }
        }
        if (XM != kDirect && norm) /* the block's sum (quad: xor 1, then xor 2), then block order */
          for (int lane = 0; lane < 32; ++lane) {
            const int base = lane & ~3;
            ss[lane][G] += (qb[base] + qb[base + 1]) + (qb[base + 2] + qb[base + 3]);
          }
        if (XM == kB3)
          for (int lane = 0; lane < 32; ++lane) {
            stage_pack_b3<QB>(v[lane], (8 * G + (lane >> 2)) % SPL, bw[lane][G]);
            pc[lane][G] = 1.0f;
          }
        else if (XM != kDirect)
          for (int lane = 0; lane < 32; ++lane) {
            const int base = lane & ~3, col = 8 * G + (lane >> 2);
            const float am = fmaxf(fmaxf(amax[base], amax[base + 1]), fmaxf(amax[base + 2], amax[base + 3]));
            pc[lane][G] = stage_pack<SPL, QB>(v[lane], am, col % SPL, bw[lane][G]);
          }
        for (int lane = 0; lane < 32; ++lane) {
          const int t = lane & 3;
          p0[lane][G] = pc[8 * t][G];
          p1[lane][G] = pc[8 * t + 4][G];
        }
      }
      /* per tile: the block's steps, the mma by definition */
      double D[NG][16][8] = {};
      for (int q = 0; q < QB; ++q) {
        const int blk = eb * QB + q;
        for (int s = 0; s < 4; ++s) {
          double A[16][16], B[NG][16][8];
          for (int lane = 0; lane < 32; ++lane) {
            const int g = lane >> 2, t = lane & 3;
            uint32_t a[4], al[4] = {0, 0, 0, 0};
            if (FMT == kNF4 && LUT == 2) {
              static uint2 lut2[kLut2Entries];
              for (int i = 0; i < kLut2Entries; ++i) lut2[i] = nf4_lut2_entry(i >> 4);
              uint4 u;
              memcpy(&u, cb + blk * 512 + lane * 16, 16);
              const uint32_t lane8 = 8u * (lane & 15);
              if (s == 0) nf4_frag2<0>(lut2, lane8, u, a, al);
              if (s == 1) nf4_frag2<1>(lut2, lane8, u, a, al);
              if (s == 2) nf4_frag2<2>(lut2, lane8, u, a, al);
              if (s == 3) nf4_frag2<3>(lut2, lane8, u, a, al);
            } else if (FMT == kNF4) {
              uint4 u;
              memcpy(&u, cb + blk * 512 + lane * 16, 16);
              if (s == 0) nf4_frag<0>(lut, 4u * lane, u, a);
              if (s == 1) nf4_frag<1>(lut, 4u * lane, u, a);
              if (s == 2) nf4_frag<2>(lut, 4u * lane, u, a);
              if (s == 3) nf4_frag<3>(lut, 4u * lane, u, a);
              uint32_t a2[4]; /* the 256-byte-row table gives the same fragment */
              if (s == 0) nf4_frag<0, 1>(lut256(), 4u * lane, u, a2);
              if (s == 1) nf4_frag<1, 1>(lut256(), 4u * lane, u, a2);
              if (s == 2) nf4_frag<2, 1>(lut256(), 4u * lane, u, a2);
              if (s == 3) nf4_frag<3, 1>(lut256(), 4u * lane, u, a2);
              if (memcmp(a, a2, sizeof a) != 0) {
                fprintf(stderr, "LUT256 fragment differs (lane %d step %d)\n", lane, s);
                exit(1);
              }
            } else {
              uint4 u;
              memcpy(&u, cb + (blk >> 1) * 512 + lane * 16, 16);
              const uint32_t wg = (blk & 1) ? u.z : u.x, wh = (blk & 1) ? u.w : u.y;
              if (s == 0) q2_frag<xmode_bf16(XM), 0>(wg, wh, a);
              if (s == 1) q2_frag<xmode_bf16(XM), 1>(wg, wh, a);
              if (s == 2) q2_frag<xmode_bf16(XM), 2>(wg, wh, a);
              if (s == 3) q2_frag<xmode_bf16(XM), 3>(wg, wh, a);
            }
            auto hv = [&](uint32_t r, int h) {
              return xmode_bf16(XM) ? (double)bf16_bits_f32(r >> (16 * h)) : (double)half_bits_f32(r >> (16 * h));
            };
            for (int h = 0; h < 2; ++h) {
              if (LUT == 2) { /* row-split: a = row g (hi, lo), al = row g + 8; D rows summed */
                A[g][2 * t + h] = hv(a[0], h) + hv(a[1], h);
                A[g + 8][2 * t + h] = hv(al[0], h) + hv(al[1], h);
                A[g][2 * t + 8 + h] = hv(a[2], h) + hv(a[3], h);
                A[g + 8][2 * t + 8 + h] = hv(al[2], h) + hv(al[3], h);
              } else {
                A[g][2 * t + h] = hv(a[0], h);
                A[g + 8][2 * t + h] = hv(a[1], h);
                A[g][2 * t + 8 + h] = hv(a[2], h);
                A[g + 8][2 * t + 8 + h] = hv(a[3], h);
              }
              for (int G = 0; G < NG; ++G) {
                B[G][2 * t + h][g] = hv(bw[lane][G][q][2 * s], h);
                B[G][2 * t + 8 + h][g] = hv(bw[lane][G][q][2 * s + 1], h);
              }
            }
          }
          /* A must be the dequantized codes (without scale) at the permuted k */
          for (int r = 0; r < 16; ++r)
            for (int slot = 0; slot < 16; ++slot) {
              const int t = (slot % 8) / 2, h = slot % 2, hi = slot / 8;
              const int64_t kk = (int64_t)c * KC + blk * 64 + 16 * t + 4 * s + 2 * hi + h;
              const int code = w.code(tile * 16 + r, kk);
              const float nv = nf4_value(code), hv16 = half_bits_f32(f32_to_half_bits(nv));
              const double want = FMT != kNF4 ? code - 1
                                  : LUT == 2  ? (double)hv16 + (double)half_bits_f32(f32_to_half_bits(nv - hv16))
                                              : (double)hv16;
              if (A[r][slot] != want) {
                fprintf(stderr, "A mismatch fmt %d tile %lld chunk %d blk %d step %d row %d slot %d: %g vs %g\n", FMT,
                        (long long)tile, c, blk, s, r, slot, A[r][slot], want);
                exit(1);
              }
            }
          for (int G = 0; G < NG; ++G)
            for (int r = 0; r < 16; ++r)
              for (int cc = 0; cc < 8; ++cc)
                for (int kk = 0; kk < 16; ++kk) D[G][r][cc] += A[r][kk] * B[G][kk][cc];
        }
      }
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        uint4 sg = {0, 0, 0, 0}, sh = {0, 0, 0, 0};
        memcpy(&sg, cb + kChunkCodeBytes + g * SRB, SRB);
        memcpy(&sh, cb + kChunkCodeBytes + (g + 8) * SRB, SRB);
        const float sgf = chunk_scale<FMT>(sg, eb), shf = chunk_scale<FMT>(sh, eb);
        for (int G = 0; G < NG; ++G) {
          const float cv[4] = {(float)D[G][g][2 * t], (float)D[G][g][2 * t + 1], (float)D[G][g + 8][2 * t],
                               (float)D[G][g + 8][2 * t + 1]};
          acc[lane][G][0] = fmaf(cv[0], sgf * p0[lane][G], acc[lane][G][0]);
          acc[lane][G][1] = fmaf(cv[1], sgf * p1[lane][G], acc[lane][G][1]);
          acc[lane][G][2] = fmaf(cv[2], shf * p0[lane][G], acc[lane][G][2]);
          acc[lane][G][3] = fmaf(cv[3], shf * p1[lane][G], acc[lane][G][3]);
        }
      }
    }
  }
}

/* expect: whether the contract check should pass (false for the cases
 * that show a limit: the one-term table on correlated inputs). */
template <int FMT, int XM, int NG, int LUT = 0>
bool run_case(int64_t n, int64_t k, int64_t m, bool norm, int pattern, int KS, bool corr = false, bool expect = true) {
  constexpr int SPL = xmode_splits(XM), KC = fmt_kc(FMT);
  const bool bf16 = XM == kS1 || XM == kDirect ? true : (pattern == kNormal || corr ? false : (m % 2 == 1));
  const Weight w = corr ? make_weight_corr(FMT, n, k, 1234 + FMT) : make_weight(FMT, n, k, 1234 + FMT);
  const std::vector<uint8_t> lay = repack(w);
  const Acts x = make_acts(m, k, bf16, pattern, 99 + m + pattern);
  static uint32_t lut[kLutWords];
  for (int i = 0; i < kLutWords; ++i) lut[i] = nf4_lut_entry(i >> 5);
  const int64_t nch = k / KC;
  std::vector<float> y((size_t)(m * n), NAN);
  for (int64_t tile = 0; tile < n / 16; ++tile) {
    static float part[16][32][NG][4], ssp[16][32][NG];
    for (int s = 0; s < KS; ++s) {
      for (int l = 0; l < 32; ++l)
        for (int G = 0; G < NG; ++G) {
          ssp[s][l][G] = 0.0f;
          for (int j = 0; j < 4; ++j) part[s][l][G][j] = 0.0f;
        }
      const int c0 = (int)(s * nch / KS), c1 = (int)((s + 1) * nch / KS);
      emulate_warp<FMT, XM, NG, LUT>(lay, w, x, m, norm, tile, c0, c1, lut, part[s], ssp[s]);
    }
    /* the kernel's combine (ssb: lanes t = 0 after the quad sum) */
    for (int a = 0; a < m; ++a)
      for (int r = 0; r < 16; ++r) {
        float tot = 0.0f;
        for (int sp = 0; sp < SPL; ++sp) {
          const int col = a * SPL + sp, cg = col >> 3, j = col & 7;
          const int ln = (r & 7) * 4 + (j >> 1), ri = (r >> 3) * 2 + (j & 1);
          float v = 0.0f;
          for (int s = 0; s < KS; ++s) v = s == 0 ? part[s][ln][cg][ri] : v + part[s][ln][cg][ri];
          tot = sp == 0 ? v : tot + v;
        }
        if (norm) {
          const int col = a * SPL, cg = col >> 3, gq = col & 7;
          float q = 0.0f;
          for (int s = 0; s < KS; ++s) {
            const float e = ssp[s][4 * gq][cg];
            q = s == 0 ? e : q + e;
          }
          tot *= 1.0f / sqrtf(q * (1.0f / (float)k) + 1e-5f);
        }
        y[(size_t)(a * n + tile * 16 + r)] = tot;
      }
  }
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < n; ++r) rows.push_back(r);
  const Ref ref = reference(w, x, m, norm, 1e-5f, rows);
  const Check ck = check(ref, y.data(), m, n, false);
  printf("fmt %d xmode %d NG %d lut %d  n %lld k %lld m %lld norm %d pattern %d KS %d%s: %s (worst %.3g of tolerance, "
         "%lld fails)%s\n",
         FMT, XM, NG, LUT, (long long)n, (long long)k, (long long)m, norm, pattern, KS, corr ? " corr" : "",
         ck.pass ? "pass" : "FAIL", ck.worst, (long long)ck.fails, ck.pass == expect ? "" : "  <-- UNEXPECTED");
  return ck.pass == expect;
}

}  // namespace

int main() {
  bool ok = true;
  const int64_t n = 64, k = 1024;
  for (int pattern = 0; pattern < 2; ++pattern) {
    ok &= run_case<kNF4, kS2, 1>(n, k, 1, false, pattern, 2);
    ok &= run_case<kNF4, kS1, 1>(n, k, 1, false, pattern, 3);
    ok &= run_case<kNF4, kS1, 2>(n, k, 11, false, pattern, 1);
    ok &= run_case<kNF4, kS2, 2>(n, k, 8, true, pattern, 2);
    ok &= run_case<kNF4, kS2, 4>(n, k, 13, false, pattern, 4);
    ok &= run_case<kQ2G64, kDirect, 1>(n, k, 1, false, pattern, 2);
    ok &= run_case<kQ2G64, kDirect, 2>(n, k, 16, false, pattern, 1);
    ok &= run_case<kQ2G64, kS2, 1>(n, k, 1, true, pattern, 2);
    ok &= run_case<kQ2G64, kS2, 2>(n, k, 7, false, pattern, 2);
    ok &= run_case<kQ2G128, kDirect, 1>(n, k, 5, false, pattern, 2);
    ok &= run_case<kQ2G128, kS2, 1>(n, k, 3, true, pattern, 1);
    ok &= run_case<kQ2G128, kS2, 4>(n, k, 16, false, pattern, 2);
    ok &= run_case<kNF4, kS2, 1, 2>(n, k, 1, false, pattern, 2);
    ok &= run_case<kNF4, kS1, 2, 2>(n, k, 11, false, pattern, 1);
    ok &= run_case<kNF4, kS2, 2, 2>(n, k, 8, true, pattern, 2);
    ok &= run_case<kQ2G64, kB3, 1>(n, k, 1, true, pattern, 2);
    ok &= run_case<kQ2G128, kB3, 3>(n, k, 8, false, pattern, 2);
  }
  /* the extreme range (2^44 within a block): exact only with bf16 terms */
  ok &= run_case<kQ2G64, kB3, 1>(n, k, 1, false, kExtreme, 2);
  ok &= run_case<kQ2G128, kB3, 1>(n, k, 2, true, kExtreme, 2);
  ok &= run_case<kQ2G64, kS2, 1>(n, k, 1, false, kExtreme, 2, false, false);
  ok &= run_case<kNF4, kS2, 1, 2>(n, k, 1, false, kExtreme, 2, false, false);
  /* correlated errors: one code per row, all-positive x: the fp16 table
   * breaks the contract, the two-term table holds it up to k = 65536 */
  for (int64_t kc : {8192, 65536}) {
    ok &= run_case<kNF4, kS2, 1, 0>(32, kc, 1, false, kPositive, 4, true, false);
    ok &= run_case<kNF4, kS1, 1, 0>(32, kc, 1, false, kPositive, 4, true, false);
    ok &= run_case<kNF4, kS2, 1, 2>(32, kc, 1, false, kPositive, 4, true, true);
    ok &= run_case<kNF4, kS1, 1, 2>(32, kc, 1, false, kPositive, 4, true, true);
    ok &= run_case<kQ2G64, kB3, 1>(32, kc, 1, false, kPositive, 4, true, true);
    ok &= run_case<kQ2G64, kS2, 1>(32, kc, 1, false, kPositive, 4, true, true);
  }
  printf(ok ? "emulation: all pass\n" : "emulation: FAILURES\n");
  return ok ? 0 : 1;
}
