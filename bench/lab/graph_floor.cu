/* What a call cannot go under when an engine replays it from a CUDA graph:
 * the time per graph node of kernels that do (almost) nothing, by grid,
 * shared memory and programmatic dependent launch (PDL), so that the
 * small shapes' figures (`qgemv bench --graph`, 1024 x 4096: 3.3-5.6 us)
 * can be split into this floor and the kernel's own work (bench/NOTES.md
 * v41). launch_cost.cu measures the host's side on a stream instead.
 *   nvcc -O2 -std=c++17 -arch=sm_90 bench/lab/graph_floor.cu -o graph_floor
 *   graph_floor [NODES]     (default 64 kernel nodes a graph)
 * Per case: us per node (median of 15 replays of a graph of NODES nodes),
 * for one kernel a call and for two (a main kernel and a one-CTA finish,
 * as the lookup-table form launches); the last three cases add a matvec's
 * steps after the wait one at a time (CHAIN below; not yet run: v41 ran
 * the cases before them). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#define CK(call)                                                                           \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "graph_floor: %s failed (%s)\n", #call, cudaGetErrorString(e_));     \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

/* READ > 0: each CTA reads READ 16-byte words of src (the sum kept so the
 * loads stay), so a case adds a small shape's bytes to the floor: 64 KB a
 * CTA on 132 SMs is 8.6 MB, about 4096 x 4096 in NF4 (9.4 MB). */
/* CHAIN (the steps a matvec adds after the wait, to split a small call's
 * time beyond the read): bit 1, stage x: every CTA copies the same 16 KB
 * (an activation row of 4096 f32; L2 hits after the first CTA) into shared
 * memory and syncs; bit 2, sum and store: the threads' values meet in
 * shared memory (a warp shuffle, then warp 0) and each CTA writes 32
 * outputs, as a CTA's rows of y. */
constexpr int kXWords = 1024; /* 16 KB */
__global__ void node_kernel(const uint4 *src, int read, unsigned *sink, int pdl, const uint4 *x, int chain) {
  extern __shared__ char smem[];
  if (pdl) asm volatile("griddepcontrol.launch_dependents;");
  /* PDL 2: the reads before the wait, as the lookup-table kernel issues
   * its first weight loads (weights do not depend on the previous call) */
  if (pdl == 1) asm volatile("griddepcontrol.wait;" ::: "memory");
  unsigned acc = 0;
  const uint4 *mine = src + (size_t)blockIdx.x * read;
  /* eight loads in flight a thread before any is used: a whole 64 KB share
   * of 512 threads in one round trip */
  int i = threadIdx.x;
  for (; i + 7 * (int)blockDim.x < read; i += 8 * blockDim.x) {
    uint4 v[8];
#pragma unroll
    for (int u = 0; u < 8; u++) v[u] = __ldg(mine + i + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < 8; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < read; i += blockDim.x) {
    const uint4 v = __ldg(mine + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (pdl == 2) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (chain & 1) {
    uint4 *xs = reinterpret_cast<uint4 *>(smem);
    for (int j = threadIdx.x; j < kXWords; j += blockDim.x) xs[j] = __ldg(x + j);
    __syncthreads();
    const uint4 v = xs[(threadIdx.x * 7) % kXWords];
    acc += v.x ^ v.w;
  }
  if (chain & 2) {
    unsigned *red = reinterpret_cast<unsigned *>(smem) + 4 * kXWords;
    for (int h = 16; h >= 1; h >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, h);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
      unsigned t = 0;
      for (int w = 0; w < (int)blockDim.x / 32; w++) t += red[w] * (unsigned)(w + threadIdx.x);
      sink[blockIdx.x * 32 + threadIdx.x] = t;
    }
    return;
  }
  if (acc == 0x9e3779b9u) sink[blockIdx.x] = acc; /* almost never: keeps the loads */
  if (threadIdx.x == 0 && read < 0) smem[0] = 1;  /* never: keeps the shared memory */
}

struct Case {
  const char *name;
  int grid, block, smem_kb, read, pdl, finish, chain;
};

static void launch(const Case &c, int grid, int block, int smem, int read, const uint4 *src, unsigned *sink,
                   const uint4 *x, int chain, cudaStream_t s) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.dynamicSmemBytes = (size_t)smem;
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = c.pdl ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, node_kernel, src, read, sink, c.pdl, x, chain));
}

