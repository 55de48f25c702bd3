/* The CUDA module's host glue: devices, contexts, streams, memory, errors.
 * cudart is linked statically, so this needs only the driver at run time;
 * without one, device_count says so in words instead of failing later. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "cuda_state.h"

#ifndef QG_CUDA_ARCHS
#define QG_CUDA_ARCHS "unknown"
#endif

static thread_local char detail[512];

qgemv_status qgc_fail(qgemv_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return s;
}

qgemv_status qgc_fail_cuda(cudaError_t e, const char *what) {
  cudaGetLastError(); /* clear a non-sticky error so the context stays usable */
  qgemv_status s = e == cudaErrorMemoryAllocation ? QGEMV_ERR_NO_MEMORY : QGEMV_ERR_DEVICE;
  return qgc_fail(s, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

extern "C" const char *qgc_error_detail(void) { return detail; }

extern "C" int qgc_device_count(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) return n;
  cudaGetLastError();
  if (e == cudaErrorInsufficientDriver) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    cudaGetLastError();
    if (driver == 0)
      qgc_fail(QGEMV_ERR_NO_DEVICE,
               "no NVIDIA driver: libcuda.so.1 was not found (install the NVIDIA driver; this module needs one "
               "supporting CUDA %d.%d)",
               CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    else
      qgc_fail(QGEMV_ERR_NO_DEVICE,
               "no NVIDIA driver new enough: it supports CUDA %d.%d but this module was built with CUDA %d.%d",
               driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
  } else if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
    qgc_fail(QGEMV_ERR_NO_DEVICE, "the NVIDIA driver sees no CUDA device (check nvidia-smi and CUDA_VISIBLE_DEVICES)");
  } else {
    qgc_fail(QGEMV_ERR_NO_DEVICE, "cannot count CUDA devices: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
  }
  return 0;
}

static const char *make_build_info() {
  static char info[256];
  snprintf(info, sizeof info, "cuda archs: %s (+ PTX of the newest); cudart %d.%d static", QG_CUDA_ARCHS,
           CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
  return info;
}

extern "C" const char *qgc_build_info(void) {
  static const char *info = make_build_info(); /* C++ static init: once, thread-safe */
  return info;
}

extern "C" qgemv_status qgc_open(int device, void **state, int *opened) {
  int count = qgc_device_count();
  if (count <= 0) return QGEMV_ERR_NO_DEVICE; /* detail already set */
  if (device >= count)
    return qgc_fail(QGEMV_ERR_NO_DEVICE, "CUDA device %d does not exist: there are %d", device, count);
  if (device < 0) device = qgc_nearest_device(count);
  qgc_state *st = new (std::nothrow) qgc_state();
  if (st == nullptr) return qgc_fail(QGEMV_ERR_NO_MEMORY, "out of host memory");
  st->device = device;
  DeviceGuard guard(device);
  cudaError_t e = cudaFree(nullptr); /* creates the primary context now, not in the first matvec */
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&st->own, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    qgemv_status s = qgc_fail_cuda(e, "cannot initialise the CUDA device");
    delete st;
    return s;
  }
  int smem = 0, smem_sm = 0;
  cudaDeviceGetAttribute(&st->facts.sms, cudaDevAttrMultiProcessorCount, device);
  cudaDeviceGetAttribute(&st->cc_major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&st->cc_minor, cudaDevAttrComputeCapabilityMinor, device);
  cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  st->facts.smem_optin = (size_t)smem;
  st->facts.smem_per_sm = (size_t)smem_sm;
  st->facts.pdl = st->cc_major >= 9; /* griddepcontrol: sm_90 and newer */
  char why[160];
  if (!qgc_plan_tune_parse(getenv("QGEMV_CUDA_PLAN"), &st->facts.tune, why, sizeof why)) {
    cudaStreamDestroy(st->own);
    delete st;
    return qgc_fail(QGEMV_ERR_INVALID_ARG, "QGEMV_CUDA_PLAN: %s", why);
  }
  const char *layout = getenv("QGEMV_CUDA_LAYOUT");
  if (!qgc_layout_pref_parse(layout, &st->layout_pref)) {
    cudaStreamDestroy(st->own);
    delete st;
    return qgc_fail(QGEMV_ERR_INVALID_ARG, "QGEMV_CUDA_LAYOUT=%s: use auto (the default), tiles, lut or share", layout);
  }
  if (st->cc_major < 8) {
    const int major = st->cc_major, minor = st->cc_minor;
    cudaStreamDestroy(st->own);
    delete st;
    return qgc_fail(QGEMV_ERR_UNSUPPORTED,
                    "CUDA device %d has compute capability %d.%d; the qgemv kernels need 8.0 or newer (tensor-core "
                    "mma with bf16)",
                    device, major, minor);
  }
  qgemv_status s = qgc_matvec_prepare(st);
  if (s != QGEMV_OK) {
    cudaStreamDestroy(st->own);
    delete st;
    return s;
  }
  *state = st;
  *opened = device;
  return QGEMV_OK;
}

#if QGC_EXP_TIMELINE
void qgc_timeline_dump();
#endif

extern "C" void qgc_close(void *state) {
  qgc_state *st = static_cast<qgc_state *>(state);
  DeviceGuard guard(st->device);
  cudaStreamSynchronize(st->own);
#if QGC_EXP_TIMELINE
  qgc_timeline_dump();
#endif
  cudaStreamDestroy(st->own);
  cudaGetLastError();
  delete st;
}

extern "C" qgemv_status qgc_device_info(void *state, qgemv_device_info *info) {
  qgc_state *st = static_cast<qgc_state *>(state);
  DeviceGuard guard(st->device);
  cudaDeviceProp prop;
  cudaError_t e = cudaGetDeviceProperties(&prop, st->device);
  if (e != cudaSuccess) return qgc_fail_cuda(e, "cudaGetDeviceProperties");
  snprintf(info->name, sizeof info->name, "%.127s", prop.name);
  info->compute_major = prop.major;
  info->compute_minor = prop.minor;
  info->units = prop.multiProcessorCount;
  info->threads = 0;
  info->memory_bytes = prop.totalGlobalMem;
  info->llc_bytes = (uint64_t)prop.l2CacheSize;
  /* Peak = memory clock (kHz) x 2 (double data rate) x bus width (bytes);
   * 0 where the driver does not report the clock. */
  int clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, st->device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, st->device);
  cudaGetLastError();
  info->peak_bandwidth_gbs = 2.0 * (double)clock_khz * 1e3 * (double)bus_bits / 8.0 / 1e9;
  info->isa[0] = '\0';
  qgc_device_locality(st->device, info->locality, sizeof info->locality);
  return QGEMV_OK;
}

