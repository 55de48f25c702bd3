/* The plan of a matvec call: activation mode, k-split, kernel choice and
 * geometry of the launches, and the tail launch. Shared by matvec.cu and
 * the CPU emulation test, so both run the same plan. Host-only C++: plain
 * arithmetic, no CUDA call (the plan runs on every matvec).
 *
 * The k-split KS (the summation order, so the bits) comes from n, k and
 * the device only. Everything else may follow m: the activation rows per
 * launch (column groups NG), tiles per warp T, B per CTA (in phases) or per
 * warp, warps per CTA, grid. The choices follow the kernel lab's round-2
 * winners on the H200 (bench/NOTES.md v3 round 2 and v4). */
#ifndef QGC_MATVEC_PLAN_H
#define QGC_MATVEC_PLAN_H

#include <stdint.h>
#include <string.h>

#include <utility>

#include "kernels_matvec.cuh"
#include "kernels_tail.cuh"
#include "layout.h"
#include "matvec_launch.h"

/* One activation row at a k-split of 8 in CTAs of one row group where two
 * fit an SM (below, wcap). On the H200 as the library against v19's
 * (bench/NOTES.md v21, run 1): 4096 x 4096 0.90-0.99x, 4096 x 14336 within
 * 1%. 0 restores v20's plan for A/B runs. */
#ifndef QGC_EXP_KS8_M1
#define QGC_EXP_KS8_M1 1
#endif
/* NF4 with f32 x, batched, at a k-split of 4 in CTAs of 8 warps with all
 * of k's B (below). 0: 3695774's plan, for A/B runs. */
#ifndef QGC_EXP_NF4_W8
#define QGC_EXP_NF4_W8 1
#endif
/* NF4, one activation row, two tiles per warp in 8 warps where the tiles
 * are too few for two in 16 (below). 0: 9d337e0's plan, for A/B runs. */
#ifndef QGC_EXP_NF4_T2W8
#define QGC_EXP_NF4_T2W8 1
#endif
/* A k-split of 2 and one tile per warp where that fills more SMs than 4
 * (qgc_ks2_fill). 0: the plan before, for A/B runs. */
#ifndef QGC_EXP_KS2_FILL
#define QGC_EXP_KS2_FILL 1
#endif
/* A k-split and warps for just over one wave of CTAs (qgc_wave_fit). 0:
 * dc63e56's plan, for A/B runs. */
#ifndef QGC_EXP_WAVE_FIT
#define QGC_EXP_WAVE_FIT 1
#endif

/* Q2_0's wide search in qgc_wave_fit (down to a quarter of the slots'
 * k-split, one or two tiles per warp, 8 to 16 warps). 0: v25's narrow
 * search (16, 14 or 12 warps of two tiles), for A/B runs. */
#ifndef QGC_EXP_Q2_WIDE
#define QGC_EXP_Q2_WIDE 1
#endif
/* Launches the plan takes for one CTA per SM (its occupancy model
 * assumes 128 registers per thread) ask for more than half of the SM's
 * shared memory, so that no second CTA can join one and leave another SM
 * idle: Q2_0 direct at one tile per warp (91 registers on sm_90) fits two
 * CTAs of 9 or 10 warps per SM, and with fewer CTAs than SMs 10 warps ran
 * 1.4x slower than 12; asking for half the SM made them even (H200, bf16
 * m = 1, 9216 x 4096 10.3 -> 7.5 us, 18944 x 3584 16.3 -> 11.5; launches
 * that no second CTA could join by registers within 0.4%; bench/NOTES.md
 * v26). 0: the plan's own shared memory, for A/B runs. */
#ifndef QGC_EXP_ONE_CTA
#define QGC_EXP_ONE_CTA 1
#endif

/* qgc_make_plan's per-call tries at the wave fit's k-split: NF4 in 8
 * warps where that saves a phase of B, Q2_0 bf16 x batched in 12 warps
 * of one tile. 0: without them (v26's NEW, NEW2), for A/B runs. */
#ifndef QGC_EXP_NF4_W8_PHASE
#define QGC_EXP_NF4_W8_PHASE 1
#endif
#ifndef QGC_EXP_Q2_BF16_W12
#define QGC_EXP_Q2_BF16_W12 1
#endif

/* Calls f(std::integral_constant<int, id>()) when layout id has kernels
 * here and returns true; else false. One switch over every layout, for
 * code that instantiates templates per layout. */
template <int L, typename F>
bool qgc_call_if(int id, F &f) {
  (void)id, (void)f; /* unused where L has no kernels */
  if constexpr (qgc::Fmt<L>::kKernels) {
    if (id == L) return f(std::integral_constant<int, L>()), true;
  }
  return false;
}
template <typename F, int... L>
bool qgc_with_layout_in(int id, F &f, std::integer_sequence<int, L...>) {
  return (qgc_call_if<L>(id, f) || ...);
}
template <typename F>
bool qgc_with_layout(int id, F &&f) {
  return qgc_with_layout_in(id, f, std::make_integer_sequence<int, QG_LAYOUT_COUNT>());
}

static_assert(qgc::kWideWarps == QGC_TUNE_MAX_WARPS, "QGEMV_CUDA_PLAN's w bound is the wide kernel's warps");

struct qgc_plan {
  qgc::Params p;          /* x, y, m, ncols: per launch (qgc_plan_rows) */
  qgc::KernelChoice kc;
  int KS, G, T, phases;
  int rows;               /* activation rows per launch */
  bool main;              /* there are full tiles */
  bool tail;              /* there are n % 16 rows */
  qgc::TailParams tp;
  unsigned tail_ys;       /* the tail grid's activation-row stride */
  bool pdl;
  bool fits;              /* false only where QGEMV_CUDA_PLAN asks for what cannot run */
};

/* NF4's table as byte planes (nf4_planes), for Params::nf4_pl. */
struct qgc_nf4_planes {
  uint32_t w[16];
  qgc_nf4_planes() { qgc::nf4_planes(w); }
};

/* Dynamic shared memory of one geometry for a row of k (nch chunks), 0
 * when it does not fit. */
