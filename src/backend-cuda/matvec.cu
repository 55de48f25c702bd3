/* qgemv_matvec on the device: one launch per group of activation rows,
 * after the plan (matvec_plan.h). Allocates nothing (graph-capturable). */
#include <limits.h>

#include "cuda_state.h"
#include "matvec_plan.h"

bool qgc_has_kernels(qg_layout_id id) {
  return qgc_with_layout(id, [](auto) {});
}

qgemv_status qgc_matvec_prepare(const qgc_state *st) {
  cudaError_t e = cudaSuccess;
  for (int id = 0; id < QG_LAYOUT_COUNT && e == cudaSuccess; id++)
    qgc_with_layout(id, [&](auto lay) { e = qgc_prepare<decltype(lay)::value>(st->smem_optin); });
  if (e == cudaErrorInvalidValue)
    return qgc_fail(QGEMV_ERR_UNSUPPORTED,
                    "CUDA device %d allows %zu bytes of shared memory per block; the kernels need %zu", st->device,
                    st->smem_optin, qgc::smem_bytes(QG_LAYOUT_NF4, false, 1, qgc::kMaxRoundBlocks, 8));
  if (e != cudaSuccess) return qgc_fail_cuda(e, "setting kernel attributes");
  return QGEMV_OK;
}

extern "C" qgemv_status qgc_matvec(void *state, const qg_matvec_args *a) {
  qgc_state *st = static_cast<qgc_state *>(state);
  const qgc_layout *L = static_cast<const qgc_layout *>(a->layout);
  DeviceGuard guard(st->device);
  qgc_plan pl = qgc_make_plan(L, a, st->sms, st->smem_optin);
  if (pl.grid > INT_MAX) return qgc_fail(QGEMV_ERR_UNSUPPORTED, "n=%lld is too large for one launch", (long long)L->n);
  const cudaStream_t stream = st->stream();
  for (int64_t r0 = 0; r0 < a->m; r0 += pl.slots) {
    qgc_plan_rows(&pl, L, a, r0);
    const size_t smem = qgc_plan_smem(&pl, L);
    cudaError_t e = cudaErrorInvalidValue; /* unreachable: upload refuses layouts without kernels */
    qgc_with_layout(L->id, [&](auto lay) {
      e = qgc_launch<decltype(lay)::value>(pl.mode, pl.p, (unsigned)pl.grid, smem, stream);
    });
    if (e != cudaSuccess) return qgc_fail_cuda(e, "launching the matvec kernel");
  }
  return QGEMV_OK;
}
