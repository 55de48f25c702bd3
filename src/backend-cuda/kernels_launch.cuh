/* Instantiation and launch of the matvec kernel for one format (included by
 * one .cu file per format, so the instantiations compile in parallel). */
#ifndef QGC_KERNELS_LAUNCH_CUH
#define QGC_KERNELS_LAUNCH_CUH

#include <cuda_runtime_api.h>

#include "kernels_matvec.cuh"
#include "matvec_launch.h"

namespace qgc {

template <int FMT>
cudaError_t launch_fmt(int mode, const MatvecParams &p, unsigned grid, size_t smem, cudaStream_t s) {
  switch (mode) {
    case QGC_MODE_STAGED1:
      matvec_kernel<FMT, false, 1, 1><<<grid, kThreads, smem, s>>>(p);
      break;
    case QGC_MODE_STAGED2:
      if (p.ncols > 8)
        matvec_kernel<FMT, false, 2, 2><<<grid, kThreads, smem, s>>>(p);
      else
        matvec_kernel<FMT, false, 2, 1><<<grid, kThreads, smem, s>>>(p);
      break;
    default:
      if constexpr (Fmt<FMT>::kQ2) {
        if (p.m_active > 8)
          matvec_kernel<FMT, true, 1, 2><<<grid, kThreads, smem, s>>>(p);
        else
          matvec_kernel<FMT, true, 1, 1><<<grid, kThreads, smem, s>>>(p);
      }
      break;
  }
  return cudaGetLastError();
}

template <typename K>
cudaError_t allow_smem(K kernel, size_t bytes, size_t optin) {
  if (bytes > optin) return cudaErrorInvalidValue;
  cudaFuncAttributes attr;
  cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

/* Raises each instantiation's dynamic shared memory limit to the most a
 * launch of it can ask for (over 48 KB needs the opt-in). Done for every
 * kernel, small ones too: it also loads the kernel now (CUDA loads modules
 * lazily), so that a matvec never needs device memory, even on a full
 * device. */
template <int FMT>
cudaError_t prepare_fmt(size_t optin) {
  /* Two column groups: at most what the device allows; the plan gives such a
   * launch fewer rows where 16 columns would not fit (qgc_make_plan). */
  const size_t ng2_2 = smem_bytes(FMT, false, 2, kMaxRoundBlocks, 16);
  cudaError_t e = allow_smem(matvec_kernel<FMT, false, 1, 1>, smem_bytes(FMT, false, 1, kMaxRoundBlocks, 8), optin);
  if (e == cudaSuccess)
    e = allow_smem(matvec_kernel<FMT, false, 2, 1>, smem_bytes(FMT, false, 2, kMaxRoundBlocks, 8), optin);
  if (e == cudaSuccess) e = allow_smem(matvec_kernel<FMT, false, 2, 2>, ng2_2 < optin ? ng2_2 : optin, optin);
  if constexpr (Fmt<FMT>::kQ2) {
    if (e == cudaSuccess) e = allow_smem(matvec_kernel<FMT, true, 1, 1>, smem_bytes(FMT, true, 1, 0, 0), optin);
    if (e == cudaSuccess) e = allow_smem(matvec_kernel<FMT, true, 1, 2>, smem_bytes(FMT, true, 1, 0, 0), optin);
  }
  return e;
}

}  // namespace qgc

template <int L>
cudaError_t qgc_launch(int mode, const qgc::MatvecParams &p, unsigned grid, size_t smem, cudaStream_t s) {
  return qgc::launch_fmt<L>(mode, p, grid, smem, s);
}

template <int L>
cudaError_t qgc_prepare(size_t smem_optin) {
  return qgc::prepare_fmt<L>(smem_optin);
}

/* One layout's instantiation, for its file. */
#define QGC_INSTANTIATE(L)                                                                                      \
  template cudaError_t qgc_launch<L>(int mode, const qgc::MatvecParams &p, unsigned grid, size_t smem,       \
                                     cudaStream_t s);                                                         \
  template cudaError_t qgc_prepare<L>(size_t smem_optin)

#endif