template <int L>
size_t qgc_fit(int64_t k, int nch, const qgc_device_facts &d, bool bs, int W, int T, int NG, int ncols, int KS,
               int phases, int xm = qgc::kDirect) {
  const qgc::SmemPlan sp = qgc::smem_plan_of<L>(bs, W, T, NG, k, nch, ncols, KS, phases, xm);
  return (size_t)sp.total <= d.smem_optin ? (size_t)sp.total : 0;
}

/* Whether the smallest geometry (one warp, B per warp, 16 columns) fits:
 * else the device cannot run the layout. */
template <int L>
bool qgc_device_fits(const qgc_device_facts &d) {
  return qgc_fit<L>(64, 1, d, false, 1, 1, 2, 16, 1, 1) > 0;
}

/* Units of a geometry: row groups of T tiles, G of them per unit. */
inline int64_t qgc_units(int64_t ntiles, int T, int G) {
  const int64_t groups = (ntiles + T - 1) / T;
  return (groups + G - 1) / G;
}

/* The k-split by the device's warp slots: the smallest power of two (at
 * most 16, at most the chunks of a row, at most what the smallest
 * geometry fits on this device) with which the row groups of the m = 1
 * geometry x slices fill 80% of the device's warp slots (16 per SM). */
template <int L>
int qgc_ks_by_slots(const qgc_layout *Lw, const qgc_device_facts &d) {
  const int64_t T0 = Lw->ntiles >= 4 * (int64_t)d.sms ? 2 : 1, groups = (Lw->ntiles + T0 - 1) / T0;
  int cap = 1;
  while (cap < qgc::kMaxWarps && qgc_fit<L>(Lw->k, Lw->nch, d, false, 2 * cap, 1, 2, 16, 2 * cap, 1) > 0) cap *= 2;
  int ks = 1;
  while (2 * ks <= cap && 2 * ks <= Lw->nch && groups * ks * 10 < (int64_t)d.sms * qgc::kMaxWarps * 8) ks *= 2;
  return ks;
}

/* A k-split of 2 with one tile per warp in CTAs of kMaxWarps - 2 warps,
 * where the slots' k-split of 4 makes fewer CTAs in one wave (its CTAs of
 * 4 row groups of two tiles each), for k <= 6144. On the H200 at 14336 x
 * 4096: 112 CTAs of 8 tiles against 128 of 7 for 132 SMs. The k-split is
 * the bits, so this holds for every m. Against k-split 4 (bench/NOTES.md v24): 14336 x 4096 and 13824 x
 * 5120 m = 1 0.87-0.99x, batched 0.59-0.95x (Q2_0 g128 bf16 m = 8 1.00,
 * its norm 1.03-1.04); at 14336 x 8192 batched 0.70-0.98x but m = 1
 * 1.01-1.05x, so not there. */
template <int L>
bool qgc_ks2_fill(const qgc_layout *Lw, const qgc_device_facts &d) {
  if (!QGC_EXP_KS2_FILL || Lw->k > 6144 || qgc_ks_by_slots<L>(Lw, d) != 4) return false;
  const int T0 = Lw->ntiles >= 4 * (int64_t)d.sms ? 2 : 1;
  const int64_t u4 = qgc_units(Lw->ntiles, T0, qgc::kMaxWarps / 4);
  const int64_t u2 = qgc_units(Lw->ntiles, 1, (qgc::kMaxWarps - 2) / 2);
  return u2 <= d.sms && u2 > u4;
}

/* A k-split and warps per CTA for the shapes whose slots' geometry (two
 * tiles per warp, 16 warps) makes just over one wave of CTAs: among the
 * slots' k-split and half of it (not under 2), the one whose busiest SM
 * takes the fewest tiles (rounds of units x row groups x two tiles), the
 * fewest rounds on a tie, the slots' own on a further tie.
 * - NF4: 8 to 16 warps, with CTAs on at least 2/3 of the SMs (fewer
 *   starve the memory system: 11008 x 4096 at a k-split of 2 in 10 warps,
 *   69 CTAs, was 1.6x slower; 96 of 132 were fine).
 * - Q2_0 (QGC_EXP_Q2_WIDE): down to a quarter of the slots' k-split (1
 *   at the least), one or two tiles per warp, 8 to 16 warps, CTAs on 2/3
 *   of the SMs, the smaller k-split on a further tie; but the narrow
 *   search's pick (16, 14 or 12 warps of two tiles, k-split not under 2)
 *   where the wide one's is one tile per warp without a k-split for more
 *   than 3/4 of its tiles. Against the narrow rule on the H200 (v26 runs
 *   1-2): 11008, 12288 and 9216 x 4096 and 10240 x 5120 at a k-split of
 *   2, one tile per warp (m = 1 0.89-1.04x, f32 m = 8 0.59-0.91x, m = 16
 *   0.76-0.90x, bf16 m = 8 0.96-1.17x before qgc_make_plan's 12 warps);
 *   18944 x 3584 k-split 1 in 9 warps of one tile (m = 1 0.93-0.97x),
 *   37888 x 3584 1 in 9 of two (0.71-0.93x at every row); where one tile
 *   without a k-split took 10 to 13 warps for 10 to 13 tiles against 12
 *   to 14 (20480 x 5120, 22016 and 24576 x 4096, 25600 x 5120) it was
 *   1.01-1.08x slower at m = 1, so the narrow pick stays there.
 * On the H200 against v24's rule (bench/NOTES.md v25, runs 3 and 5):
 * 18944 x 3584 NF4 k-split 2 in 10 warps (m = 1 0.84-0.85x, bf16 m = 8
 * 0.84x, f32 m = 8 and m = 16 1.07-1.09x slower), Q2_0 2 in 12 (0.76-
 * 0.98x); 20480 x 5120 NF4 2 in 10 (0.71-0.94x), Q2_0 2 in 12 (0.53-
 * 0.85x); 22016 and 24576 x 4096 NF4 2 in 12 (m = 1 0.97x, bf16 batched
 * 0.93-0.96x, f32 batched 1.03-1.04x slower), Q2_0 2 in 12 (0.79-0.98x);
 * 37888 x 3584 NF4 in 10 warps at m = 1 and bf16 m = 8 (0.90-0.92x). A
 * k-split of 1 for NF4 there was 3% faster at m = 1 and 1.25x slower with
 * f32 x at m = 8. v24's picks stand: 11008 and 12288 x 4096 k-split 4 in
 * 12 warps (m = 1 0.81-0.89x, m = 8 0.67-0.95x against 8 in 16). {0, 0}
 * where it does not apply. */
