/* Weight upload: the packed host weight (DESIGN.md s.4) is repacked on the
 * host into the resident layout of layout.h (repack.c), a run of tiles at a
 * time (so the host needs only a bounded buffer), and copied to one device
 * allocation; the last n % 16 rows follow as packed. */
#include <stdlib.h>

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
  qgc_layout_shape(L, desc, id);
  const size_t tiles_bytes = (size_t)L->ntiles * (size_t)L->tile_bytes, tail_bytes = L->bytes - tiles_bytes;

  cudaError_t e = cudaMalloc(&L->dev, L->bytes);
  if (e != cudaSuccess) {
    L->dev = nullptr;
    cudaGetLastError();
    const size_t bytes = L->bytes;
    layout_free(L);
    if (e == cudaErrorMemoryAllocation)
      return qgc_fail(QGEMV_ERR_NO_MEMORY, "cannot allocate %zu bytes of device memory for a %lldx%lld weight", bytes,
                      (long long)desc->n, (long long)desc->k);
    return qgc_fail_cuda(e, "cudaMalloc for the weight");
  }
  L->tiles = static_cast<const uint8_t *>(L->dev);
  L->tail = tail_bytes ? L->tiles + tiles_bytes : nullptr;

  /* Tiles per host chunk: one at least; the tail rows' bytes fit too. */
  int64_t per = (int64_t)(kChunkBytes / (size_t)L->tile_bytes);
  if (per < 1) per = 1;
  if (per > L->ntiles) per = L->ntiles;
  size_t host_bytes = (size_t)per * (size_t)L->tile_bytes;
  if (host_bytes < tail_bytes) host_bytes = tail_bytes;
  uint8_t *host = static_cast<uint8_t *>(malloc(host_bytes));
  qgemv_status s = host ? QGEMV_OK : qgc_fail(QGEMV_ERR_NO_MEMORY, "out of host memory for the repack");
  const cudaStream_t stream = st->stream();
  auto copy = [&](size_t offset, size_t bytes) {
    e = cudaMemcpyAsync(static_cast<char *>(L->dev) + offset, host, bytes, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* the host buffer is reused */
    if (e != cudaSuccess) s = qgc_fail_cuda(e, "copying the weight to the device");
  };
  for (int64_t t0 = 0; s == QGEMV_OK && t0 < L->ntiles; t0 += per) {
    const int64_t count = t0 + per <= L->ntiles ? per : L->ntiles - t0;
    qgc_repack_tiles(L, desc, t0, count, host);
    copy((size_t)t0 * (size_t)L->tile_bytes, (size_t)count * (size_t)L->tile_bytes);
  }
  if (s == QGEMV_OK && tail_bytes) {
    qgc_repack_tail(L, desc, host);
    copy(tiles_bytes, tail_bytes);
  }
  free(host);
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
