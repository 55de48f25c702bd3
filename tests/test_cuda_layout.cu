/* The CUDA module's data paths, emulated on the CPU (no GPU needed): the
 * resident layout (repack.c), the plan (matvec_plan.h) and the kernel's
 * per-lane helpers (load_seg, the A decode, the B staging, the scale
 * accumulation, compiled for the host) driven in the kernel's order, with
 * the tensor-core mma emulated from the PTX fragment layout. Checked
 * against the oracle under the accuracy contract for every format, operand
 * mode, dtype, RMSNorm, tails, m and geometry (k-slices). The GPU suite
 * (test_cuda_backend) then checks the real instructions. QGEMV_TEST_QUICK=1
 * trims the shapes. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

extern "C" {
#include "testutil.h"
}
#include "../src/backend-cuda/matvec_plan.h"

using namespace qgc;

namespace {

bool quick; /* QGEMV_TEST_QUICK=1 (valgrind runs): fewer shapes */

/* The resident image of a weight in host memory. */
struct HostLayout {
  qgc_layout L;
  std::vector<uint8_t> mem;
};

/* d: a weight of layout id with its group set, as the core passes it. */
void make_layout(const qgemv_weight_desc &d, qg_layout_id id, HostLayout &h) {
  qgc_layout &L = h.L;
  L = qgc_layout();
  qgc_layout_shape(&L, &d, id);
  const size_t code_bytes = (size_t)d.n * (size_t)L.row_bytes;
  h.mem.assign(L.bytes, 0xee);
  std::vector<uint8_t> tmp((size_t)L.row_bytes);
  std::vector<uint16_t> rs((size_t)(d.k / d.group));
  qgc_repack_rows(&d, id, 0, d.n, h.mem.data(), reinterpret_cast<char *>(h.mem.data() + code_bytes), tmp.data(),
                  rs.data());
  L.dev = h.mem.data();
  L.codes = h.mem.data();
  L.scales = reinterpret_cast<const char *>(h.mem.data() + code_bytes);
}

/* One m16n8k16 mma over a warp: d += A B from the 32 lanes' fragments
 * (layout in kernels_util.cuh), products summed in double. */