struct qgc_wave_pick {
  int ks, w, t; /* t: 1 for one tile per warp, else 0 (the plan's two) */
};
template <int L>
qgc_wave_pick qgc_wave_fit(const qgc_layout *Lw, const qgc_device_facts &d) {
  const int64_t sms = d.sms;
  /* Only where a CTA of 16 warps holds its ring and B (227 KB per block on
   * the H200): GB10's 99 KB plans run small CTAs over many units, where
   * this was not measured. And only for k <= 6144, as measured (k = 3584
   * to 5120; qgc_ks2_fill lost at m = 1 with k = 8192). */
  if (!QGC_EXP_WAVE_FIT || Lw->ntiles < 4 * sms || d.smem_optin < 200 * 1024 || Lw->k > 6144) return {0, 0, 0};
  const int ks0 = qgc_ks_by_slots<L>(Lw, d);
  const int64_t u0 = qgc_units(Lw->ntiles, 2, qgc::kMaxWarps / ks0);
  if (u0 <= sms || u0 >= 2 * sms) return {0, 0, 0};
  constexpr bool nf4 = qgc::Fmt<L>::kNF4;
  /* q2w: Q2_0's wide search (down to a quarter of the k-split, one or two
   * tiles per warp, 8 to 16 warps, ties to the smaller k-split) */
  auto search = [&](bool q2w, int64_t *tiles_out) {
    const bool wide = nf4 || q2w;
    qgc_wave_pick best = {ks0, qgc::kMaxWarps, 0};
    int64_t best_rounds = (u0 + sms - 1) / sms, best_tiles = best_rounds * (qgc::kMaxWarps / ks0) * 2;
    for (int ks = ks0; ks >= (q2w ? 1 : 2) && ks * (q2w ? 4 : 2) >= ks0; ks /= 2)
      for (int t = 2; t >= (q2w ? 1 : 2); t--)
        for (int w = qgc::kMaxWarps; w >= (wide ? 8 : qgc::kMaxWarps - 4); w -= wide ? 1 : 2) {
          if (w % ks) continue;
          const int64_t u = qgc_units(Lw->ntiles, t, w / ks), rounds = (u + sms - 1) / sms;
          const int64_t tiles = rounds * (w / ks) * t;
          if (wide && 3 * u < 2 * sms) continue;
          if (tiles < best_tiles ||
              (tiles == best_tiles && (rounds < best_rounds || (q2w && rounds == best_rounds && ks < best.ks))))
            best = {ks, w, t == 2 ? 0 : 1}, best_rounds = rounds, best_tiles = tiles;
        }
    *tiles_out = best_tiles;
    return best;
  };
  int64_t tiles = 0, tiles_w = 0;
  qgc_wave_pick best = search(false, &tiles);
  if (!nf4 && QGC_EXP_Q2_WIDE) {
    /* one tile per warp without a k-split: at most 3/4 of the tiles */
    const qgc_wave_pick pw = search(true, &tiles_w);
    if (!(pw.ks == 1 && pw.t == 1 && 4 * tiles_w > 3 * tiles)) best = pw;
  }
  return best.ks == ks0 && best.w == qgc::kMaxWarps && best.t == 0 ? qgc_wave_pick{0, 0, 0} : best;
}

/* The k-split of a weight on a device (QGEMV_CUDA_PLAN's ks aside). */
template <int L>
int qgc_pick_ks(const qgc_layout *Lw, const qgc_device_facts &d) {
  const qgc_wave_pick wp = qgc_wave_fit<L>(Lw, d);
  if (wp.ks) return wp.ks;
  return qgc_ks2_fill<L>(Lw, d) ? 2 : qgc_ks_by_slots<L>(Lw, d);
}

/* Whether Q2_0's integer mma (kI4, B per CTA only) fits every m for this
 * weight: its largest launch (32 columns, eight activation rows) with the
 * fewest warps and the most phases. Decided without m, so that batched
 * rows keep m = 1's bits (the plan otherwise takes the direct mode). */
template <int L>
bool qgc_i4_fits(const qgc_layout *Lw, const qgc_device_facts &d, int KS) {
  const int maxr = (Lw->nch + KS - 1) / KS, ng = qgc::max_groups(qgc::kI4, Lw->group);
  return KS <= Lw->nch && qgc_fit<L>(Lw->k, Lw->nch, d, true, KS, 1, ng, 8 * ng, KS, maxr, qgc::kI4) > 0;
}

/* At least 3.5 tiles of 16 rows an SM: where the modes that pay at m = 1
 * and cost batched begin (x=auto's integer mma, kB2; 7392 rows on 132
 * SMs). */
inline bool qgc_tiles_over_3p5(const qgc_layout *Lw, const qgc_device_facts &d) {
  return 2 * Lw->ntiles >= 7 * (int64_t)d.sms;
}

/* Q2_0's norm with bf16 x and bf16 gamma: x gamma as two cut bf16 terms
 * in B (kB2) rather than gamma in A (kDG), for a weight uploaded for m = 1
 * with at least 3.5 tiles of 16 rows an SM. kDG adds four multiplies an A
 * fragment to the decode; kB2 doubles B's columns, which costs nothing at
 * m = 1 (one mma takes 8) but 1.2-1.9x batched (bench/NOTES.md v16). On
 * the H100, m = 1 in graphs against kDG (bench/NOTES.md v50, g64 / g128):
 * 28672 x 8192 0.82 / 0.87x, 8192 x 28672 0.92 / 0.92x, 14336 x 4096
 * 0.90 / 0.94x, 8192 x 4096 0.97 / 1.04x; at 4096 rows no faster (4096 x
 * 14336 1.02 / 1.01x, 4096 x 4096 1.04 / 1.13x), hence the bound on the
 * tiles. QGEMV_CUDA_PLAN norm=dg|b2 takes one for every weight. */
inline bool qgc_norm_b2(const qgc_layout *Lw, const qgc_device_facts &d) {
  if (d.tune.norm) return d.tune.norm == QGC_NORM_B2;
  return Lw->for_m1 && qgc_tiles_over_3p5(Lw, d);
}