extern "C" qgemv_status qgc_set_stream(void *state, void *native) {
  qgc_state *st = static_cast<qgc_state *>(state);
  st->user = static_cast<cudaStream_t>(native);
  return QGEMV_OK;
}

extern "C" qgemv_status qgc_sync(void *state) {
  qgc_state *st = static_cast<qgc_state *>(state);
  DeviceGuard guard(st->device);
  cudaError_t e = cudaStreamSynchronize(st->stream());
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess)
    return qgc_fail(QGEMV_ERR_DEVICE, "the device reported an error in earlier work: %s (%s)", cudaGetErrorString(e),
                    cudaGetErrorName(e));
  return QGEMV_OK;
}

extern "C" qgemv_status qgc_alloc(void *state, size_t bytes, void **ptr) {
  qgc_state *st = static_cast<qgc_state *>(state);
  DeviceGuard guard(st->device);
  cudaError_t e = cudaMalloc(ptr, bytes);
  if (e != cudaSuccess) {
    *ptr = nullptr;
    cudaGetLastError();
    if (e == cudaErrorMemoryAllocation)
      return qgc_fail(QGEMV_ERR_NO_MEMORY, "cannot allocate %zu bytes of device memory on CUDA device %d", bytes,
                      st->device);
    return qgc_fail_cuda(e, "cudaMalloc");
  }
  return QGEMV_OK;
}

extern "C" void qgc_free(void *state, void *ptr) {
  qgc_state *st = static_cast<qgc_state *>(state);
  DeviceGuard guard(st->device);
  cudaFree(ptr); /* waits for work that may still use it */
  cudaGetLastError();
}

static qgemv_status copy(qgc_state *st, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                         const char *what) {
  DeviceGuard guard(st->device);
  cudaStream_t s = st->stream();
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) return qgc_fail_cuda(e, what);
  return QGEMV_OK;
}

extern "C" qgemv_status qgc_copy_in(void *state, void *dst, const void *host_src, size_t bytes) {
  return copy(static_cast<qgc_state *>(state), dst, host_src, bytes, cudaMemcpyHostToDevice,
              "copy to the device");
}

extern "C" qgemv_status qgc_copy_out(void *state, void *host_dst, const void *src, size_t bytes) {
  return copy(static_cast<qgc_state *>(state), host_dst, src, bytes, cudaMemcpyDeviceToHost,
              "copy from the device");
}
