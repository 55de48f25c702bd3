/* qgemv_matvec on the device: the plan (matvec_plan.h), then the tail
 * launch (the last n % 16 rows) and one launch per group of activation
 * rows. Allocates nothing (graph-capturable). */
#include <limits.h>

#include "cuda_state.h"
#include "lut_matvec.h"
#include "matvec_plan.h"
#include "share_matvec.h"

bool qgc_has_kernels(qg_layout_id id) {
  return qgc_with_layout(id, [](auto) {});
}

qgemv_status qgc_matvec_prepare(const qgc_state *st) {
  cudaError_t e = cudaSuccess;
  bool fits = true;
  for (int id = 0; id < QG_LAYOUT_COUNT && e == cudaSuccess; id++)
    qgc_with_layout(id, [&](auto lay) {
      constexpr int L = decltype(lay)::value;
      fits = fits && qgc_device_fits<L>(st->facts);
      if (fits) e = qgc_prepare<L>(st->facts.smem_optin);
    });
  if (!fits || e == cudaErrorInvalidValue)
    return qgc_fail(QGEMV_ERR_UNSUPPORTED,
                    "CUDA device %d allows %zu bytes of shared memory per block, too few for the qgemv kernels",
                    st->device, st->facts.smem_optin);
  if (e == cudaSuccess) e = qgc_lut_prepare(st->facts);
  if (e == cudaSuccess) e = qgc_share_prepare(st->facts);
  if (e != cudaSuccess) return qgc_fail_cuda(e, "setting kernel attributes");
  return QGEMV_OK;
}

#if QGC_EXP_TIMELINE
#include <stdio.h>
#include <stdlib.h>

/* The timeline experiment's buffer (one context at a time) and the last
 * launch's facts, for the dump. */
static unsigned long long *tl_buf;
static unsigned tl_seq, tl_grid, tl_block;
static long long tl_n, tl_k, tl_m;

void qgc_timeline_dump() {
  const char *path = getenv("QGEMV_CUDA_TIMELINE");
  if (!tl_buf || !path || !*path) return;
  const size_t words = (size_t)qgc::kTlLaunches * qgc::kTlCtas * qgc::kTlSlots;
  unsigned long long *h = static_cast<unsigned long long *>(malloc(words * 8));
  FILE *f = fopen(path, "wb");
  if (h && f && cudaDeviceSynchronize() == cudaSuccess &&
      cudaMemcpy(h, tl_buf, words * 8, cudaMemcpyDeviceToHost) == cudaSuccess) {
    const unsigned grid = tl_grid < (unsigned)qgc::kTlCtas ? tl_grid : (unsigned)qgc::kTlCtas; /* the kept CTAs */
    const long long hdr[8] = {0x716c74, (long long)tl_seq, (long long)grid, (long long)tl_block, tl_n, tl_k, tl_m,
                              qgc::kTlSlots};
    fwrite(hdr, sizeof hdr, 1, f);
    for (int l = 0; l < qgc::kTlLaunches; l++)
      fwrite(h + (size_t)l * qgc::kTlCtas * qgc::kTlSlots, 8, (size_t)grid * qgc::kTlSlots, f);
  }
  if (f) fclose(f);
  free(h);
  cudaFree(tl_buf);
  tl_buf = nullptr;
}
#endif

#if QGC_EXP_NF4_TEX
/* The experiment's texture of NF4's 256 table entries (one device at a
 * time; made at the first call, so not graph-capturable then). */
static cudaTextureObject_t nf4_tex;
static cudaError_t nf4_tex_make() {
  if (nf4_tex) return cudaSuccess;
  uint2 h[256];
  for (int v = 0; v < 256; v++) h[v] = qgc::nf4_lut_entry(v);
  void *buf = nullptr;
  cudaError_t e = cudaMalloc(&buf, sizeof h);
  if (e == cudaSuccess) e = cudaMemcpy(buf, h, sizeof h, cudaMemcpyHostToDevice);
  cudaResourceDesc rd = {};
  rd.resType = cudaResourceTypeLinear;
  rd.res.linear.devPtr = buf;
  rd.res.linear.desc = cudaCreateChannelDesc<uint2>();
  rd.res.linear.sizeInBytes = sizeof h;
  cudaTextureDesc td = {};
  td.readMode = cudaReadModeElementType;
  if (e == cudaSuccess) e = cudaCreateTextureObject(&nf4_tex, &rd, &td, nullptr);
  return e;
}
#endif