/* CTAs of W warps and smem bytes resident per SM: 128 registers per
 * thread, and the 1 KB the runtime reserves per CTA beside its shared
 * memory; at least 1. */
inline int qgc_ctas_per_sm(const qgc_device_facts &d, int W, size_t smem) {
  size_t occ = (size_t)(65536 / (128 * 32 * W));
  const size_t by_smem = d.smem_per_sm / (smem + 1024);
  if (by_smem < occ) occ = by_smem;
  return occ < 1 ? 1 : (int)occ;
}

/* A candidate geometry: tiles per warp, B per CTA, and whether B may be
 * staged in phases (else all of k or not at all); maxr, w16: at most that
 * many phases, only with 16 warps (0: no limit); wcap: exactly that many
 * warps (0: kMaxWarps, then fewer where they do not fit); occ: taken only
 * where that many CTAs fit an SM (0: any). */
struct qgc_cand {
  int t, bs, phased, maxr, w16, wcap, occ;
};

/* The candidates QGEMV_CUDA_PLAN leaves (t, b, phases given): every
 * combination it allows, T0 before 1, B per CTA before per warp, all of k
 * before phases. */
inline int qgc_tuned_cands(const qgc_plan_tune &tu, int T0, int tmax, qgc_cand *c) {
  const int ts[2] = {T0, 1};
  int nc = 0;
  for (int ti = 0; ti < (T0 == 1 ? 1 : 2); ti++)
    for (int bs = 1; bs >= 0; bs--)
      for (int phased = 0; phased <= bs; phased++) {
        const int t = ts[ti];
        if (t > tmax || (tu.t && t != tu.t) || (tu.b && bs != (tu.b == QGC_B_CTA))) continue;
        if (tu.phases > 1 && !phased) continue;
        c[nc++] = {t, bs, phased, 0, 0, 0, 0};
      }
  return nc;
}

