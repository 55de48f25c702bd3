/* The matvec kernel instantiated for one format (QGC_NF4). */
#include "kernels_launch.cuh"

cudaError_t qgc_launch_nf4(int mode, const qgc::MatvecParams &p, unsigned grid, size_t smem, cudaStream_t s) {
  return qgc::launch_fmt<QGC_NF4>(mode, p, grid, smem, s);
}

cudaError_t qgc_prepare_nf4(size_t smem_optin) { return qgc::prepare_fmt<QGC_NF4>(smem_optin); }