extern "C" qgemv_status qgc_matvec(void *state, const qg_matvec_args *a) {
  qgc_state *st = static_cast<qgc_state *>(state);
  const qgc_layout *L = static_cast<const qgc_layout *>(a->layout);
  DeviceGuard guard(st->device);
  if (L->form == QGC_FORM_LUT) {
    const cudaError_t e = qgc_lut_launch(L, a, st->stream(), st->facts.pdl);
    return e == cudaSuccess ? QGEMV_OK : qgc_fail_cuda(e, "launching the lookup-table matvec kernel");
  }
  if (L->form == QGC_FORM_SHARE) {
    const cudaError_t e = qgc_share_launch(L, a, st->stream(), st->facts.pdl);
    return e == cudaSuccess ? QGEMV_OK : qgc_fail_cuda(e, "launching the share matvec kernel");
  }
  qgc_plan pl = qgc_make_plan(L, a, st->facts);
  if (!pl.fits) {
    char tune[96];
    qgc_plan_tune_format(&st->facts.tune, tune, sizeof tune);
    return qgc_fail(QGEMV_ERR_UNSUPPORTED,
                    "QGEMV_CUDA_PLAN=%s does not fit this call (n=%lld k=%lld m=%lld, %d k-chunks) on CUDA device %d: "
                    "unset it, or ask for fewer warps, fewer k-slices or more phases%s",
                    tune, (long long)a->n, (long long)a->k, (long long)a->m, L->nch, st->device,
                    st->facts.tune.w > qgc::kMaxWarps
                        ? " (more than 16 warps: only bf16 x without RMSNorm, one tile per warp, B per CTA)"
                        : "");
  }
  if (L->ntiles > INT_MAX / 2) return qgc_fail(QGEMV_ERR_UNSUPPORTED, "n=%lld is too large", (long long)L->n);
  const cudaStream_t stream = st->stream();
  cudaError_t e = cudaSuccess; /* upload refuses layouts without kernels */
  if (pl.tail)
    qgc_with_layout(L->id, [&](auto lay) {
      e = qgc_launch_tail<decltype(lay)::value>(pl.tp, pl.tail_ys, stream, pl.pdl);
    });
  for (int64_t r0 = 0; pl.main && e == cudaSuccess && r0 < a->m; r0 += pl.rows) {
    qgc_plan_rows(&pl, a, r0);
#if QGC_EXP_TIMELINE
    if (!tl_buf) {
      const size_t bytes = (size_t)qgc::kTlLaunches * qgc::kTlCtas * qgc::kTlSlots * 8;
      if (cudaMalloc(&tl_buf, bytes) != cudaSuccess || cudaMemset(tl_buf, 0, bytes) != cudaSuccess)
        return qgc_fail(QGEMV_ERR_NO_MEMORY, "timeline buffer");
    }
    pl.p.tl = tl_buf;
    pl.p.tl_launch = tl_seq++;
    tl_grid = pl.kc.grid, tl_block = pl.kc.block, tl_n = a->n, tl_k = a->k, tl_m = a->m;
#endif
#if QGC_EXP_NF4_TEX
    if ((e = nf4_tex_make()) != cudaSuccess) break;
    pl.p.nf4_tex = nf4_tex;
#endif
    qgc_with_layout(L->id, [&](auto lay) { e = qgc_launch<decltype(lay)::value>(pl.kc, pl.p, stream, pl.pdl); });
  }
  if (e != cudaSuccess) return qgc_fail_cuda(e, "launching the matvec kernel");
  return QGEMV_OK;
}