template <int L>
void qgc_plan_layout(qgc_plan *pl, const qgc_layout *Lw, const qg_matvec_args *a, const qgc_device_facts &d) {
  using namespace qgc;
  const qgc_plan_tune &tu = d.tune;
  const bool norm = a->gamma != nullptr, plain_bf16 = a->x_dtype == QGEMV_BF16 && !norm;
  const int KS = tu.ks ? tu.ks : qgc_pick_ks<L>(Lw, d);
  /* The warps per CTA after the most, at KS 2 only: one row group fewer
   * (14). At KS 4 the same rule (12 warps) made batched launches 1.6-2x
   * slower on the H200 (8192 x 28672 NF4 bf16 m = 8 118 -> 205 us, 14336 x
   * 4096 Q2_0 bf16 m = 16 22 -> 38-45: 1.1-1.3 waves of CTAs instead of
   * one; bench/NOTES.md v8). */
  const int wfill = KS == 2 ? kMaxWarps - KS : 0;
  /* QGEMV_CUDA_PLAN's warps, taken down to a multiple of KS (0: none) */
  const int wtune = tu.w - tu.w % KS;
  /* Q2_0 bf16 x: direct bf16 mma, or the integer mma on int8 digits of x
   * (QGEMV_CUDA_PLAN x=int, where it fits every m; x=auto, also only where
   * the weight has 3.5 tiles per SM or more: on the H200 at m = 1 it was
   * 1.15-1.5x faster from 8192 rows up, 1.05-1.3x slower at 4096 rows,
   * where every CTA's staging of x weighs more; bench/NOTES.md v6). */
  const bool i4_shape = tu.x == QGC_X_INT || (tu.x == QGC_X_AUTO && qgc_tiles_over_3p5(Lw, d));
  const bool i4 = !Fmt<L>::kNF4 && plain_bf16 && i4_shape && qgc_i4_fits<L>(Lw, d, KS);
  /* Q2_0's norm with bf16 x and bf16 gamma: gamma in A (kDG), one term,
   * where x gamma in B takes three (kB3); or two (kB2, qgc_norm_b2). */
  const bool dg = norm && a->x_dtype == QGEMV_BF16 && a->gamma_dtype == QGEMV_BF16;
  const int xnorm = qgc_norm_b2(Lw, d) ? kB2 : kDG;
  const int xm = Fmt<L>::kNF4 ? (plain_bf16 ? kS1 : kS2) : (plain_bf16 ? (i4 ? kI4 : kDirect) : dg ? xnorm : kB3);
  const int spl = xmode_splits(xm);
  int ng_top = 1; /* the fewest column groups that take every row, else the most */
  for (int g = 2; g <= 4 && a->m * spl > 8 * ng_top; g++)
    if (groups_ok(xm, Lw->group, g)) ng_top = g;
  /* Whether a warp may take two tiles (T0 below): enough tiles for the SMs,
   * but not at the k-split of 2 that qgc_ks2_fill chose for one tile per
   * warp (two would halve its CTAs). */
  const bool many_tiles = Lw->ntiles >= 4 * (int64_t)d.sms;
  const bool fill2 = KS == 2 && qgc_ks2_fill<L>(Lw, d), two_tiles = many_tiles && !fill2;
  /* Three bf16 terms (f32 x, the norm) in 32 or 24 columns run one tile
   * per warp. 32 columns pay where they save a pass over the weights
   * (every row in one launch) or where one activation row takes one tile
   * per warp too (H200, f32 x, Q2_0 g128: 8192 x 28672 m = 8 261 -> 184
   * us, m = 16 548 -> 450; 28672 x 8192 m = 8 161 -> 145, but m = 16 323
   * -> 340, 14336 x 4096 m = 16 114 -> 140; bench/NOTES.md v7). 24 columns
   * (eight activation rows) the same: where m = 1 takes one tile per warp,
   * wherever one launch cannot take every row (H200, 8192 x 28672, f32 x,
   * before the B swizzle: g64 m = 8 152 -> 123 us, m = 16 306 -> 248;
   * g128 0.89-0.92x; with it 108 and 216), and at g128 instead of 32
   * columns (28672 x 8192 m = 8 107 -> 103, with the swizzle 83). Where a
   * warp can take two tiles of 16 columns, those are faster: the 24
   * columns' one tile per warp makes 224 units of CTAs for 132 SMs at
   * 28672 rows, 1.02-1.07x slower than g64's two launches at m = 8, as was
   * g128 m = 16 (bench/NOTES.md v19). */
  if (xm == kB3 && many_tiles && ((ng_top == 4 && a->m * spl > 32) || (ng_top == 3 && Lw->group == 64)))
    ng_top = 2;
  else if (xm == kB3 && QGC_EXP_B3G3 && !many_tiles && a->m * spl > 32)
    ng_top = 3;
  size_t smem = 0;
  int W = 0, phases = 1, t = 1, bs = 0, ng = ng_top;
  /* Fewer column groups (more launches) where the most do not fit: kB3's
   * 32 columns next to a k-split of 8 (4096 rows on the H200). */
  for (ng = ng_top; ng >= 1 && smem == 0; ng = smem ? ng : ng == 3 ? 2 : ng / 2) {
    pl->rows = a->m * spl <= 8 * ng ? (int)a->m : 8 * ng / spl;
    const int tmax = max_tiles<Fmt<L>::kNF4 ? QGEMV_NF4 : QGEMV_Q2_0>(ng, xm);
    const int ncols = pl->rows * spl, T0 = two_tiles ? tmax : 1;

    /* Candidates in order of preference (bench/NOTES.md v4): B per CTA for
     * one activation row (B per warp re-reads x from L1 inside the block
     * loop, whose latency the loop, not unrolled, no longer hides: Q2_0
     * direct 60 us against 43 us with B per CTA at 28672 x 8192, run 2), in
     * phases for batched f32; B per warp for batched bf16 x. */
    qgc_cand c[9];
    int nc = 0;
    const bool one = a->m == 1;
    /* With a k-split of 8 or more, B per warp (batched bf16 x) and all of
     * k per CTA in one phase (one activation row, QGC_EXP_KS8_M1),
     * run in CTAs of one row group (KS warps) where two of them fit per
     * SM, not two row groups per CTA (H200, 4096 x 14336 and 4096 x 4096:
     * batched bf16 0.90-0.95x the time; bench/NOTES.md v20). Where one CTA
     * of one row group fills an SM's shared memory, its CTAs make two
     * waves (4096 x 14336 f32 m = 1: 1.13-1.15x slower). Only where a
     * warp takes one tile (T0): GB10's plan at these shapes is one row
     * group of two tiles per warp already, which this has not been
     * measured against. */
    const int wcap = KS >= 8 && T0 == 1 ? KS : 0;
    /* NF4 batched in two column groups at a k-split of 2: two tiles per
     * warp in kNg2T2Warps warps (QGC_EXP_NG2T2), before one tile in 16. */
    if (ng2t2_config(Fmt<L>::kNF4, ng, 2, 1) && !one && KS == 2 && two_tiles && !tu.t && !tu.w)
      c[nc++] = {2, 1, 1, 0, 0, kNg2T2Warps, 0};
    if ((xm == kDirect || xm == kS1 || xm == kDG) && !one) {
      /* Batched bf16 x with KS <= 4: the 4-8 row groups of a CTA would each
       * build B per warp; B per CTA in phases with 16 warps is faster where
       * it fits (28672 x 8192 on the H200, KS 2, at most 4 phases: NF4 m = 8
       * 116 -> 81 us, m = 16 286 -> 153 us; Q2_0 m = 8 54 -> 47 us; 8192 x
       * 28672, KS 4, 4-16 phases: NF4 m = 8 160 -> 118 us, m = 16 253 ->
       * 187 us, Q2_0 m = 8 70 -> 59 us; plan sweeps, bench/NOTES.md v5, v6). */
      if (KS <= 4) c[nc++] = {T0, 1, 1, KS <= 2 ? 4 : 0, 1, 0, 0};
      if (wcap) c[nc++] = {1, 0, 0, 0, 0, wcap, 2};
      c[nc++] = {T0, 0, 0, 0, 0, 0, 0};
      c[nc++] = {1, 0, 0, 0, 0, 0, 0};
    } else if (one) {
      /* 16 warps with B in at most 2 phases before all of k with fewer warps
       * (8192 x 28672 f32 on the H200: 8 warps with all of k, NF4 77.6 us,
       * Q2_0 g64 66.8, g128 59.4; 16 warps, 2 phases: 67.9, 53.7, 50.8;
       * 4 phases: 72.2, 56.3, 64.8; bench/NOTES.md v6). Where all of k fits
       * 16 warps this is that launch (one phase). */
      if (wcap && QGC_EXP_KS8_M1) c[nc++] = {1, 1, 0, 0, 0, wcap, 2};
      /* NF4 at a k-split of 4 where a warp takes one tile (T0): two tiles
       * per warp in 8 warps, the same CTAs, B in at most 2 phases (H200,
       * 8192 x 28672: bf16 62.6 -> 60.8 us, f32 67.6 -> 64.6-65.0; 4096 x
       * 14336, k-split 8, within 2%: left alone; bench/NOTES.md v23, v24). */
      if (Fmt<L>::kNF4 && KS == 4 && T0 == 1 && tmax >= 2 && QGC_EXP_NF4_T2W8) c[nc++] = {2, 1, 1, 2, 0, 8, 0};
      c[nc++] = {T0, 1, 1, 2, 1, 0, 0};
      c[nc++] = {T0, 1, 0, 0, 0, 0, 0};
      if (!xmode_cut(xm)) c[nc++] = {T0, 0, 0, 0, 0, 0, 0};
      c[nc++] = {1, 1, 0, 0, 0, 0, 0};
      c[nc++] = {T0, 1, 1, 0, 0, 0, 0};
      c[nc++] = {1, 1, 1, 0, 0, 0, 0};
      c[nc++] = {T0, 0, 0, 0, 0, 0, 0};
      c[nc++] = {1, 0, 0, 0, 0, 0, 0};
    } else {
      /* NF4 with f32 x at a k-split of 4: 8 warps with all of k's B in one
       * phase before 16 warps in phases (H200, 14336 x 4096: m = 8 43.4 ->
       * 39.2 us, m = 16 86.7 -> 80.4 through QGEMV_CUDA_PLAN=w=8; Q2_0's
       * three terms were not faster, g128 m = 8 33 -> 53; bench/NOTES.md
       * v20, v21). Only where 8 warps fit (wcap is exact): 4 were not
       * measured. */
      if (Fmt<L>::kNF4 && KS == 4 && xm == kS2 && !norm && QGC_EXP_NF4_W8) c[nc++] = {1, 1, 0, 0, 0, 8, 0};
      c[nc++] = {T0, 1, 1, 0, 0, 0, 0};
      c[nc++] = {1, 1, 1, 0, 0, 0, 0};
      c[nc++] = {T0, 0, 0, 0, 0, 0, 0};
      c[nc++] = {1, 0, 0, 0, 0, 0, 0};
    }
    /* QGEMV_CUDA_PLAN t=2 where the plan takes one tile: two tiles per
     * warp wherever the mode allows them (plan-sweep's long_t2), and for
     * NF4's two column groups the kernel of kNg2T2Warps warps, B per CTA,
     * at any shape (plan-sweep's ng2t2) */
    const bool ng2t2 = ng2t2_config(Fmt<L>::kNF4, ng, 2, 1) && tu.t == 2;
    if (tu.t || tu.b || tu.phases)
      nc = qgc_tuned_cands(tu, ng2t2 || (tu.t == 2 && tmax >= 2) ? 2 : T0, ng2t2 ? 2 : tmax, c);
    if (!warp_b_ok(xm, ng)) { /* B per CTA only (b=warp: nothing fits) */
      int kept = 0;
      for (int i = 0; i < nc; i++)
        if (c[i].bs) c[kept++] = c[i];
      nc = kept;
    }
    /* Phases: 1, 2, 4, ... up to one chunk of each slice per phase. */
    const int maxr = (Lw->nch + KS - 1) / KS;
    const auto next_r = [&](int r) { return r < maxr && 2 * r > maxr ? maxr : 2 * r; };
    const auto fit = [&](const qgc_cand &cd, int w, int r) {
      /* more than kMaxWarps: only the wide kernel's configuration */
      if (w > kMaxWarps && !(w <= kWideWarps && wide_config(Fmt<L>::kNF4, xm, ng, cd.t, cd.bs)))
        return false;
      /* NF4's two column groups at two tiles: only its own kernel's warps, B per CTA */
      if (Fmt<L>::kNF4 && ng == 2 && cd.t == 2 && !(ng2t2_config(true, ng, 2, cd.bs) && w <= kNg2T2Warps))
        return false;
      if ((smem = qgc_fit<L>(Lw->k, Lw->nch, d, cd.bs != 0, w, cd.t, ng, ncols, KS, r, xm)) > 0)
        W = w, phases = r, t = cd.t, bs = cd.bs;
      return smem > 0;
    };
    for (int i = 0; i < nc && smem == 0 && KS <= Lw->nch; i++) {
      const qgc_cand &cd = c[i];
      const int r0 = cd.phased && tu.phases ? tu.phases : 1;
      const int rtop = cd.phased ? (tu.phases ? tu.phases : maxr) : 1, rcap = cd.maxr ? cd.maxr : rtop;
      /* B per CTA: first the most warps or wfill with at most 4 phases,
       * since a ring of 2 warps less that leaves room for fewer phases is
       * faster (H200, 28672 x 8192, KS 2, W 16 / 8 phases against W 14 /
       * 4: Q2_0 g64 f32 m = 8 172 -> 146 us, g128 f32 m = 16 323 -> 286;
       * B per warp at W 16 against per CTA at W 14, 4 phases: Q2_0 g64
       * bf16 m = 16 87 -> 72; bench/NOTES.md v8). */
      if (cd.bs && !tu.w)
        for (int w : {cd.wcap ? cd.wcap : kMaxWarps, cd.wcap ? 0 : wfill})
          for (int r = r0; w >= KS && r <= rtop && r <= rcap && r <= maxr && r <= 4 && smem == 0; r = next_r(r))
            fit(cd, w, r);
      for (int w = tu.w ? wtune : cd.wcap ? cd.wcap : kMaxWarps; w >= KS && smem == 0; w = tu.w || cd.wcap ? 0 : w / 2)
        for (int r = r0; r <= rtop && r <= maxr && smem == 0; r = next_r(r)) {
          if ((cd.w16 && w != (tu.w ? wtune : kMaxWarps)) || r > rcap) continue;
          fit(cd, w, r);
        }
      if (cd.occ && !tu.w && smem && qgc_ctas_per_sm(d, W, smem) < cd.occ) smem = 0; /* or the next candidate */
    }
    /* Q2_0 direct in one column group: the wide kernel (28 warps of one
     * tile, B per CTA) where its CTAs make one wave. Q2_0 is held by each
     * warp's latency, so twice the warps gain, where NF4, held by the
     * shared-memory pipe, lost 6% (bench/NOTES.md v10).
     * - One activation row at k-split 2 (H200, 28672 x 8192: g64 29.3 ->
     *   28.3 us, g128 28.8 -> 28.3), over at least 3/4 of the SMs (at
     *   14336 x 4096's k-split of 2, 64 CTAs: 1.4x slower, v24).
     * - Batched, g64 only, over at least 3/4 of the SMs, B in the fewest
     *   phases that fit; the k-split stays the plan's, so the rows keep
     *   m = 1's bits (H200, m = 8: 28672 x 8192 44.4 -> 39.1 us, 14336 x
     *   4096 17.0 -> 13.4; g128 was 2% slower at both: bench/NOTES.md v11). */
    if (!Fmt<L>::kNF4 && wide_config(false, xm, ng, 1, 1) && smem && kWideWarps % KS == 0 && !tu.w && !tu.t &&
        !tu.b && !tu.phases) {
      const int64_t uw = qgc_units(Lw->ntiles, 1, kWideWarps / KS);
      const bool take = uw <= d.sms && 4 * uw > 3 * (int64_t)d.sms && (one ? KS == 2 : Fmt<L>::QB == 1);
      for (int r = 1; take && r <= (one ? 1 : maxr); r = next_r(r)) {
        const size_t sw = qgc_fit<L>(Lw->k, Lw->nch, d, true, kWideWarps, 1, ng, ncols, KS, r, xm);
        if (sw) {
          W = kWideWarps, t = 1, bs = 1, phases = r, smem = sw;
          break;
        }
      }
    }
    /* NF4, one activation row: wfill warps where that puts CTAs on more
     * SMs in one wave. NF4's kernel is held by each SM's shared-memory
     * pipe (the table), so spreading its work over more SMs gains where
     * Q2_0's, held by each warp's latency, does not (H200, 28672 x 8192,
     * KS 2: 112 CTAs of 16 warps or 128 of 14; NF4 bf16 61.1 -> 58.5 us,
     * f32 61.8 -> 59.7; Q2_0 g128 within 1%, g64 f32 41.0 -> 43.5;
     * bench/NOTES.md v8). Batched too at qgc_ks2_fill's k-split (14336 x
     * 4096, m = 8: 128 CTAs of 14 warps, bf16 22.5 us against 24.3 in 16,
     * f32 35.1 against 36.6 in 8; v24). */
    if (Fmt<L>::kNF4 && (one || fill2) && smem && W == kMaxWarps && wfill && !tu.w) {
      const int64_t units_w = qgc_units(Lw->ntiles, t, W / KS), units_f = qgc_units(Lw->ntiles, t, wfill / KS);
      const size_t sf = units_f > units_w && units_f <= d.sms
                            ? qgc_fit<L>(Lw->k, Lw->nch, d, bs != 0, wfill, t, ng, ncols, KS, phases, xm)
                            : 0;
      if (sf) W = wfill, smem = sf;
    }
  }
  /* Without an override the last candidate, B per warp with T = 1 and W =
   * KS, fits one column group by the choice of KS (and W = KS = 1 on every
   * device the module opens: qgc_device_fits). */
  pl->fits = smem > 0;
  if (!pl->fits) return;
  pl->KS = KS;
  pl->G = W / KS;
  pl->T = t;
  pl->phases = phases;
  const int64_t groups = (Lw->ntiles + t - 1) / t, units = qgc_units(Lw->ntiles, t, pl->G);
  const int64_t cap = (int64_t)qgc_ctas_per_sm(d, W, smem) * d.sms;
  const size_t half = d.smem_per_sm / 2, one_cta = (half - 1024 + 16) & ~(size_t)15;
  const size_t launch_smem =
      QGC_EXP_ONE_CTA && cap == (int64_t)d.sms && smem < one_cta && one_cta <= d.smem_optin ? one_cta : smem;
  pl->kc = KernelChoice{xm, ng, t, bs, (unsigned)(units < cap ? units : cap), (unsigned)(32 * W), launch_smem};

  Params &p = pl->p;
  p = Params{};
  p.w = Lw->tiles;
  p.tile_bytes = Lw->tile_bytes;
  p.n = Lw->n;
  p.k = Lw->k;
  p.tiles = (int)Lw->ntiles;
  p.nch = Lw->nch;
  p.last_b64 = Lw->last_blocks;
  p.last_bytes = qgc_chunk_bytes(Lw->format, Lw->group, Lw->last_blocks);
  p.T_groups = (int)groups;
  p.units = (int)units;
  p.G = pl->G;
  p.KS = KS;
  p.early = bs ? (QGC_EXP_EARLY >= 0 ? QGC_EXP_EARLY : 1) : kStages;
  /* QGC_EXP_S2X 3 (experiment, kernels_stage.cuh): f32 x with all of k's
   * B per CTA where a warp's whole stream fits its ring takes no stage
   * before the wait and the ring after x's first loads (v52: 0.90-0.96x
   * at 4096 x 4096 with f32 x, slower with bf16 x or more chunks) */
  if (QGC_EXP_S2X == 3 && bs && phases <= 1 && a->x_dtype == QGEMV_F32 && pl->kc.grid > 0 &&
      (p.nch + KS - 1) / KS * ((units + pl->kc.grid - 1) / pl->kc.grid) <= kStages)
    p.early = 0;
  p.phases = bs ? phases : 1;
  while ((1 << p.ks_shift) < KS) ++p.ks_shift; /* KS: a power of two (the plan's and QGEMV_CUDA_PLAN's) */
  p.P = qgc::phase_chunks(p.nch, KS, p.phases);
  p.nbe = qgc::b_scale_blocks(p.k, qgc::Fmt<L>::BK, qgc::Fmt<L>::NEB, p.nch, KS, p.phases);
  p.iters_q = pl->kc.grid ? (int)(units / pl->kc.grid) : 0;
  p.iters_r = pl->kc.grid ? (int)(units % pl->kc.grid) : 0;
  p.gamma = a->gamma;
  p.x_bf16 = a->x_dtype == QGEMV_BF16;
  p.x_vec = (uintptr_t)a->x % 16 == 0; /* rows keep it: k * size is a multiple of 128 */
  p.g_bf16 = a->gamma_dtype == QGEMV_BF16;
  p.g_vec = (uintptr_t)a->gamma % 16 == 0;
  p.y_bf16 = a->y_dtype == QGEMV_BF16;
  p.eps = a->eps;
  p.inv_k = 1.0f / (float)Lw->k;
  p.q2_magic = qgc::kQ2Magic;
  /* the planes are constants: made once, not on every call's plan */
  static const qgc_nf4_planes planes;
  memcpy(p.nf4_pl, planes.w, sizeof p.nf4_pl);

  TailParams &tp = pl->tp;
  tp = TailParams{};
  tp.rows = Lw->tail;
  tp.nrows = (int)(Lw->n % QGC_TILE_ROWS);
  tp.n = Lw->n;
  tp.k = Lw->k;
  tp.row0 = Lw->ntiles * QGC_TILE_ROWS;
  tp.x = a->x;
  tp.gamma = a->gamma;
  tp.y = a->y;
  tp.m = a->m;
  tp.x_bf16 = p.x_bf16;
  tp.g_bf16 = p.g_bf16;
  tp.y_bf16 = p.y_bf16;
  tp.eps = a->eps;
  tp.inv_k = p.inv_k;
}