void mma_emul(bool bf16, const uint32_t (&a)[32][4], const uint32_t (&b)[32][8], int s, float (&d)[32][4]) {
  float A[16][16], B[16][8];
  for (int l = 0; l < 32; l++) {
    const int g = l >> 2, t = l & 3;
    for (int h = 0; h < 2; h++) {
      auto v = [&](uint32_t w) { return bf16 ? bf16_at(w, h) : f16_at(w, h); };
      A[g][2 * t + h] = v(a[l][0]);
      A[g + 8][2 * t + h] = v(a[l][1]);
      A[g][2 * t + 8 + h] = v(a[l][2]);
      A[g + 8][2 * t + 8 + h] = v(a[l][3]);
      B[2 * t + h][g] = v(b[l][2 * s]);
      B[2 * t + 8 + h][g] = v(b[l][2 * s + 1]);
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

template <int FMT, bool DIRECT, int SPLITS>
void emulate_launch(const MatvecParams &p, unsigned grid, size_t smem_bytes) {
  constexpr int NG = 2; /* the kernel's NG = 1 runs group 0 alike */
  constexpr int BPS = Fmt<FMT>::kBlocksPerSeg;
  constexpr int U = kSegsPerWarp;
  std::vector<char> smem_v(smem_bytes + 16);
  char *smem = smem_v.data();
  for (unsigned cta = 0; cta < grid; cta++) {
    char *lut = smem;
    char *bbuf = smem + smem_lut_bytes(FMT, DIRECT);
    float *pbuf = reinterpret_cast<float *>(bbuf + (size_t)p.rb_per_round * p.ncols * kColStride);
    const StageSrc src = {p.x, p.gamma, p.k, p.nblk64, p.rb_per_round, p.m_active, p.ncols,
                          p.x_bf16, p.x_vec, p.g_bf16, p.g_vec};
    if (!DIRECT) {
      if (FMT == QG_LAYOUT_NF4)
        for (int v = 0; v < 256; v++)
          for (int l = 0; l < 32; l++) {
            const uint32_t w = nf4_lut_entry(v);
            memcpy(lut + v * 128 + l * 4, &w, 4);
          }
      for (int i = 0; i < p.rb_per_round * kPCols; i++) pbuf[i] = 0.0f;
    }
    std::vector<float> ss(DIRECT ? 1 : (size_t)p.m_active * p.rb_per_round * 4, 0.0f);
    static float acc[kWarps][NG][32][4];
    memset(acc, 0, sizeof acc);
    for (int64_t round = 0; round < p.nrounds; round++) {
      if (!DIRECT) { /* stage_round: 4 lanes per block agree on amax */
        const int units = p.m_active * p.rb_per_round * 4;
        for (int u0 = 0; u0 < units; u0 += 4) {
          const int rb = (u0 >> 2) % p.rb_per_round, slot = (u0 >> 2) / p.rb_per_round;
          const int64_t blk = round * p.rb_per_round + rb;
          if (blk >= p.nblk64) continue;
          float v[4][16], amax = 0.0f;
          for (int t = 0; t < 4; t++) {
            ss[u0 + t] += stage_unit_load(src, slot, blk * 64 + 16 * t, v[t]);
            amax = fmaxf(amax, unit_absmax(v[t]));
          }
          for (int t = 0; t < 4; t++) stage_unit_store<SPLITS>(src, v[t], amax, rb, slot, t, bbuf, pbuf);
        }
      }
      for (int warp = 0; warp < kWarps; warp++) {
        const int ti = warp / p.ks, ks = warp % p.ks;
        const int64_t tile = (int64_t)cta * p.tpc + ti;
        for (int u = 0; u < U; u++) {
          const int64_t seg = round * p.ks * U + ks * U + u;
          if (seg >= p.nseg) continue;
          const int rb0 = (ks * U + u) * BPS;
          SegRegs r[32];
          for (int l = 0; l < 32; l++) {
            const int g = l >> 2, t = l & 3;
            const int64_t rg = std::min(tile * 16 + g, p.n - 1), rh = std::min(tile * 16 + g + 8, p.n - 1);
            r[l] = SegRegs();
            load_seg<FMT>(p, p.codes + rg * p.row_bytes, p.codes + rh * p.row_bytes, rg, rh, seg, t, r[l]);
          }
          const int nb = seg < p.nseg_full ? BPS : p.ntail;
          for (int b = 0; b < nb; b++) {
            uint32_t bw[NG][32][8], a[32][4];
            float c[NG][32][4] = {};
            for (int l = 0; l < 32; l++) {
              const int g = l >> 2, t = l & 3;
              if (DIRECT)
                for (int G = 0; G < NG; G++) load_b_direct(p, G * 8 + g, seg * BPS + b, t, bw[G][l]);
              else
                for (int G = 0; G < NG; G++) load_b_staged(bbuf, rb0 + b, p.ncols, G * 8 + g, t, bw[G][l]);
            }
            for (int s = 0; s < 4; s++) {
              for (int l = 0; l < 32; l++) {
                switch (s) {
                  case 0: step_frag<FMT, DIRECT, 0>(r[l], b, lut, (uint32_t)l * 4, a[l]); break;
                  case 1: step_frag<FMT, DIRECT, 1>(r[l], b, lut, (uint32_t)l * 4, a[l]); break;
                  case 2: step_frag<FMT, DIRECT, 2>(r[l], b, lut, (uint32_t)l * 4, a[l]); break;
                  default: step_frag<FMT, DIRECT, 3>(r[l], b, lut, (uint32_t)l * 4, a[l]); break;
                }
              }
              for (int G = 0; G < NG; G++) {
                if (G > 0 && G * 8 >= (DIRECT ? p.m_active : p.ncols)) break;
                mma_emul(DIRECT, a, bw[G], s, c[G]);
              }
            }
            for (int l = 0; l < 32; l++) {
              const int t = l & 3;
              const float sg = block_scale<FMT>(r[l].sg, b), sh = block_scale<FMT>(r[l].sh, b);
              for (int G = 0; G < NG; G++) {
                const float2 pe = DIRECT ? make_float2(1.0f, 1.0f)
                                         : *reinterpret_cast<const float2 *>(pbuf + (rb0 + b) * kPCols + 8 * G + 2 * t);
                acc_block<DIRECT>(acc[warp][G][l], c[G][l], sg, sh, pe);
              }
            }
          }
        }
      }
    }
    /* epilogue, in the kernel's order */
    const bool norm = !DIRECT && p.gamma != nullptr;
    std::vector<float> inv(16, 1.0f);
    if (norm)
      for (int a = 0; a < p.m_active; a++) {
        const int n4 = p.rb_per_round * 4;
        float sum = 0.0f;
        for (int j = 0; j < n4; j++) sum += ss[(size_t)a * n4 + j];
        inv[a] = 1.0f / sqrtf(sum * p.inv_k + p.eps);
      }
    const int rows_cta = p.tpc * 16;
    for (int o = 0; o < p.m_active * rows_cta; o++) {
      const int a = o / rows_cta, lr = o - a * rows_cta, tix = lr >> 4, rr = lr & 15;
      const int64_t row = ((int64_t)cta * p.tpc + tix) * 16 + rr;
      if (row >= p.n) continue;
      const int col0 = DIRECT ? a : a * SPLITS, nsp = DIRECT ? 1 : SPLITS;
      float v = 0.0f;
      for (int sp = 0; sp < nsp; sp++) {
        const int G = (col0 + sp) >> 3, col = (col0 + sp) & 7;
        const int l = (rr & 7) * 4 + (col >> 1), reg = (rr >> 3) * 2 + (col & 1);
        float s = 0.0f;
        for (int k2 = 0; k2 < p.ks; k2++) s += acc[tix * p.ks + k2][G][l][reg];
        v = sp == 0 ? s : v + s;
      }
      if (norm) v *= inv[a];
      const int64_t idx = (int64_t)a * p.n + row;
      if (p.y_bf16)
        static_cast<uint16_t *>(p.y)[idx] = __bfloat16_as_ushort(__float2bfloat16_rn(v));
      else
        static_cast<float *>(p.y)[idx] = v;
    }
  }
}

template <int FMT>
void emulate_fmt(const qgc_plan &pl, size_t smem) {
  switch (pl.mode) {
    case QGC_MODE_STAGED1: emulate_launch<FMT, false, 1>(pl.p, (unsigned)pl.grid, smem); break;
    case QGC_MODE_STAGED2: emulate_launch<FMT, false, 2>(pl.p, (unsigned)pl.grid, smem); break;
    default:
      if constexpr (Fmt<FMT>::kQ2) emulate_launch<FMT, true, 1>(pl.p, (unsigned)pl.grid, smem);
      break;
  }
}

/* qgc_matvec with the launches emulated. */
void emulate_matvec(const HostLayout &h, const qg_matvec_args &a, int sms) {
  qgc_plan pl = qgc_make_plan(&h.L, &a, sms, 99 * 1024); /* GB10's opt-in */
  for (int64_t r0 = 0; r0 < a.m; r0 += pl.slots) {
    qgc_plan_rows(&pl, &h.L, &a, r0);
    const size_t smem = qgc_plan_smem(&pl, &h.L);
    ck_assert_msg(smem <= 99 * 1024, "plan needs %zu bytes of shared memory", smem);
    const bool has = qgc_with_layout(h.L.id, [&](auto lay) { emulate_fmt<decltype(lay)::value>(pl, smem); });
    ck_assert_msg(has, "layout %d has no kernels", (int)h.L.id);
  }
}

/* Format fi of the library's list; its layout id is fi (the core lists
 * its layout table in id order). */
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
  qg_layout_id id;
  qgemv_format f;
  int32_t group;
  int64_t n, k, m;
  qgemv_dtype xt, yt;
  bool norm;
  qgemv_dtype gt;
  int sms;
  dist_kind dist;
};

/* Runs one case, checks the contract, returns the output bytes. */
std::vector<uint8_t> run_case(const Case &c, uint64_t seed) {
  rng r = {seed};
  tu_weight w;
  tu_weight_make(&r, c.dist, c.f, c.group, c.n, c.k, &w);
  HostLayout h;
  make_layout(w.desc, c.id, h);
  std::vector<float> xf((size_t)(c.m * c.k)), gf((size_t)c.k);
  fill_random(&r, c.dist, xf.data(), xf.size());
  for (auto &g : gf) g = (float)(0.5 + rng_uniform(&r));
  void *x = tu_convert(xf.data(), xf.size(), c.xt);
  void *gamma = c.norm ? tu_convert(gf.data(), gf.size(), c.gt) : nullptr;
  const size_t ybytes = (size_t)(c.m * c.n) * tu_dtype_size(c.yt);
  tu_guarded y = tu_guarded_new(ybytes);
  qg_matvec_args a = {};
  a.layout = &h.L;
  a.layout_id = c.id;
  a.n = c.n;
  a.k = c.k;
  a.m = c.m;
  a.x = x;
  a.x_dtype = c.xt;
  a.y = y.mem;
  a.y_dtype = c.yt;
  a.gamma = gamma;
  a.gamma_dtype = c.gt;
  a.eps = 1e-5f;
  emulate_matvec(h, a, c.sms);
  char where[256];
  const double worst = tu_check_contract(&w.desc, c.m, c.xt, x, c.gt, gamma, 1e-5f, c.yt, y.mem, where, sizeof where);
  ck_assert_msg(worst <= 1.0,
                "%s g%d %lldx%lld m=%lld x=%s y=%s norm=%d sms=%d %s: worst %.3g of the bound at %s",
                format_at(c.id).name, c.group, (long long)c.n, (long long)c.k, (long long)c.m,
                c.xt == QGEMV_F32 ? "f32" : "bf16", c.yt == QGEMV_F32 ? "f32" : "bf16", (int)c.norm, c.sms,
                dist_name(c.dist), worst, where);
  ck_assert_msg(tu_guard_intact(&y), "write past the end of y");
  std::vector<uint8_t> out(y.mem, y.mem + ybytes);
  tu_guarded_free(&y);
  free(x);
  free(gamma);
  tu_weight_free(&w);
  return out;
}


/* Shapes with every tail (k % 256 in 64..192, k % 128 == 64), n not a
 * multiple of 16, and geometries from 8 tiles per CTA to 8 k-slices. */
START_TEST(test_every_combination) {
  const int64_t shapes[][2] = {{37, 320}, {130, 1152}, {21, 448}, {300, 256}};
  const int sms_list[] = {1, 64};
  const int64_t ms[] = {1, 3};
  uint64_t seed = 100 + (uint64_t)_i;
  const int fi = _i;
  const int nshapes = quick ? 2 : 4, nsms = quick ? 1 : 2;
  for (int si = 0; si < nshapes; si++)
    for (int smi = 0; smi < nsms; smi++)
      for (int64_t m : ms)
        for (int xt = 0; xt < 2; xt++)
          for (int yt = 0; yt < 2; yt++)
            for (int norm = 0; norm < 2; norm++) {
              const int64_t n = shapes[si][0], k = shapes[si][1];
              const Format F = format_at(fi);
              if (k % F.group) continue;
              Case c = {F.id, F.f, F.group, n, k, m, (qgemv_dtype)xt, (qgemv_dtype)yt,
                        norm != 0, (qgemv_dtype)xt, sms_list[smi], (dist_kind)(seed % DIST_COUNT)};
              run_case(c, seed++);
            }
}
END_TEST

/* Batched rows are bit-identical to m = 1 on each row, for m past one
 * launch (slots) and both operand modes. */
START_TEST(test_batched_rows) {
  const int fi = _i;
  for (int xt = 0; xt < 2; xt++)
    for (int norm = 0; norm < 2; norm++) {
      const int64_t n = 45, k = tu_whole_blocks(fi, 384), m = 19;
      const Format F = format_at(fi);
      Case c = {F.id, F.f, F.group, n, k, m, (qgemv_dtype)xt, QGEMV_F32, norm != 0,
                QGEMV_BF16, 8, DIST_NORMAL};
      const std::vector<uint8_t> all = run_case(c, 7);
      /* The same rows one at a time: regenerate identical data, slice. */
      rng r = {7};
      tu_weight w;
      tu_weight_make(&r, c.dist, c.f, c.group, n, k, &w);
      std::vector<float> xf((size_t)(m * k)), gf((size_t)k);
      fill_random(&r, c.dist, xf.data(), xf.size());
      for (auto &g : gf) g = (float)(0.5 + rng_uniform(&r));
      HostLayout h;
      make_layout(w.desc, c.id, h);
      void *x = tu_convert(xf.data(), xf.size(), c.xt);
      void *gamma = norm ? tu_convert(gf.data(), gf.size(), c.gt) : nullptr;
      for (int64_t row = 0; row < m; row++) {
        std::vector<float> y((size_t)n);
        qg_matvec_args a = {};
        a.layout = &h.L;
        a.n = n;
        a.k = k;
        a.layout_id = c.id;
        a.m = 1;
        a.x = static_cast<const char *>(x) + (size_t)(row * k) * tu_dtype_size(c.xt);
        a.x_dtype = c.xt;
        a.y = y.data();
        a.y_dtype = QGEMV_F32;
        a.gamma = gamma;
        a.gamma_dtype = c.gt;
        a.eps = 1e-5f;
        emulate_matvec(h, a, c.sms);
        ck_assert_msg(memcmp(y.data(), all.data() + (size_t)(row * n) * 4, (size_t)n * 4) == 0,
                      "row %lld of the batched call differs from m = 1 (format %d, x %d, norm %d)", (long long)row,
                      fi, xt, norm);
      }
      free(x);
      free(gamma);
      tu_weight_free(&w);
    }
}
END_TEST

/* Large magnitudes and tiny ones through the fp16 staging exponents. */
START_TEST(test_magnitudes) {
  for (int d = 0; d < DIST_COUNT; d++)
    for (int fi = 0; fi < qgemv_format_count(); fi++) {
      const Format F = format_at(fi);
      Case c = {F.id, F.f, F.group, 40, tu_whole_blocks(fi, 640), 2, QGEMV_F32, QGEMV_F32, d % 2 == 1, QGEMV_F32, 4,
                (dist_kind)d};
      run_case(c, 900 + (uint64_t)d);
    }
}
END_TEST

}  // namespace

int main(void) {
  if (qgemv_format_count() != QG_LAYOUT_COUNT) {
    fprintf(stderr, "the library lists %d formats, the module's headers %d layouts\n", qgemv_format_count(),
            (int)QG_LAYOUT_COUNT);
    return EXIT_FAILURE;
  }
  const char *q = getenv("QGEMV_TEST_QUICK");
  quick = q && *q && strcmp(q, "0") != 0;
  Suite *s = suite_create("cuda_layout");
  TCase *tc = tcase_create("emulated");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_every_combination, 0, QG_LAYOUT_COUNT);
  tcase_add_loop_test(tc, test_batched_rows, 0, QG_LAYOUT_COUNT);
  tcase_add_test(tc, test_magnitudes);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