int main(int argc, char **argv) {
  const int nodes = argc > 1 ? atoi(argv[1]) : 64;
  if (nodes < 1 || nodes > 4096) {
    fprintf(stderr, "usage: graph_floor [NODES 1..4096]\n");
    return 2;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  CK(cudaFuncSetAttribute(node_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 224 * 1024));
  const Case cases[] = {
      {"1 CTA x 32, no smem", 1, 32, 0, 0, 0, 0, 0},
      {"1 CTA x 32, no smem, PDL", 1, 32, 0, 0, 1, 0, 0},
      {"SMs x 448, 224 KB", sms, 448, 224, 0, 0, 0, 0},
      {"SMs x 448, 224 KB, PDL", sms, 448, 224, 0, 1, 0, 0},
      {"SMs x 512, 192 KB, PDL, + finish", sms, 512, 192, 0, 1, 1, 0},
      {"SMs x 512, 192 KB, PDL, 16 KB a CTA", sms, 512, 192, 1024, 1, 0, 0},
      {"SMs x 512, 192 KB, PDL, 64 KB a CTA", sms, 512, 192, 4096, 1, 0, 0},
      {"SMs x 512, 192 KB, PDL, 64 KB + finish", sms, 512, 192, 4096, 1, 1, 0},
      {"SMs x 512, 192 KB, PDL, 64 KB before wait", sms, 512, 192, 4096, 2, 0, 0},
      {"SMs x 512, 192 KB, PDL, 64 KB before wait + finish", sms, 512, 192, 4096, 2, 1, 0},
      {"  ... + x to shared memory", sms, 512, 192, 4096, 2, 0, 1},
      {"  ... + x + sum and store", sms, 512, 192, 4096, 2, 0, 3},
      {"  ... + x + sum and store + finish", sms, 512, 192, 4096, 2, 1, 3},
  };
  /* rotating sources beyond L2 (the reads, when a case has them) */
  const size_t per = (size_t)sms * 4096 * sizeof(uint4);
  const int copies = (int)std::max<size_t>(2, ((size_t)512 << 20) / per);
  uint4 *src;
  unsigned *sink;
  CK(cudaMalloc(&src, per * copies));
  CK(cudaMemset(src, 1, per * copies));
  CK(cudaMalloc(&sink, sizeof(unsigned) * 32 * (size_t)sms));
  uint4 *x;
  CK(cudaMalloc(&x, sizeof(uint4) * kXWords));
  CK(cudaMemset(x, 2, sizeof(uint4) * kXWords));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  printf("graph_floor: %s, %d SMs, %d kernel calls a graph, us a call (median of 15 replays)\n", prop.name, sms,
         nodes);
  for (const Case &c : cases) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < nodes; i++) {
      const uint4 *from = src + (size_t)(i % copies) * (per / sizeof(uint4));
      launch(c, c.grid, c.block, c.smem_kb * 1024, c.read, from, sink, x, c.chain, s);
      if (c.finish) launch(c, 1, 256, 0, 0, from, sink, x, 0, s);
    }
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int r = 0; r < 15; r++) {
      CK(cudaEventRecord(e0, s));
      CK(cudaGraphLaunch(ge, s));
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms = 0.f;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1000.f / nodes);
    }
    std::sort(t.begin(), t.end());
    printf("  %-52s %6.2f us (min %.2f)\n", c.name, t[t.size() / 2], t[0]);
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
  }
  CK(cudaGetLastError());
  return 0;
}