/* Tiles of 16 rows that the busiest SM of a plan's launch streams: the
 * rounds of units per CTA, times the unit's tiles, times the CTAs per SM
 * (a plan that fits: it has CTAs). */
static inline int64_t qgc_busiest_sm_tiles(const qgc_plan &pl, const qgc_device_facts &d) {
  const int64_t grid = pl.kc.grid > 0 ? pl.kc.grid : 1, rounds = (pl.p.units + grid - 1) / grid, per_sm = (grid + d.sms - 1) / d.sms;
  return rounds * pl.G * pl.T * per_sm;
}

/* The plan of a call (the layout has kernels: upload checked). */
static inline qgc_plan qgc_make_plan(const qgc_layout *Lw, const qg_matvec_args *a, const qgc_device_facts &d) {
  qgc_plan pl = {};
  qgc_with_layout(Lw->id, [&](auto lay) {
    constexpr int L = decltype(lay)::value;
    const qgc_plan_tune &tu = d.tune;
    const qgc_wave_pick wp = tu.ks || tu.t || tu.b || tu.w || tu.phases ? qgc_wave_pick{0, 0, 0} : qgc_wave_fit<L>(Lw, d);
    if (wp.ks) {
      /* qgc_wave_fit's warps where they fit this call and load the busiest
       * SM with no more tiles than the plan's own geometry at that k-split
       * (batched launches take one tile per warp and B in phases, so their
       * units differ from m = 1's). On a tie, the plan's own where the
       * k-split is the slots' (tuned there: H200, 22016 x 4096 f32 m = 8
       * in 12 warps 1.29-1.39x slower, the same tiles per SM), else the
       * wave's warps (measured: 11008 x 4096 f32 m = 8 0.83-0.96x). */
      qgc_device_facts dw = d;
      dw.tune.ks = wp.ks;
      qgc_plan_layout<L>(&pl, Lw, a, dw);
      /* the plan at the wave's k-split in w warps, t as QGEMV_CUDA_PLAN's */
      auto in_warps = [&](int w, int t) {
        qgc_plan p = {};
        dw.tune.w = w;
        dw.tune.t = t;
        qgc_plan_layout<L>(&p, Lw, a, dw);
        return p;
      };
      const qgc_plan pw = in_warps(wp.w, wp.t);
      if (!pw.fits) return;
      if (!pl.fits) {
        pl = pw;
        return;
      }
      const int64_t tw = qgc_busiest_sm_tiles(pw, d), tp = qgc_busiest_sm_tiles(pl, d);
      if (tw < tp || (tw == tp && wp.ks != qgc_ks_by_slots<L>(Lw, d))) pl = pw;
      /* NF4: also v24's 12 warps where the pick is another count (H200,
       * 37888 x 3584 f32 m = 8: 474 units of 10 warps, 73.7 us, against
       * 395 of 12, 57.5; bench/NOTES.md v25) */
      if (qgc::Fmt<L>::kNF4 && wp.w != qgc::kMaxWarps - 4) {
        const qgc_plan p12 = in_warps(qgc::kMaxWarps - 4, wp.t);
        if (p12.fits && qgc_busiest_sm_tiles(p12, d) < qgc_busiest_sm_tiles(pl, d)) pl = p12;
      }
      /* NF4: and 8 warps where they stage B in fewer phases for no more
       * tiles on the busiest SM (H200, f32 x m = 8 and 16 and bf16 x m =
       * 16: one phase in 8 warps 0.90-0.94x the time of two in 12 at 22016
       * and 24576 x 4096, k-split 2, and 0.78-0.82x at 11008, 12288 and
       * 9216 x 4096, k-split 4; where 8 warps take two phases too, 20480 x
       * 5120 f32 m = 8, 1.26x slower; bench/NOTES.md v26) */
      if (QGC_EXP_NF4_W8_PHASE && qgc::Fmt<L>::kNF4 && pl.G * pl.KS != qgc::kMaxWarps / 2) {
        const qgc_plan p8 = in_warps(qgc::kMaxWarps / 2, wp.t);
        if (p8.fits && p8.phases < pl.phases && qgc_busiest_sm_tiles(p8, d) <= qgc_busiest_sm_tiles(pl, d)) pl = p8;
      }
      /* Q2_0 bf16 x batched up to 8 rows (direct mode) at one tile per
       * warp: 12 warps where the pick has fewer, whatever the tiles (H200,
       * m = 8: 9216 x 4096 10.7 -> 9.4 us, 10240 x 5120 13.0 -> 11.3,
       * 18944 x 3584 at k-split 1 14.7 -> 13.6; m = 1 the same at 9216 x
       * 4096, 7.5 us; bench/NOTES.md v26) */
      if (QGC_EXP_Q2_BF16_W12 && !qgc::Fmt<L>::kNF4 && pl.kc.xm == qgc::kDirect && a->m > 1 && a->m <= 8 &&
          pl.T == 1 && pl.G * pl.KS < qgc::kMaxWarps - 4) {
        const qgc_plan p12 = in_warps(qgc::kMaxWarps - 4, 1);
        if (p12.fits) pl = p12;
      }
      return;
    }
    qgc_plan_layout<L>(&pl, Lw, a, d);
  });
  if (!pl.fits) return pl;
  pl.main = Lw->ntiles > 0;
  pl.tail = Lw->n % QGC_TILE_ROWS != 0;
  pl.tail_ys = (unsigned)(a->m < 64 ? a->m : 64);
  pl.pdl = d.pdl;
  return pl;
}

