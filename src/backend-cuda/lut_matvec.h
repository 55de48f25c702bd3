/* The lookup-table kernel's host side (lut_matvec.cu), for weight_upload.cu
 * and matvec.cu (C++ only). */
#ifndef QGC_LUT_MATVEC_H
#define QGC_LUT_MATVEC_H

#include <cuda_runtime_api.h>

#include "../core/backend.h"
#include "layout.h"
#include "matvec_launch.h"

/* Whether the device can run the kernel: 192 KB of shared memory a block
 * (Hopper; not GB10's 99 KB). */
bool qgc_lut_device_ok(const qgc_device_facts &d);
/* Per device, at open: the kernels' shared-memory attribute. */
cudaError_t qgc_lut_prepare(const qgc_device_facts &d);
/* The matvec on a weight in the lookup-table layout: per activation row,
 * the main kernel and the k-split's sum; pdl: both as programmatic
 * dependents of the kernel before them (sm_90 and newer). */
cudaError_t qgc_lut_launch(const qgc_layout *L, const qg_matvec_args *a, cudaStream_t s, bool pdl);

#endif
