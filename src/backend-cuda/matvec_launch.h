/* Launch entry points of the matvec kernels, one instantiation per layout
 * (matvec_nf4.cu, matvec_q2g64.cu, matvec_q2g128.cu: one file each, so that
 * they compile in parallel), used by matvec.cu through qgc_with_layout
 * (matvec_plan.h). */
#ifndef QGC_MATVEC_LAUNCH_H
#define QGC_MATVEC_LAUNCH_H

#include <cuda_runtime_api.h>
#include <stddef.h>

namespace qgc {
struct MatvecParams;
}

/* Operand modes (kernels_matvec.cuh): direct bf16 (Q2_0 only), staged fp16
 * with one or two split terms of x. */
enum { QGC_MODE_DIRECT = 0, QGC_MODE_STAGED1 = 1, QGC_MODE_STAGED2 = 2 };

/* Defined in kernels_launch.cuh, instantiated for layout L in its file. */
template <int L>
cudaError_t qgc_launch(int mode, const qgc::MatvecParams &p, unsigned grid, size_t smem, cudaStream_t s);
template <int L>
cudaError_t qgc_prepare(size_t smem_optin);

#endif
