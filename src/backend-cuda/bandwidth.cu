/* The benchmark roofline: streaming read bandwidth of device memory, from a
 * kernel that reads a buffer far larger than L2 with the same 16-byte
 * streaming loads as the matvec kernels, timed with events. */
#include <stdint.h>

#include "cuda_state.h"
#include "kernels_util.cuh"

namespace {

constexpr int kThreads = 512, kUnroll = 4;

/* Each thread XORs its grid-stride share, kUnroll loads in flight; the
 * result is stored only if it hits an impossible value, so the loads stay. */
__global__ void __launch_bounds__(kThreads) read_kernel(const uint4 *p, size_t count, uint32_t *sink) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t acc = 0;
  for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = qgc::ld_stream_v4(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = qgc::ld_stream_v4(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

}  // namespace

extern "C" qgemv_status qgc_read_bandwidth(void *state, size_t bytes, double *gbs) {
  qgc_state *st = static_cast<qgc_state *>(state);
  DeviceGuard guard(st->device);
  const size_t count = bytes / sizeof(uint4);
  uint4 *buf = nullptr;
  uint32_t *sink = nullptr;
  cudaEvent_t t0 = nullptr, t1 = nullptr;
  const cudaStream_t s = st->stream();
  qgemv_status status = QGEMV_OK;
  cudaError_t e = cudaMalloc(&buf, count * sizeof(uint4));
  if (e == cudaSuccess) e = cudaMalloc(&sink, sizeof(uint32_t));
  if (e == cudaSuccess) e = cudaEventCreate(&t0);
  if (e == cudaSuccess) e = cudaEventCreate(&t1);
  /* Written once, so the reads see initialised memory (and so that the
   * pages are resident before the first timed pass). */
  if (e == cudaSuccess) e = cudaMemsetAsync(buf, 0x5a, count * sizeof(uint4), s);
  int per_sm = 0;
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_kernel, kThreads, 0);
  const unsigned grid = (unsigned)(st->sms * (per_sm > 0 ? per_sm : 1));
  double best = 0.0;
  for (int pass = 0; e == cudaSuccess && pass < 8; pass++) {
    e = cudaEventRecord(t0, s);
    if (e == cudaSuccess) {
      read_kernel<<<grid, kThreads, 0, s>>>(buf, count, sink);
      e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaEventRecord(t1, s);
    if (e == cudaSuccess) e = cudaEventSynchronize(t1);
    float ms = 0.0f;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, t0, t1);
    /* pass 0 warms up (clocks, TLB); the best of the rest */
    if (e == cudaSuccess && pass > 0 && ms > 0.0f) {
      const double v = (double)(count * sizeof(uint4)) / (ms * 1e-3) / 1e9;
      if (v > best) best = v;
    }
  }
  if (e != cudaSuccess) status = qgc_fail_cuda(e, "measuring the read bandwidth");
  if (t0) cudaEventDestroy(t0);
  if (t1) cudaEventDestroy(t1);
  cudaFree(buf);
  cudaFree(sink);
  cudaGetLastError();
  if (status == QGEMV_OK) *gbs = best;
  return status;
}
