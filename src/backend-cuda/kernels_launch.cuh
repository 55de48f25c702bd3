/* Instantiation and launch of the kernels of one layout (included by one
 * .cu file per layout, so the instantiations compile in parallel). */
#ifndef QGC_KERNELS_LAUNCH_CUH
#define QGC_KERNELS_LAUNCH_CUH

#include <cuda_runtime_api.h>

#include <utility>

#include "kernels_matvec.cuh"
#include "kernels_tail.cuh"
#include "matvec_launch.h"

namespace qgc {

using KernelFn = void (*)(Params);

/* The layout's kernels: its activation modes (NF4: one or two fp16 terms;
 * Q2_0: direct bf16, three bf16 terms, int8 digits, direct with gamma in
 * A, two cut bf16 terms of x gamma) x NG 1, 2, 4 x T 1, 2 x B per warp or
 * per CTA, at index [mode][log2 ng][t - 1][bs] (the fourth mode from 38,
 * after the wide kernels, the fifth from 56), and the second mode's NG 3
 * (kB3 in 24 columns) from 50; null where groups_ok or max_tiles does not
 * allow NG or T, where warp_b_ok does not allow B per warp, and for NF4's
 * third, fourth and fifth modes. */
template <int L>
struct Kernels {
  using F = Fmt<L>;
  static constexpr int X0 = F::kNF4 ? kS1 : kDirect, X1 = F::kNF4 ? kS2 : kB3, X2 = kI4, X3 = kDG, X4 = kB2;
  /* [36]: the wide kernel (kWideWarps); [37]: QGC_EXP_WIDEB3's; [54], [55]:
   * NF4's two column groups at two tiles (QGC_EXP_NG2T2), one fp16 term
   * and two */
  static constexpr int kCount = 68;
  /* A regular kernel's index (every one but 36, 37, 54, 55), which of()
   * looks up and fn() checks its own arithmetic against. */
  static constexpr int index_of(int xm, int ng, int t, int bs) {
    const int base = ng == 3 ? 50 : xm == X4 ? 56 : xm == X3 ? 38 : xm == X2 ? 24 : xm == X1 ? 12 : 0;
    return base + (ng == 3 ? 0 : (ng == 4 ? 2 : ng - 1) * 4) + (t - 1) * 2 + bs;
  }
  template <int I>
  static constexpr KernelFn fn() {
    constexpr int WT = wide_tiles(F::kNF4);
    if constexpr (I == 36) {
      static_assert(wide_config(F::kNF4, X0, 1, WT, 1), "the wide kernel's configuration");
      return matvec_kernel<L, X0, 1, WT, 1, kWideWarps>;
    } else if constexpr (I >= 54 && I < 56) {
      if constexpr (ng2t2_config(F::kNF4, 2, 2, 1))
        return matvec_kernel<L, I == 54 ? X0 : X1, 2, 2, 1, kNg2T2Warps>;
      else
        return nullptr;
    } else if constexpr (I == 37) {
      if constexpr (wide_config(F::kNF4, X1, 1, WT, 1))
        return matvec_kernel<L, X1, 1, WT, 1, kWideWarps>;
      else
        return nullptr;
    } else {
      constexpr int XM = I < 12 ? X0 : I < 24 ? X1 : I < 36 ? X2 : I < 50 ? X3 : I < 56 ? X1 : X4;
      constexpr int J = I < 36 ? I : I < 50 ? I - 38 : I < 56 ? I - 50 : I - 56;
      constexpr int NG = I >= 50 && I < 56 ? 3 : 1 << ((J / 4) % 3), T = (J / 2) % 2 + 1, BS = J % 2;
      static_assert(index_of(XM, NG, T, BS) == I, "of() would not find this kernel at its index");
      if constexpr (groups_ok(XM, F::kGroup, NG) && T <= max_tiles<F::kNF4 ? QGEMV_NF4 : QGEMV_Q2_0>(NG, XM) &&
                    (I < 24 || !F::kNF4) && (BS || warp_b_ok(XM, NG)))
        return matvec_kernel<L, XM, NG, T, BS>;
      else
        return nullptr;
    }
  }
  /* kB2's kernels where the plan takes them (B per CTA, one tile, 8 and
   * 16 columns): of() finds them at 56 + ... */
  static_assert(F::kNF4 || (fn<57>() != nullptr && fn<61>() != nullptr), "kB2's kernels at 56 + [ng][t][bs]");
  template <int... I>
  static KernelFn pick(int i, std::integer_sequence<int, I...>) {
    KernelFn f = nullptr;
    ((i == I ? (f = fn<I>(), 0) : 0), ...);
    return f;
  }
  static KernelFn at(int i) { return pick(i, std::make_integer_sequence<int, kCount>()); }
  static KernelFn of(const KernelChoice &c) {
    if (c.block > (unsigned)kMaxThreads) return at(c.xm == X1 ? 37 : 36);
    if (ng2t2_config(F::kNF4, c.ng, c.t, c.bs))
      return c.block <= 32u * kNg2T2Warps ? at(c.xm == X1 ? 55 : 54) : nullptr;
    if (c.ng == 3 && c.xm != X1) return nullptr;
    return at(index_of(c.xm, c.ng, c.t, c.bs));
  }
};

inline cudaError_t launch_ex(const void *fn, dim3 grid, dim3 block, size_t smem, cudaStream_t s, bool pdl,
                             void **args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelExC(&cfg, fn, args);
}

}  // namespace qgc

