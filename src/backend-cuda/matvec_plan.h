/* The plan of a matvec call: operand mode, geometry and kernel parameters
 * (everything but the per-launch activation rows). Shared by matvec.cu and
 * the CPU emulation test, so both run the same plan. Host-only C++. */
#ifndef QGC_MATVEC_PLAN_H
#define QGC_MATVEC_PLAN_H

#include <stdint.h>

#include <utility>

#include "kernels_matvec.cuh"
#include "layout.h"
#include "matvec_launch.h"

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

struct qgc_plan {
  qgc::MatvecParams p; /* x, y, m_active, ncols filled per launch */
  int mode;            /* QGC_MODE_* */
  int splits;          /* staged fp16 terms per activation (1 or 2) */
  int slots;           /* activation rows per launch */
  int64_t grid;        /* CTAs */
};

/* Tiles per CTA (and so k-slices, 8 / tpc): as many tiles as still give two
 * CTAs per SM, so that small n splits k instead of idling SMs. Depends on n
 * and the device only, never on m: a row's summation order is fixed. */
static inline int qgc_pick_tpc(int64_t n, int sms, int tpc_min) {
  const int64_t tiles = (n + 15) / 16;
  int tpc = 8;
  while (tpc > tpc_min && (tiles + tpc - 1) / tpc < 2 * (int64_t)sms) tpc /= 2;
  return tpc;
}

/* smem_cap: the device's shared memory per block (opt-in); a staged launch
 * of 16 columns that would need more takes 8 columns instead. Which rows
 * share a launch never changes a row's result. */
static inline qgc_plan qgc_make_plan(const qgc_layout *L, const qg_matvec_args *a, int sms,
                                     size_t smem_cap = (size_t)-1) {
  qgc_plan pl = {};
  const bool norm = a->gamma != nullptr, q2 = L->id != QG_LAYOUT_NF4;
  const bool plain_bf16 = a->x_dtype == QGEMV_BF16 && !norm;
  /* Q2_0 on bf16 activations needs no staging: (code - 1) and x are both
   * exact bf16. NF4 needs fp16 A (its table in bf16 would break the
   * contract), hence staged fp16 B; so does any f32 or normalised x. */
  const bool direct = q2 && plain_bf16;
  pl.splits = plain_bf16 ? 1 : 2;
  pl.mode = direct ? QGC_MODE_DIRECT : pl.splits == 1 ? QGC_MODE_STAGED1 : QGC_MODE_STAGED2;
  pl.slots = qgc::slots_per_launch(direct, pl.splits);
  /* Staged Q2_0 segments hold 4 blocks: at most 4 slices keep a staged
   * round within kMaxRoundBlocks. */
  const int tpc = qgc_pick_tpc(L->n, sms, (!direct && q2) ? 2 : 1), ks = qgc::kWarps / tpc;
  const int seg_k = qgc_seg_k(L->id), bps = seg_k / 64;
  pl.grid = ((L->n + 15) / 16 + tpc - 1) / tpc;

  qgc::MatvecParams &p = pl.p;
  p.codes = L->codes;
  p.scales = L->scales;
  p.row_bytes = L->row_bytes;
  p.n = L->n;
  p.k = L->k;
  p.nblk64 = L->k / 64;
  p.nseg_full = L->k / seg_k;
  p.nseg = (L->k + seg_k - 1) / seg_k;
  p.ntail = (int)((L->k % seg_k) / 64);
  p.scales_tail =
      L->scales + (size_t)p.nseg_full * (size_t)L->n * qgc_seg_scales(L->id, L->group) * qgc_scale_size(L->id);
  p.ks = ks;
  p.tpc = tpc;
  p.rb_per_round = ks * qgc::kSegsPerWarp * bps;
  p.nrounds = (p.nseg + (int64_t)ks * qgc::kSegsPerWarp - 1) / ((int64_t)ks * qgc::kSegsPerWarp);
  if (!direct && pl.splits == 2 && qgc::smem_bytes(L->id, false, 2, p.rb_per_round, 16) > smem_cap) pl.slots = 4;
  p.gamma = a->gamma;
  p.x_bf16 = a->x_dtype == QGEMV_BF16;
  p.g_bf16 = a->gamma_dtype == QGEMV_BF16;
  p.y_bf16 = a->y_dtype == QGEMV_BF16;
  p.x_vec = (uintptr_t)a->x % 16 == 0; /* rows keep it: k * size is a multiple of 128 */
  p.g_vec = (uintptr_t)a->gamma % 16 == 0;
  p.eps = a->eps;
  p.inv_k = 1.0f / (float)L->k;
  return pl;
}

/* Activation rows [r0, r0 + slots) of the call as one launch. */
static inline void qgc_plan_rows(qgc_plan *pl, const qgc_layout *L, const qg_matvec_args *a, int64_t r0) {
  qgc::MatvecParams &p = pl->p;
  const size_t xs = a->x_dtype == QGEMV_F32 ? 4 : 2, ys = a->y_dtype == QGEMV_F32 ? 4 : 2;
  p.m_active = (int)(a->m - r0 < pl->slots ? a->m - r0 : pl->slots);
  p.ncols = pl->mode == QGC_MODE_DIRECT ? 0 : p.m_active * pl->splits;
  p.x = static_cast<const char *>(a->x) + (size_t)r0 * (size_t)L->k * xs;
  p.y = static_cast<char *>(a->y) + (size_t)r0 * (size_t)L->n * ys;
}

static inline size_t qgc_plan_smem(const qgc_plan *pl, const qgc_layout *L) {
  return qgc::smem_bytes(L->id, pl->mode == QGC_MODE_DIRECT, pl->splits, pl->p.rb_per_round, pl->p.ncols);
}

#endif
