/* The qgemv-cuda module's one exported symbol: it reports the backend ABI
 * this module was built for and hands out the vtable and auto priority. Everything else in
 * the module is hidden (-export-symbols-regex in local.mk). */
#include "cuda_api.h"

static const qg_backend cuda_backend = {
    .abi = QG_BACKEND_ABI,
    .name = "cuda",
    .error_detail = qgc_error_detail,
    .device_count = qgc_device_count,
    .build_info = qgc_build_info,
    .open = qgc_open,
    .close = qgc_close,
    .device_info = qgc_device_info,
    .set_stream = qgc_set_stream,
    .sync = qgc_sync,
    .alloc = qgc_alloc,
    .free = qgc_free,
    .copy_in = qgc_copy_in,
    .copy_out = qgc_copy_out,
    .weight_upload = qgc_weight_upload,
    .weight_free = qgc_weight_free,
    .weight_form = qgc_weight_form,
    .matvec = qgc_matvec,
    .read_bandwidth = qgc_read_bandwidth,
    .dense_bf16_time = qgc_dense_bf16_time,
    .dense_library = "cuBLAS",
};

/* auto prefers a GPU to the CPU: 100 leaves room on both sides for other
 * device modules. */
static const qg_module cuda_module = {.backend = &cuda_backend, .auto_priority = 100};

__attribute__((visibility("default"))) const void *qgemv_module_entry(unsigned *abi);

const void *qgemv_module_entry(unsigned *abi) {
  if (abi) *abi = QG_BACKEND_ABI;
  return &cuda_module;
}
