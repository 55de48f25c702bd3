/* Launch entry points of the matvec kernels, one instantiation per layout
 * (matvec_nf4.cu, matvec_q2g64.cu, matvec_q2g128.cu: one file each, so that
 * they compile in parallel), used by matvec.cu through qgc_with_layout
 * (matvec_plan.h). */
#ifndef QGC_MATVEC_LAUNCH_H
#define QGC_MATVEC_LAUNCH_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#include "plan_tune.h"

/* What the plan needs of a device (read once, at open). */
struct qgc_device_facts {
  int sms;
  size_t smem_optin; /* per block */
  size_t smem_per_sm;
  bool pdl;          /* programmatic dependent launch: sm_90 and newer */
  qgc_plan_tune tune; /* QGEMV_CUDA_PLAN (zeroed: none) */
};

namespace qgc {
struct Params;
struct TailParams;

/* Which instantiation of matvec_kernel a launch runs, and its shape. */
struct KernelChoice {
  int xm, ng, t, bs; /* XMode, column groups, tiles per warp, B per CTA */
  unsigned grid, block;
  size_t smem;       /* dynamic shared memory */
};
}  // namespace qgc

/* Defined in kernels_launch.cuh, instantiated for layout L in its file.
 * pdl: launch with programmatic stream serialization (sm_90 and newer). */
template <int L>
cudaError_t qgc_launch(const qgc::KernelChoice &kc, const qgc::Params &p, cudaStream_t s, bool pdl);
template <int L>
cudaError_t qgc_launch_tail(const qgc::TailParams &p, unsigned ys, cudaStream_t s, bool pdl);
/* Per device: every kernel of the layout may use the shared memory the
 * device allows (and is loaded now, not in the first matvec). */
template <int L>
cudaError_t qgc_prepare(size_t smem_optin);

#endif
