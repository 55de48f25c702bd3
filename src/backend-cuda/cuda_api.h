/* The CUDA module's vtable entries, as plain C prototypes: module.c (C, no
 * CUDA headers) assembles the vtable from them; the .cu files define them. */
#ifndef QGC_CUDA_API_H
#define QGC_CUDA_API_H

#include <stdbool.h>

#include "../core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cuda_core.cu: devices, contexts, streams, memory, errors */
const char *qgc_error_detail(void);
int qgc_device_count(void);
const char *qgc_build_info(void);
qgemv_status qgc_open(int device, void **state, int *device_opened);
void qgc_close(void *state);
qgemv_status qgc_device_info(void *state, qgemv_device_info *info);
qgemv_status qgc_set_stream(void *state, void *native_stream);
qgemv_status qgc_sync(void *state);
qgemv_status qgc_alloc(void *state, size_t bytes, void **ptr);
void qgc_free(void *state, void *ptr);
qgemv_status qgc_copy_in(void *state, void *dst, const void *host_src, size_t bytes);
qgemv_status qgc_copy_out(void *state, void *host_dst, const void *src, size_t bytes);

/* weight_upload.cu: the resident layout */
qgemv_status qgc_weight_upload(void *state, const qgemv_weight_desc *desc, qg_layout_id id, int64_t max_m,
                               void **layout, size_t *resident_bytes);
void qgc_weight_free(void *state, void *layout);
const char *qgc_weight_form(void *state, const void *layout);

/* matvec.cu: geometry and launches */
qgemv_status qgc_matvec(void *state, const qg_matvec_args *args);
/* Whether the module has matvec kernels for a layout. */
bool qgc_has_kernels(qg_layout_id id);

/* bandwidth.cu: the streaming-read roofline */
qgemv_status qgc_read_bandwidth(void *state, size_t bytes, double *gbs);

/* cublas_baseline.cu: cuBLAS bf16 GEMV loaded at run time */
qgemv_status qgc_dense_bf16_time(void *state, int64_t n, int64_t k, int64_t m, int copies, double min_time,
                                 double *seconds);

#ifdef __cplusplus
}
#endif
#endif
