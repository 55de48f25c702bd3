/* mma.sync throughput on this card: HMMA m16n8k16 (bf16 in, f32
 * accumulate, the instruction every qgemv kernel issues) per SM per clock,
 * by warps per SM and independent accumulator chains per warp; the same
 * for fp16 in (NF4's). One CTA per SM, operands in registers, nothing
 * else in the loop, so the figure is the tensor pipe's rate as these
 * kernels can reach it (bench/NOTES.md v17: are batched launches at it?).
 *
 *   nvcc -O3 -arch=sm_90 -o mma_rate bench/lab/mma_rate.cu && ./mma_rate
 *
 * Prints one line per (dtype, warps, chains): HMMA per SM per clock (from
 * the kernel's own clock64 span, the slowest CTA) and per SM per ns (from
 * events). */
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                       \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

template <bool BF16>
__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if (BF16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Each warp: `iters` rounds of CH independent mma chains. */
template <bool BF16, int CH>
__global__ void mma_loop(int iters, unsigned seed, float *out, long long *span) {
  /* normal numbers in [1, 2) in both halves (0x3f80 | 7 low bits: bf16;
   * as fp16, 0x3c00 | 10 low bits), varied by lane, so no operand is zero
   * or subnormal (a tensor core may take those faster) */
  const unsigned hi = BF16 ? 0x3f803f80u : 0x3c003c00u, lo = BF16 ? 0x007f007fu : 0x03ff03ffu;
  const unsigned v = (threadIdx.x * 0x9e3779b9u) ^ seed;
  const unsigned a[4] = {hi | (v & lo), hi | ((v >> 3) & lo), hi | ((v >> 7) & lo), hi | ((v >> 11) & lo)};
  const unsigned b0 = hi | ((v >> 5) & lo), b1 = hi | ((v >> 13) & lo);
  float c[CH][4] = {}; /* grows by at most 64 per step: finite */
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < CH; ++j) mma<BF16>(c[j], a, b0, b1);
  }
  __syncthreads();
  const long long t1 = clock64();
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < CH; ++j) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  if (s == 12345.0f) out[threadIdx.x] = s; /* keeps the chains alive */
  if (threadIdx.x == 0) atomicMax(reinterpret_cast<unsigned long long *>(span), (unsigned long long)(t1 - t0));
}

template <bool BF16, int CH>
void run(int sms, int warps, float *out, long long *span) {
  const int iters = 4096;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  mma_loop<BF16, CH><<<sms, 32 * warps>>>(64, 1u, out, span); /* warm-up */
  CK(cudaMemset(span, 0, sizeof *span));
  CK(cudaEventRecord(e0));
  mma_loop<BF16, CH><<<sms, 32 * warps>>>(iters, 1u, out, span);
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms = 0.0f;
  long long cyc = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaMemcpy(&cyc, span, sizeof cyc, cudaMemcpyDeviceToHost));
  const double per_sm = (double)warps * CH * iters;
  printf("%-4s warps %2d chains %d  HMMA/SM/clk %.3f  HMMA/SM/ns %.3f  (%.3f ms, %lld clk)\n", BF16 ? "bf16" : "fp16",
         warps, CH, per_sm / (double)cyc, per_sm / (ms * 1e6), ms, cyc);
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

template <bool BF16>
void sweep(int sms, float *out, long long *span) {
  const int warps[] = {4, 8, 14, 16, 28, 32};
  for (int w : warps) {
    run<BF16, 1>(sms, w, out, span);
    run<BF16, 2>(sms, w, out, span);
    run<BF16, 4>(sms, w, out, span);
    run<BF16, 8>(sms, w, out, span);
  }
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  float *out;
  long long *span;
  CK(cudaMalloc(&out, 4096 * sizeof(float)));
  CK(cudaMalloc(&span, sizeof(long long)));
  sweep<true>(prop.multiProcessorCount, out, span);
  sweep<false>(prop.multiProcessorCount, out, span);
  CK(cudaFree(out));
  CK(cudaFree(span));
  return 0;
}
