/* The matvec kernel instantiated for one format (QGC_Q2G64). */
#include "kernels_launch.cuh"

cudaError_t qgc_launch_q2g64(int mode, const qgc::MatvecParams &p, unsigned grid, size_t smem, cudaStream_t s) {
  return qgc::launch_fmt<QGC_Q2G64>(mode, p, grid, smem, s);
}

cudaError_t qgc_prepare_q2g64(size_t smem_optin) { return qgc::prepare_fmt<QGC_Q2G64>(smem_optin); }
