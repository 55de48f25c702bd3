/* Weight upload: the packed host weight (DESIGN.md s.4) is repacked on the
 * host into a resident layout, a run at a time (so the host needs only a
 * bounded buffer), and copied to one device allocation. The tiles of
 * layout.h (repack.c; the last n % 16 rows follow as packed) serve every
 * m; a weight uploaded for m = 1 takes the lookup-table layout of
 * lut_layout.h (lut_repack.c, large shapes) or the share layout of
 * share_layout.h (share_repack.c, small ones) where it is faster
 * (choose_lut, choose_share). */
#include <stdlib.h>

#include <new>

#include "cuda_state.h"
#include "layout.h"
#include "lut_matvec.h"

static const size_t kChunkBytes = 32u << 20; /* host staging per copy */

static void layout_free(qgc_layout *L) {
  if (L->dev) cudaFree(L->dev);
  cudaGetLastError();
  delete L;
}

static qgemv_status alloc_fail(cudaError_t e, size_t bytes, const qgemv_weight_desc *desc) {
  cudaGetLastError();
  if (e == cudaErrorMemoryAllocation)
    return qgc_fail(QGEMV_ERR_NO_MEMORY, "cannot allocate %zu bytes of device memory for a %lldx%lld weight", bytes,
                    (long long)desc->n, (long long)desc->k);
  return qgc_fail_cuda(e, "cudaMalloc for the weight");
}

/* The lookup-table layout for an NF4 weight used at m = 1 (max_m 1)
 * whose geometry fills the GPU in one wave (qgc_lut_auto), or wherever it
 * fits when QGEMV_CUDA_LAYOUT=lut; never on a device without its 192 KB
 * of shared memory a block. */
static bool choose_lut(const qgc_state *st, const qgemv_weight_desc *d, int64_t max_m, qgc_lut_geom *g) {
  if (st->layout_pref == QGC_LAYOUT_TILES || st->layout_pref == QGC_LAYOUT_SHARE || !qgc_lut_device_ok(st->facts))
    return false;
  if (st->layout_pref == QGC_LAYOUT_LUT)
    return qgc_lut_choose(d->format, d->n, d->k, st->facts.sms, QGC_LUT_ROWS_MIN, g);
  return max_m == 1 && qgc_lut_choose(d->format, d->n, d->k, st->facts.sms, QGC_LUT_AUTO_ROWS_MIN, g) &&
         qgc_lut_auto(d->format, g, st->facts.sms);
}

/* The share layout for a weight used at m = 1 with few rows a CTA
 * (qgc_share_auto: the small shapes), or wherever it fits when
 * QGEMV_CUDA_LAYOUT=share. */
static bool choose_share(const qgc_state *st, const qgemv_weight_desc *d, int64_t max_m, qgc_share_geom *g) {
  if (st->layout_pref == QGC_LAYOUT_TILES || st->layout_pref == QGC_LAYOUT_LUT) return false;
  if (!qgc_share_choose(d->format, d->group, d->n, d->k, st->facts.sms, st->facts.smem_optin,
                         st->facts.tune.st, g)) return false;
  return st->layout_pref == QGC_LAYOUT_SHARE || (max_m == 1 && qgc_share_auto(g));
}

/* One staged run of repacked bytes to the device; the host buffer is
 * reused for the next run, so the copy is waited for. */
static qgemv_status copy_run(cudaStream_t stream, void *dst, const void *host, size_t bytes) {
  cudaError_t e = cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  return e == cudaSuccess ? QGEMV_OK : qgc_fail_cuda(e, "copying the weight to the device");
}

static size_t align256(size_t b) { return (b + 255) & ~(size_t)255; }

/* A form whose codes and scales are each `units` runs of ucb and usb
 * bytes (LUT: chunks of k; share: CTAs), repacked into a bounded host
 * buffer a few units at a time by codes(u0, count, dst) and
 * scales(u0, count, dst). */
template <class Codes, class Scales>
static qgemv_status upload_units(qgc_state *st, uint8_t *dev_codes, uint8_t *dev_scales, int64_t units, size_t ucb,
                                 size_t usb, Codes codes, Scales scales) {
  const size_t run = ucb > usb ? ucb : usb;
  int64_t per = (int64_t)(kChunkBytes / run);
  if (per < 1) per = 1;
  if (per > units) per = units;
  uint8_t *host = static_cast<uint8_t *>(malloc((size_t)per * run));
  if (host == nullptr) return qgc_fail(QGEMV_ERR_NO_MEMORY, "out of host memory for the repack");
  const cudaStream_t stream = st->stream();
  qgemv_status s = QGEMV_OK;
  for (int64_t u0 = 0; s == QGEMV_OK && u0 < units; u0 += per) {
    const int64_t count = u0 + per <= units ? per : units - u0;
    codes(u0, count, host);
    s = copy_run(stream, dev_codes + (size_t)u0 * ucb, host, (size_t)count * ucb);
    if (s != QGEMV_OK) break;
    scales(u0, count, host);
    s = copy_run(stream, dev_scales + (size_t)u0 * usb, host, (size_t)count * usb);
  }
  free(host);
  return s;
}

