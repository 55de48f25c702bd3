/* Launch entry points of the per-format kernel files (matvec_nf4.cu,
 * matvec_q2g64.cu, matvec_q2g128.cu), used by matvec.cu. */
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

cudaError_t qgc_launch_nf4(int mode, const qgc::MatvecParams &p, unsigned grid, size_t smem, cudaStream_t s);
cudaError_t qgc_launch_q2g64(int mode, const qgc::MatvecParams &p, unsigned grid, size_t smem, cudaStream_t s);
cudaError_t qgc_launch_q2g128(int mode, const qgc::MatvecParams &p, unsigned grid, size_t smem, cudaStream_t s);
cudaError_t qgc_prepare_nf4(size_t smem_optin);
cudaError_t qgc_prepare_q2g64(size_t smem_optin);
cudaError_t qgc_prepare_q2g128(size_t smem_optin);

#endif
