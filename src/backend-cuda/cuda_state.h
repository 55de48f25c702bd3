/* Host-side internals shared by the module's .cu files (C++ only): the
 * context state, the error helpers, the current-device guard. */
#ifndef QGC_CUDA_STATE_H
#define QGC_CUDA_STATE_H

#include <cuda_runtime_api.h>

#include "cuda_api.h"
#include "lut_layout.h"
#include "matvec_launch.h"

struct qgc_state {
  int device;
  cudaStream_t own;  /* created at open, non-blocking */
  cudaStream_t user; /* set_stream; NULL: use own */
  int cc_major, cc_minor;
  qgc_device_facts facts; /* SMs, shared memory, PDL: what the plan reads */
  qgc_layout_pref layout_pref; /* QGEMV_CUDA_LAYOUT, read at open */
  cudaStream_t stream() const { return user ? user : own; }
};

/* Formats the calling thread's detail message and returns s. */
qgemv_status qgc_fail(qgemv_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A CUDA error as a status: allocation failures are NO_MEMORY (and the
 * runtime's non-sticky error is cleared, so the context stays usable);
 * anything else is DEVICE. `what` says which call failed. */
qgemv_status qgc_fail_cuda(cudaError_t e, const char *what);

/* Makes the context's device current for the scope of one entry point and
 * gives the caller back its own current device afterwards: the module's
 * runtime and the application's share the driver's per-thread context. */
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : device_(device) {
    if (cudaGetDevice(&prev_) != cudaSuccess) prev_ = -1;
    if (prev_ != device_) cudaSetDevice(device_);
  }
  ~DeviceGuard() {
    if (prev_ >= 0 && prev_ != device_) cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;

 private:
  int device_;
  int prev_ = -1;
};

/* device_select.cu: the device nearest the calling thread's CPU binding,
 * and a "PCI ..., CPUs ..., NUMA ..." description of a device. */
int qgc_nearest_device(int count);
void qgc_device_locality(int device, char *buf, size_t size);

/* matvec.cu: per-device kernel attributes (large dynamic shared memory). */
qgemv_status qgc_matvec_prepare(const qgc_state *st);

#endif