template <int L>
cudaError_t qgc_launch(const qgc::KernelChoice &kc, const qgc::Params &p, cudaStream_t s, bool pdl) {
  qgc::Params arg = p;
  void *args[] = {&arg};
  return qgc::launch_ex((const void *)qgc::Kernels<L>::of(kc), dim3(kc.grid), dim3(kc.block), kc.smem, s, pdl, args);
}

template <int L>
const void *qgc_tail_fn() {
  using F = qgc::Fmt<L>;
  return (const void *)qgc::tail_kernel<F::kNF4 ? QGEMV_NF4 : QGEMV_Q2_0, F::kGroup>;
}

template <int L>
cudaError_t qgc_launch_tail(const qgc::TailParams &p, unsigned ys, cudaStream_t s, bool pdl) {
  qgc::TailParams arg = p;
  void *args[] = {&arg};
  return qgc::launch_ex(qgc_tail_fn<L>(), dim3((unsigned)p.nrows, ys), dim3(qgc::kTailThreads), 0, s, pdl, args);
}

template <int L>
cudaError_t qgc_prepare(size_t smem_optin) {
  cudaError_t e = cudaSuccess;
  for (int i = 0; i < qgc::Kernels<L>::kCount && e == cudaSuccess; i++) {
    const void *fn = (const void *)qgc::Kernels<L>::at(i);
    if (fn == nullptr) continue;
    cudaFuncAttributes attr;
    e = cudaFuncGetAttributes(&attr, fn);
    if (e == cudaSuccess && attr.sharedSizeBytes > smem_optin) e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
      e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)(smem_optin - attr.sharedSizeBytes));
  }
  cudaFuncAttributes tail;
  return e == cudaSuccess ? cudaFuncGetAttributes(&tail, qgc_tail_fn<L>()) : e;
}

/* One layout's instantiation, for its file. */
#define QGC_INSTANTIATE(L)                                                                                        \
  template cudaError_t qgc_launch<L>(const qgc::KernelChoice &kc, const qgc::Params &p, cudaStream_t s,        \
                                     bool pdl);                                                                 \
  template cudaError_t qgc_launch_tail<L>(const qgc::TailParams &p, unsigned ys, cudaStream_t s, bool pdl);     \
  template cudaError_t qgc_prepare<L>(size_t smem_optin)

#endif
