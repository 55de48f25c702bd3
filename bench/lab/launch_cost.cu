/* The host's cost of one kernel launch, by launch path, on an empty kernel
 * with a parameter block the size of the matvec's (qgc::Params) and the
 * dynamic shared memory of a small-shape launch: what `qgemv bench`'s
 * per-call time cannot go under on a stream (bench/lab/launch_gap.c
 * measures the library's calls against a CUDA graph).
 *   nvcc -O2 -std=c++17 -arch=sm_90 bench/lab/launch_cost.cu -o launch_cost -lcuda
 *   launch_cost [LAUNCHES]     (default 2000)
 * Per path: host us per launch to queue LAUNCHES launches, and us per
 * launch until they have all run (median of 7 rounds). */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>

struct Block {
  unsigned w[80]; /* 320 bytes, about sizeof(qgc::Params) */
};

__global__ void empty_kernel(const Block b) {
  extern __shared__ char smem[];
  if (b.w[0] == 12345u && threadIdx.x == 0) smem[0] = 1; /* never: keeps the parameter */
}

static double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

#define CK(call)                                                                    \
  do {                                                                              \
    if ((call) != 0) {                                                              \
      fprintf(stderr, "launch_cost: %s failed (%s)\n", #call, cudaGetErrorString(cudaGetLastError())); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2000;
  const unsigned grid = 256, block = 256;
  const size_t smem = 50 * 1024;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CUfunction fn;
  CK(cudaGetFuncBySymbol(&fn, (const void *)empty_kernel));
  Block b = {};
  void *args[] = {&b};
  const char *names[] = {"<<<>>>", "cudaLaunchKernelExC", "cudaLaunchKernelExC+PDL", "cuLaunchKernelEx+PDL",
                         "cudaGetDevice+ExC+PDL"};
  printf("%-26s %10s %10s   (%d launches, grid %u x %u, %zu B smem, %zu B parameters)\n", "path", "queue us",
         "total us", n, grid, block, smem, sizeof b);
  for (int path = 0; path < 5; path++) {
    double q[7], t[7];
    for (int r = 0; r < 8; r++) {
      const double t0 = now_us();
      for (int i = 0; i < n; i++) {
        b.w[1] = (unsigned)i;
        if (path == 0) {
          empty_kernel<<<grid, block, smem, s>>>(b);
        } else if (path == 4 || path <= 2) {
          if (path == 4) {
            int d;
            CK(cudaGetDevice(&d));
          }
          cudaLaunchConfig_t cfg = {};
          cfg.gridDim = dim3(grid), cfg.blockDim = dim3(block), cfg.dynamicSmemBytes = smem, cfg.stream = s;
          cudaLaunchAttribute at[1];
          at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
          at[0].val.programmaticStreamSerializationAllowed = 1;
          cfg.attrs = at, cfg.numAttrs = path >= 2 ? 1 : 0;
          CK(cudaLaunchKernelExC(&cfg, (const void *)empty_kernel, args));
        } else {
          CUlaunchConfig cfg = {};
          cfg.gridDimX = grid, cfg.gridDimY = cfg.gridDimZ = 1;
          cfg.blockDimX = block, cfg.blockDimY = cfg.blockDimZ = 1;
          cfg.sharedMemBytes = (unsigned)smem, cfg.hStream = (CUstream)s;
          CUlaunchAttribute at[1];
          at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
          at[0].value.programmaticStreamSerializationAllowed = 1;
          cfg.attrs = at, cfg.numAttrs = 1;
          CK(cuLaunchKernelEx(&cfg, fn, args, nullptr));
        }
      }
      const double t1 = now_us();
      CK(cudaStreamSynchronize(s));
      if (r) q[r - 1] = (t1 - t0) / n, t[r - 1] = (now_us() - t0) / n; /* round 0 warms up */
    }
    std::sort(q, q + 7);
    std::sort(t, t + 7);
    printf("%-26s %10.2f %10.2f\n", names[path], q[3], t[3]);
  }
  return 0;
}
