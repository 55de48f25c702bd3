/* Read-bandwidth probes: the ceiling of this card, measured in the same run
 * as the kernels. Every probe reads the same buffer (4 GB, far beyond L2)
 * once per pass with 16-byte accesses and folds what it read into a value
 * that is stored only if impossible, so the loads stay. Variants:
 *   grid     many 256-thread blocks, each U loads per thread, all in flight
 *   persist  SMs x blocks-per-SM blocks, grid-stride, U loads in flight
 *   backend  the backend's own probe (src/backend-cuda/bandwidth.cu): 512
 *            threads, persistent, 4 in flight, no_allocate loads
 *   cpasync  persistent, a per-thread ring of 4 stages of U cp.async
 *   bulk     persistent, a per-warp ring of S bulk copies of SB bytes
 * Warps per SM are set with dynamic shared memory (and reported as
 * achieved, from the occupancy calculator). */
#include <cuda_runtime.h>
#include <stdio.h>

#include <algorithm>
#include <string>
#include <vector>

#include "probe.h"
#include "ptx.cuh"

namespace lab {

namespace {

template <int U, int F>
__global__ void __launch_bounds__(256) probe_grid(const uint4 *p, size_t count, unsigned *sink) {
  const size_t base = (size_t)blockIdx.x * 256 * U + threadIdx.x;
  uint4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) v[u] = base + u * 256 < count ? ld16<F>(p + base + u * 256) : make_uint4(0, 0, 0, 0);
  uint32_t acc = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  if (acc == 0x9e3779b9u) *sink = acc;
}

template <int U, int F>
__global__ void __launch_bounds__(512) probe_persist(const uint4 *p, size_t count, unsigned *sink) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t acc = 0;
  for (; i + (U - 1) * stride < count; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ld16<F>(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = ld16<F>(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

constexpr int kCpaStages = 4;

template <int U>
__global__ void __launch_bounds__(256) probe_cpasync(const uint4 *p, size_t count, unsigned *sink) {
  extern __shared__ __align__(16) uint4 ring[]; /* [stage][u][thread] */
  const size_t stride = (size_t)gridDim.x * blockDim.x, start = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t iters = count / (U * stride);
  auto issue = [&](size_t it) {
    const int slot = (int)(it % kCpaStages);
#pragma unroll
    for (int u = 0; u < U; ++u)
      cp_async16(smem_addr(&ring[(slot * U + u) * blockDim.x + threadIdx.x]), p + start + (it * U + u) * stride);
  };
  for (int s = 0; s < kCpaStages; ++s) {
    if ((size_t)s < iters) issue(s);
    cp_async_commit();
  }
  uint32_t acc = 0;
  for (size_t it = 0; it < iters; ++it) {
    cp_async_wait<kCpaStages - 1>();
    const int slot = (int)(it % kCpaStages);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint4 v = ring[(slot * U + u) * blockDim.x + threadIdx.x];
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (it + kCpaStages < iters) issue(it + kCpaStages);
    cp_async_commit();
  }
  cp_async_wait<0>();
  if (acc == 0x9e3779b9u) *sink = acc;
}

__global__ void __launch_bounds__(512) probe_bulk(const uint8_t *p, size_t bytes, int SB, int S, unsigned *sink,
                                                  unsigned *err) {
  extern __shared__ __align__(128) char sm[];
  const int W = blockDim.x >> 5, w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const uint32_t bars = smem_addr(sm) + w * S * 8;
  char *ring = sm + ((W * S * 8 + 127) / 128) * 128 + (size_t)w * S * SB;
  const size_t pieces = bytes / SB, tw = (size_t)gridDim.x * W, gw = (size_t)blockIdx.x * W + w;
  const size_t mine = gw < pieces ? (pieces - gw + tw - 1) / tw : 0;
  if (lane == 0) {
    for (int s = 0; s < S; ++s) mbar_init(bars + 8 * s, 1);
    fence_mbar_init();
  }
  __syncwarp();
  auto issue = [&](size_t i) {
    const int slot = (int)(i % S);
    mbar_arrive_tx(bars + 8 * slot, SB);
    bulk_g2s(smem_addr(ring + (size_t)slot * SB), p + (gw + i * tw) * SB, SB, bars + 8 * slot);
  };
  if (lane == 0)
    for (int s = 0; s < S && (size_t)s < mine; ++s) issue(s);
  uint32_t acc = 0;
  for (size_t i = 0; i < mine; ++i) {
    const int slot = (int)(i % S);
    mbar_wait(bars + 8 * slot, (uint32_t)((i / S) & 1), err);
    for (int o = lane * 16; o < SB; o += 512) {
      const uint4 v = *reinterpret_cast<const uint4 *>(ring + (size_t)slot * SB + o);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    __syncwarp();
    if (lane == 0 && i + S < mine) {
      fence_proxy_async();
      issue(i + S);
    }
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

struct ProbeCfg {
  std::string name;
  const void *fn;
  int threads;
  int warps_per_sm; /* wanted; 0 = as many as fit */
  bool persistent;
  int per_block_lines; /* grid: 16-byte lines per block (256 U) */
  size_t need_smem;    /* bytes the kernel itself needs */
  int kind;            /* 0 plain (p, count, sink), 1 bulk */
  int SB, S;
  int cpa_u;           /* cpasync: loads per stage (it reads whole stages only) */
};

/* Dynamic shared memory that leaves exactly `bps` blocks per SM. */
size_t smem_for(const cudaDeviceProp &prop, int bps, size_t need) {
  if (bps <= 0) return need;
  size_t per = prop.sharedMemPerMultiprocessor / bps;
  per = per > 1024 + 128 ? per - 1024 - 128 : 0;
  per = per > prop.sharedMemPerBlockOptin ? prop.sharedMemPerBlockOptin : per;
  return std::max(per, need);
}

}  // namespace

std::vector<ProbeResult> run_probes(const cudaDeviceProp &prop, size_t bytes) {
  std::vector<ProbeResult> out;
  uint8_t *buf = nullptr;
  unsigned *sink = nullptr, *err = nullptr;
  if (cudaMalloc(&buf, bytes) != cudaSuccess || cudaMalloc(&sink, 8) != cudaSuccess ||
      cudaMalloc(&err, 8) != cudaSuccess) {
    fprintf(stderr, "probe: cudaMalloc of %zu bytes failed\n", bytes);
    cudaGetLastError();
    return out;
  }
  cudaMemset(buf, 0x5a, bytes);
  cudaMemset(err, 0, 8);
  const size_t count = bytes / 16;
  std::vector<ProbeCfg> cfgs;
  const char *fl[] = {"ldg", "cs", "na", "plain"};
#define GRID_CFG(U, F)                                                                                      \
  for (int wps : {8, 16, 32, 64})                                                                           \
    cfgs.push_back({std::string("grid u") + #U + " " + fl[F] + " w" + std::to_string(wps),                 \
                    (const void *)probe_grid<U, F>, 256, wps, false, 256 * U, 0, 0, 0, 0, 0});
  GRID_CFG(1, kLdg) GRID_CFG(2, kLdg) GRID_CFG(4, kLdg) GRID_CFG(8, kLdg)
  GRID_CFG(4, kLdCs) GRID_CFG(4, kLdNa) GRID_CFG(4, kLdPlain) GRID_CFG(8, kLdNa)
#undef GRID_CFG
#define PERS_CFG(U, F)                                                                                      \
  for (int wps : {16, 32, 64})                                                                              \
    cfgs.push_back({std::string("persist u") + #U + " " + fl[F] + " w" + std::to_string(wps),              \
                    (const void *)probe_persist<U, F>, 256, wps, true, 0, 0, 0, 0, 0, 0});
  PERS_CFG(2, kLdg) PERS_CFG(4, kLdg) PERS_CFG(8, kLdg)
#undef PERS_CFG
  cfgs.push_back({"backend probe (512 thr, u4 na, persist)", (const void *)probe_persist<4, kLdNa>, 512, 0, true, 0,
                  0, 0, 0, 0, 0});
  for (int wps : {8, 16, 32}) {
    cfgs.push_back({"cpasync u2 s4 w" + std::to_string(wps), (const void *)probe_cpasync<2>, 256, wps, true, 0,
                    (size_t)kCpaStages * 2 * 256 * 16, 0, 0, 0, 2});
    cfgs.push_back({"cpasync u4 s4 w" + std::to_string(wps), (const void *)probe_cpasync<4>, 256, wps, true, 0,
                    (size_t)kCpaStages * 4 * 256 * 16, 0, 0, 0, 4});
  }
  /* bulk: (warps per SM, threads per block, stage bytes, stages) */
  const int bulk[][4] = {{4, 128, 8192, 4}, {8, 256, 4096, 4}, {8, 256, 8192, 3}, {16, 256, 2048, 4},
                         {16, 512, 4096, 3}, {16, 256, 4096, 2}, {32, 256, 2048, 2}, {8, 256, 2304, 8}};
  for (auto &b : bulk)
    cfgs.push_back({"bulk sb" + std::to_string(b[2]) + " s" + std::to_string(b[3]) + " w" + std::to_string(b[0]),
                    (const void *)probe_bulk, b[1], b[0], true, 0,
                    (size_t)(((b[1] / 32 * b[3] * 8 + 127) / 128) * 128 + (size_t)b[1] / 32 * b[3] * b[2]), 1, b[2],
                    b[3], 0});

  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (const ProbeCfg &c : cfgs) {
    ProbeResult r;
    r.name = c.name;
    const int bps = c.warps_per_sm > 0 ? std::max(1, c.warps_per_sm * 32 / c.threads) : 0;
    const size_t smem = smem_for(prop, bps, c.need_smem);
    cudaFuncSetAttribute(c.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    int occ = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, c.fn, c.threads, smem);
    r.warps_per_sm = occ * c.threads / 32;
    if (occ == 0) {
      cudaGetLastError();
      r.error = "does not fit";
      out.push_back(r);
      continue;
    }
    size_t grid = c.persistent ? (size_t)occ * prop.multiProcessorCount : (count + c.per_block_lines - 1) / c.per_block_lines;
    size_t nbytes = bytes;
    const uint8_t *pp = buf;
    void *args_plain[] = {(void *)&pp, (void *)&count, (void *)&sink};
    int SB = c.SB, S = c.S;
    void *args_bulk[] = {(void *)&pp, (void *)&nbytes, (void *)&SB, (void *)&S, (void *)&sink, (void *)&err};
    std::vector<float> ms;
    cudaError_t e = cudaSuccess;
    for (int pass = 0; pass < 6 && e == cudaSuccess; ++pass) {
      cudaEventRecord(e0);
      e = cudaLaunchKernel(c.fn, dim3((unsigned)grid), dim3(c.threads), c.kind ? args_bulk : args_plain, smem, 0);
      cudaEventRecord(e1);
      if (e == cudaSuccess) e = cudaEventSynchronize(e1);
      float t = 0;
      cudaEventElapsedTime(&t, e0, e1);
      if (pass > 0) ms.push_back(t);
    }
    if (e != cudaSuccess) {
      r.error = cudaGetErrorString(e);
      cudaGetLastError();
    } else {
      /* bytes actually read: whole cpasync stages, whole bulk pieces */
      double rd = (double)bytes;
      if (c.cpa_u) rd = (double)(count / (c.cpa_u * grid * c.threads)) * c.cpa_u * grid * c.threads * 16;
      if (c.kind == 1) rd = (double)(bytes / c.SB) * c.SB;
      std::sort(ms.begin(), ms.end());
      r.gbs_best = rd / (ms.front() * 1e-3) / 1e9;
      r.gbs_median = rd / (ms[ms.size() / 2] * 1e-3) / 1e9;
    }
    r.grid = grid;
    r.threads = c.threads;
    r.smem = smem;
    out.push_back(r);
  }
  unsigned herr = 0;
  cudaMemcpy(&herr, err, 4, cudaMemcpyDeviceToHost);
  if (herr) fprintf(stderr, "probe: a bulk probe timed out on its barrier\n");
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(buf);
  cudaFree(sink);
  cudaFree(err);
  return out;
}

}  // namespace lab
