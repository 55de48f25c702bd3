/* Weight upload: the packed host weight (DESIGN.md s.4) is repacked on the
 * host into the resident layout of layout.h (repack.c), in chunks of rows
 * (so the host needs only a chunk-sized buffer), and copied to one device
 * allocation. */
#include <stdlib.h>
#include <string.h>

#include <new>

#include "cuda_state.h"
#include "layout.h"

static const size_t kChunkBytes = 32u << 20; /* host staging per copy */

static void layout_free(qgc_layout *L) {
  if (L->dev) cudaFree(L->dev);
  cudaGetLastError();
  delete L;
}

extern "C" qgemv_status qgc_weight_upload(void *state, const qgemv_weight_desc *desc, qg_layout_id id, void **out,
                                          size_t *resident) {
  qgc_state *st = static_cast<qgc_state *>(state);
  if (!qgc_has_kernels(id))
    return qgc_fail(QGEMV_ERR_UNSUPPORTED, "the CUDA module has no kernels for this weight's layout (id %d, group %d)",
                    (int)id, (int)desc->group);
  DeviceGuard guard(st->device);
  qgc_layout *L = new (std::nothrow) qgc_layout();
  if (L == nullptr) return qgc_fail(QGEMV_ERR_NO_MEMORY, "out of host memory");
  const int64_t n = desc->n, k = desc->k;
  qgc_layout_shape(L, desc, id);
  const int ss = qgc_scale_size(L->id);
  const int64_t scales_per_row = k / L->group;
  const size_t code_bytes = (size_t)n * (size_t)L->row_bytes;
  const size_t scale_bytes = L->bytes - code_bytes;

  cudaError_t e = cudaMalloc(&L->dev, L->bytes);
  if (e != cudaSuccess) {
    L->dev = nullptr;
    cudaGetLastError();
    layout_free(L);
    if (e == cudaErrorMemoryAllocation)
      return qgc_fail(QGEMV_ERR_NO_MEMORY, "cannot allocate %zu bytes of device memory for a %lldx%lld weight",
                      code_bytes + scale_bytes, (long long)n, (long long)k);
    return qgc_fail_cuda(e, "cudaMalloc for the weight");
  }
  L->codes = static_cast<const uint8_t *>(L->dev);
  L->scales = static_cast<const char *>(L->dev) + code_bytes;

  /* Rows per chunk: codes and scales of a chunk fit kChunkBytes. */
  const size_t per_row = (size_t)L->row_bytes + (size_t)scales_per_row * (size_t)ss;
  int64_t chunk = (int64_t)(kChunkBytes / per_row);
  if (chunk < 1) chunk = 1;
  if (chunk > n) chunk = n;
  const int spseg = qgc_seg_scales(L->id, L->group);
  const int64_t nfull = k / qgc_seg_k(L->id), tail_scales = scales_per_row - nfull * spseg;
  uint8_t *codes = static_cast<uint8_t *>(malloc((size_t)chunk * (size_t)L->row_bytes));
  char *scales = static_cast<char *>(malloc((size_t)chunk * (size_t)scales_per_row * (size_t)ss));
  uint8_t *tmp = static_cast<uint8_t *>(malloc((size_t)L->row_bytes));
  uint16_t *row_scales = static_cast<uint16_t *>(malloc((size_t)scales_per_row * sizeof(uint16_t)));
  qgemv_status s = QGEMV_OK;
  if (!codes || !scales || !tmp || !row_scales)
    s = qgc_fail(QGEMV_ERR_NO_MEMORY, "out of host memory for the repack");
  const cudaStream_t stream = st->stream();
  for (int64_t r0 = 0; s == QGEMV_OK && r0 < n; r0 += chunk) {
    const int64_t rows = r0 + chunk <= n ? chunk : n - r0;
    /* codes of the rows, and their scales as a [segment][rows] + tail
     * image that goes to the segment-major slices below */
    qgc_repack_rows(desc, L->id, r0, rows, codes, scales, tmp, row_scales);
    e = cudaMemcpyAsync(static_cast<char *>(L->dev) + (size_t)r0 * (size_t)L->row_bytes, codes,
                        (size_t)rows * (size_t)L->row_bytes, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess && nfull) /* one slice per segment: a 2D copy */
      e = cudaMemcpy2DAsync(const_cast<char *>(L->scales) + (size_t)r0 * spseg * ss, (size_t)n * spseg * ss, scales,
                            (size_t)rows * spseg * ss, (size_t)rows * spseg * ss, (size_t)nfull,
                            cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess && tail_scales)
      e = cudaMemcpyAsync(const_cast<char *>(L->scales) +
                              ((size_t)nfull * (size_t)n * spseg + (size_t)r0 * tail_scales) * ss,
                          scales + (size_t)nfull * (size_t)rows * spseg * ss, (size_t)rows * tail_scales * ss,
                          cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* the host buffers are reused */
    if (e != cudaSuccess) s = qgc_fail_cuda(e, "copying the weight to the device");
  }
  free(codes);
  free(scales);
  free(tmp);
  free(row_scales);
  if (s != QGEMV_OK) {
    layout_free(L);
    return s;
  }
  *out = L;
  *resident = L->bytes;
  return QGEMV_OK;
}

extern "C" void qgc_weight_free(void *state, void *layout) {
  qgc_state *st = static_cast<qgc_state *>(state);
  DeviceGuard guard(st->device);
  layout_free(static_cast<qgc_layout *>(layout));
}