/* One device allocation of `bytes` into L->dev. */
static qgemv_status alloc_layout(qgc_layout *L, size_t bytes, const qgemv_weight_desc *desc) {
  L->bytes = bytes;
  const cudaError_t e = cudaMalloc(&L->dev, bytes);
  if (e == cudaSuccess) return QGEMV_OK;
  L->dev = nullptr;
  return alloc_fail(e, bytes, desc);
}

/* codes, scales and the workspace in one allocation, each 256-aligned */
static qgemv_status upload_lut(qgc_state *st, const qgemv_weight_desc *desc, qgc_layout *L) {
  const size_t cb = qgc_lut_code_bytes(desc->format, desc->n, desc->k),
               sb = qgc_lut_scale_bytes_total(desc->format, desc->n, desc->k, desc->group),
               wb = qgc_lut_work_bytes(desc->n, L->lut_geom.ksplit);
  const qgemv_status s = alloc_layout(L, align256(cb) + align256(sb) + wb, desc);
  if (s != QGEMV_OK) return s;
  uint8_t *base = static_cast<uint8_t *>(L->dev);
  L->lut_codes = base;
  L->lut_scales = base + align256(cb);
  L->lut_work = reinterpret_cast<double *>(base + align256(cb) + align256(sb));
  const int64_t chunks = desc->k / qgc_lut_chunk_k(desc->format);
  return upload_units(
      st, base, base + align256(cb), chunks, cb / (size_t)chunks, sb / (size_t)chunks,
      [&](int64_t c0, int64_t count, uint8_t *h) { qgc_lut_repack_codes(desc, c0, count, h); },
      [&](int64_t c0, int64_t count, uint8_t *h) { qgc_lut_repack_scales(desc, c0, count, h); });
}

/* codes, then scales (256-aligned, so every CTA's region is 16-aligned
 * for its cp.async) */
static qgemv_status upload_share(qgc_state *st, const qgemv_weight_desc *desc, qgc_layout *L) {
  const qgc_share_geom *g = &L->share_geom;
  const size_t cb = qgc_share_code_bytes(g);
  const qgemv_status s = alloc_layout(L, align256(cb) + qgc_share_scale_bytes(g), desc);
  if (s != QGEMV_OK) return s;
  uint8_t *base = static_cast<uint8_t *>(L->dev);
  L->share_codes = base;
  L->share_scales = base + align256(cb);
  return upload_units(
      st, base, base + align256(cb), g->ctas, qgc_share_cta_code_bytes(g), (size_t)g->sreg,
      [&](int64_t c0, int64_t count, uint8_t *h) { qgc_share_repack_codes(desc, g, c0, count, h); },
      [&](int64_t c0, int64_t count, uint8_t *h) { qgc_share_repack_scales(desc, g, c0, count, h); });
}

extern "C" qgemv_status qgc_weight_upload(void *state, const qgemv_weight_desc *desc, qg_layout_id id, int64_t max_m,
                                          void **out, size_t *resident) {
  qgc_state *st = static_cast<qgc_state *>(state);
  if (!qgc_has_kernels(id))
    return qgc_fail(QGEMV_ERR_UNSUPPORTED, "the CUDA module has no kernels for this weight's layout (id %d, group %d)",
                    (int)id, (int)desc->group);
  DeviceGuard guard(st->device);
  qgc_layout *L = new (std::nothrow) qgc_layout();
  if (L == nullptr) return qgc_fail(QGEMV_ERR_NO_MEMORY, "out of host memory");
  qgc_layout_shape(L, desc, id);
  const bool share = choose_share(st, desc, max_m, &L->share_geom);
  if (share || choose_lut(st, desc, max_m, &L->lut_geom)) {
    L->form = share ? QGC_FORM_SHARE : QGC_FORM_LUT;
    const qgemv_status s = share ? upload_share(st, desc, L) : upload_lut(st, desc, L);
    if (s != QGEMV_OK) {
      layout_free(L);
      return s;
    }
    *out = L;
    *resident = L->bytes;
    return QGEMV_OK;
  }
  L->for_m1 = max_m == 1;
  const size_t tiles_bytes = (size_t)L->ntiles * (size_t)L->tile_bytes, tail_bytes = L->bytes - tiles_bytes;

  qgemv_status s = alloc_layout(L, L->bytes, desc);
  if (s != QGEMV_OK) {
    layout_free(L);
    return s;
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
  if (host == nullptr) s = qgc_fail(QGEMV_ERR_NO_MEMORY, "out of host memory for the repack");
  const cudaStream_t stream = st->stream();
  char *dev = static_cast<char *>(L->dev);
  for (int64_t t0 = 0; s == QGEMV_OK && t0 < L->ntiles; t0 += per) {
    const int64_t count = t0 + per <= L->ntiles ? per : L->ntiles - t0;
    qgc_repack_tiles(L, desc, t0, count, host);
    s = copy_run(stream, dev + (size_t)t0 * (size_t)L->tile_bytes, host, (size_t)count * (size_t)L->tile_bytes);
  }
  if (s == QGEMV_OK && tail_bytes) {
    qgc_repack_tail(L, desc, host);
    s = copy_run(stream, dev + tiles_bytes, host, tail_bytes);
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

extern "C" const char *qgc_weight_form(void *state, const void *layout) {
  (void)state;
  const qgc_form f = static_cast<const qgc_layout *>(layout)->form;
  return f == QGC_FORM_LUT ? "lut" : f == QGC_FORM_SHARE ? "share" : "tiles";
}