/* Activation rows [r0, r0 + rows) of the call as one launch. */
static inline void qgc_plan_rows(qgc_plan *pl, const qg_matvec_args *a, int64_t r0) {
  qgc::Params &p = pl->p;
  const size_t xs = a->x_dtype == QGEMV_F32 ? 4 : 2, ys = a->y_dtype == QGEMV_F32 ? 4 : 2;
  p.m = (int)(a->m - r0 < pl->rows ? a->m - r0 : pl->rows);
  p.ncols = p.m * qgc::xmode_splits(pl->kc.xm);
  if (pl->kc.xm == qgc::kI4) {
    p.st_cps = 1, p.st_groups = p.ncols / qgc::kDigits;
  } else {
    p.st_cps = p.ncols * p.nbe * 4 > (int)pl->kc.block ? qgc::xmode_splits(pl->kc.xm) : 1;
    p.st_groups = p.ncols / p.st_cps;
  }
  p.st_magic = qgc::div_magic((uint32_t)(p.st_groups > 0 ? p.st_groups : 1));
  p.ru_magic = qgc::div_magic((uint32_t)(p.G * pl->kc.t * 16));
  p.x = static_cast<const char *>(a->x) + (size_t)r0 * (size_t)p.k * xs;
  p.y = static_cast<char *>(a->y) + (size_t)r0 * (size_t)p.n * ys;
}

#endif
