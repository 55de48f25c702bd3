/* The share kernel's instantiations and launches (share_kernels.cuh): one
 * launch per activation row, so that row r of a batched call is an m = 1
 * call on that row, bit for bit. Allocates nothing. */
#include <stdint.h>

#include <array>
#include <utility>

#include "kernels_launch.cuh"
#include "layout.h"
#include "share_kernels.cuh"
#include "share_matvec.h"

namespace {

using ShareFn = void (*)(qgc::ShareParams);

/* [layout][threads 256, 512][x f32, bf16][norm none, f32 gamma, bf16 gamma] */
constexpr int kNorms = 3, kCounts = 2;
template <int I>
constexpr ShareFn share_fn() {
  return qgc::share_kernel<I / (kCounts * 2 * kNorms), (I / kNorms) % 2 == 1, I % kNorms,
                           (I / (2 * kNorms)) % kCounts ? QGC_SHARE_THREADS_MAX : QGC_SHARE_THREADS_MIN>;
}
template <int... I>
constexpr std::array<ShareFn, sizeof...(I)> share_table(std::integer_sequence<int, I...>) {
  return {share_fn<I>()...};
}
const std::array<ShareFn, QG_LAYOUT_COUNT * kCounts * 2 * kNorms> kShareFns =
    share_table(std::make_integer_sequence<int, QG_LAYOUT_COUNT * kCounts * 2 * kNorms>());

}  // namespace

cudaError_t qgc_share_prepare(const qgc_device_facts &d) {
  cudaError_t e = cudaSuccess;
  for (ShareFn f : kShareFns)
    if (e == cudaSuccess) e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)d.smem_optin);
  return e;
}

cudaError_t qgc_share_launch(const qgc_layout *L, const qg_matvec_args *a, cudaStream_t s, bool pdl) {
  const qgc_share_geom &g = L->share_geom;
  const int norm = a->gamma == nullptr ? 0 : a->gamma_dtype == QGEMV_BF16 ? 2 : 1;
  if (g.threads != QGC_SHARE_THREADS_MIN && g.threads != QGC_SHARE_THREADS_MAX) return cudaErrorInvalidValue;
  const int count = g.threads == QGC_SHARE_THREADS_MAX;
  const ShareFn fn = kShareFns[(((int)L->id * kCounts + count) * 2 + (a->x_dtype == QGEMV_BF16)) * kNorms + norm];
  const size_t xs = a->x_dtype == QGEMV_BF16 ? 2 : 4, ys = a->y_dtype == QGEMV_BF16 ? 2 : 4;
  qgc::ShareParams p = {};
  p.codes = reinterpret_cast<const uint4 *>(L->share_codes);
  p.scales = L->share_scales;
  p.gamma = a->gamma;
  p.n = (int)L->n;
  p.k = (int)L->k;
  p.nkw = g.nkw;
  p.nblk = g.nblk;
  p.rp = g.rp;
  p.lg_rp = g.lg_rp;
  p.kparts = g.kparts;
  p.passes = g.passes;
  p.jw = g.jw;
  p.items = g.items;
  p.gp = g.gp;
  p.sreg = g.sreg;
  p.xs_bytes = g.xs_bytes;
  p.eps = a->eps;
  p.y_bf16 = a->y_dtype == QGEMV_BF16;
  p.g_vec = (uintptr_t)a->gamma % 16 == 0;
  for (int64_t r = 0; r < a->m; r++) {
    p.x = static_cast<const char *>(a->x) + (size_t)r * (size_t)L->k * xs;
    p.y = static_cast<char *>(a->y) + (size_t)r * (size_t)L->n * ys;
    p.x_vec = (uintptr_t)p.x % 16 == 0;
    void *args[] = {&p};
    const cudaError_t e = qgc::launch_ex((const void *)fn, dim3((unsigned)g.ctas), dim3((unsigned)g.threads),
                                         (size_t)g.smem, s, pdl, args);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
