/* The share kernel's host side (share_matvec.cu), for weight_upload.cu and
 * matvec.cu (C++ only). */
#ifndef QGC_SHARE_MATVEC_H
#define QGC_SHARE_MATVEC_H

#include <cuda_runtime_api.h>

#include "../core/backend.h"
#include "layout.h"
#include "matvec_launch.h"

/* Per device, at open: the kernels' shared-memory attribute (the device's
 * limit: share_layout.h's geometry is chosen against it). */
cudaError_t qgc_share_prepare(const qgc_device_facts &d);
/* The matvec on a weight in the share layout: one launch per activation
 * row; pdl: as a programmatic dependent of the kernel before it (sm_90 and
 * newer). */
cudaError_t qgc_share_launch(const qgc_layout *L, const qg_matvec_args *a, cudaStream_t s, bool pdl);

#endif
