/* The lookup-table kernel's instantiations and launches (lut_kernels.cuh):
 * one launch of the main kernel and one of lut_finish per activation row,
 * so that row r of a batched call is an m = 1 call on that row, bit for
 * bit. Allocates nothing: the k-split's workspace is the weight's. */
#include <array>
#include <utility>

#include "cuda_state.h"
#include "kernels_launch.cuh"
#include "layout.h"
#include "lut_kernels.cuh"
#include "lut_matvec.h"

namespace {

using LutFn = void (*)(qgc::LutParams);

/* [layout][nb 8, 4, 2][x f32, bf16][norm none, f32 gamma, bf16 gamma] */
constexpr int kNorms = 3, kNbs = 3;
template <int I>
constexpr LutFn lut_fn() {
  constexpr int L = I / (kNbs * 2 * kNorms), NB = 8 >> ((I / (2 * kNorms)) % kNbs);
  constexpr bool XBF = (I / kNorms) % 2;
  return qgc::lut_kernel<L, NB, XBF, I % kNorms>;
}
template <int... I>
constexpr std::array<LutFn, sizeof...(I)> lut_table(std::integer_sequence<int, I...>) {
  return {lut_fn<I>()...};
}
const std::array<LutFn, QG_LAYOUT_COUNT * kNbs * 2 * kNorms> kLutFns =
    lut_table(std::make_integer_sequence<int, QG_LAYOUT_COUNT * kNbs * 2 * kNorms>());

/* NF4's kernels with the L2 prefetch (qgc_lut_l2pf): [nb][x][norm] */
template <int I>
constexpr LutFn lut_pf_fn() {
  constexpr int NB = 8 >> ((I / (2 * kNorms)) % kNbs);
  constexpr bool XBF = (I / kNorms) % 2;
  return qgc::lut_kernel<QG_LAYOUT_NF4, NB, XBF, I % kNorms, QGC_LUT_L2PF_BATCHES>;
}
template <int... I>
constexpr std::array<LutFn, sizeof...(I)> lut_pf_table(std::integer_sequence<int, I...>) {
  return {lut_pf_fn<I>()...};
}
const std::array<LutFn, kNbs * 2 * kNorms> kLutPfFns =
    lut_pf_table(std::make_integer_sequence<int, kNbs * 2 * kNorms>());

/* pf: qgc_lut_l2pf's batches, 0 or QGC_LUT_L2PF_BATCHES (NF4 only) */
LutFn lut_pick(qg_layout_id id, int nb, bool x_bf16, int norm, int pf) {
  const int nbi = nb == 8 ? 0 : nb == 4 ? 1 : 2;
  if (pf > 0) return id == QG_LAYOUT_NF4 ? kLutPfFns[(nbi * 2 + x_bf16) * kNorms + norm] : nullptr;
  return kLutFns[(((int)id * kNbs + nbi) * 2 + x_bf16) * kNorms + norm];
}

}  // namespace

bool qgc_lut_device_ok(const qgc_device_facts &d) { return d.smem_optin >= QGC_LUT_SMEM; }

cudaError_t qgc_lut_prepare(const qgc_device_facts &d) {
  if (!qgc_lut_device_ok(d)) return cudaSuccess; /* never chosen there (GB10: 99 KB) */
  cudaError_t e = cudaSuccess;
  for (LutFn f : kLutFns)
    if (e == cudaSuccess) e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)QGC_LUT_SMEM);
  for (LutFn f : kLutPfFns)
    if (e == cudaSuccess) e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)QGC_LUT_SMEM);
  return e;
}

cudaError_t qgc_lut_launch(const qgc_layout *L, const qg_matvec_args *a, cudaStream_t s, bool pdl) {
  const qgc_lut_geom &g = L->lut_geom;
  const int norm = a->gamma == nullptr ? 0 : a->gamma_dtype == QGEMV_BF16 ? 2 : 1;
  const LutFn fn = lut_pick(L->id, g.nb, a->x_dtype == QGEMV_BF16, norm, qgc_lut_l2pf(L->format, &g, L->k));
  if (fn == nullptr) return cudaErrorInvalidDeviceFunction; /* no prefetch kernels but NF4's (qgc_lut_l2pf) */
  const size_t xs = a->x_dtype == QGEMV_BF16 ? 2 : 4, ys = a->y_dtype == QGEMV_BF16 ? 2 : 4;
  qgc::LutParams p = {};
  p.codes = reinterpret_cast<const uint4 *>(L->lut_codes);
  p.scales = L->lut_scales;
  p.gamma = a->gamma;
  p.part = L->lut_work;
  p.ss = L->lut_work + (size_t)g.ksplit * (size_t)L->n;
  p.n = (int)L->n;
  p.k = (int)L->k;
  p.ksplit = g.ksplit;
  p.rows_per_unit = g.rows;
  const unsigned finish_grid = (unsigned)((L->n + 255) / 256);
  int fnorm = norm != 0, y_bf16 = a->y_dtype == QGEMV_BF16;
  float eps = a->eps;
  for (int64_t r = 0; r < a->m; r++) {
    p.x = static_cast<const char *>(a->x) + (size_t)r * (size_t)L->k * xs;
    void *y = static_cast<char *>(a->y) + (size_t)r * (size_t)L->n * ys;
    void *main_args[] = {&p};
    cudaError_t e = qgc::launch_ex((const void *)fn, dim3((unsigned)g.units), dim3(qgc::kLutThreads), QGC_LUT_SMEM, s,
                                   pdl, main_args);
    void *finish_args[] = {&p.part, &p.ss, &y, &p.n, &p.ksplit, &p.k, &eps, &fnorm, &y_bf16};
    if (e == cudaSuccess)
      e = qgc::launch_ex((const void *)qgc::lut_finish, dim3(finish_grid), dim3(256), 0, s, pdl, finish_args);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
