/* The benchmark roofline: the read bandwidth of device memory, the best of
 * a few plain streaming reads of a buffer far larger than L2, timed with
 * events. A grid of many 256-thread blocks (occupancy as the hardware
 * gives it), each thread issuing U 16-byte loads before it uses any: the
 * kernel lab measured 4595-4675 GB/s so on the H200 against 4281 for a
 * persistent grid of streaming (.L1::no_allocate.L2::256B) loads, and the
 * best of U = 2 and 4 within 0.5% of every probe it tried (bench/NOTES.md
 * v3). */
#include <stdint.h>

#include "cuda_state.h"

namespace {

constexpr int kThreads = 256;

/* Block b reads [b U 256, (b + 1) U 256) of the 16-byte words; the result
 * is stored only if it hits an impossible value, so the loads stay. */
template <int U>
__global__ void __launch_bounds__(kThreads) read_kernel(const uint4 *p, size_t count, uint32_t *sink) {
  const size_t base = (size_t)blockIdx.x * kThreads * U + threadIdx.x;
  uint4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) v[u] = base + u * kThreads < count ? __ldg(p + base + u * kThreads) : make_uint4(0, 0, 0, 0);
  uint32_t acc = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  if (acc == 0x9e3779b9u) *sink = acc;
}

template <int U>
cudaError_t read_once(const uint4 *buf, size_t count, uint32_t *sink, cudaStream_t s) {
  const size_t per = (size_t)kThreads * U, blocks = (count + per - 1) / per;
  read_kernel<U><<<(unsigned)blocks, kThreads, 0, s>>>(buf, count, sink);
  return cudaGetLastError();
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
  double best = 0.0;
  /* per variant: pass 0 warms up (clocks, TLB), then the best of 4 */
  for (int pass = 0; e == cudaSuccess && pass < 10; pass++) {
    e = cudaEventRecord(t0, s);
    if (e == cudaSuccess) e = pass < 5 ? read_once<4>(buf, count, sink, s) : read_once<2>(buf, count, sink, s);
    if (e == cudaSuccess) e = cudaEventRecord(t1, s);
    if (e == cudaSuccess) e = cudaEventSynchronize(t1);
    float ms = 0.0f;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, t0, t1);
    if (e == cudaSuccess && pass % 5 != 0 && ms > 0.0f) {
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
