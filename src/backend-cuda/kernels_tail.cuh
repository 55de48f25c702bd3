/* The tail kernel: the last n % 16 rows of a weight (fewer than a tile),
 * kept in their packed form (layout.h), on CUDA cores in f32.
 *
 * One CTA per (tail row, stride of activation rows). Each thread takes
 * scale blocks tid, tid + 256, ...: per block the exact f32 values (NF4
 * table, or code - 1) times x (times gamma) summed in element order, times
 * the block's scale, added in block order; the threads' sums meet in a
 * fixed tree. With RMSNorm the row's sum of squares of x is made the same
 * way and 1/rms multiplies the dot product. Nothing depends on m or on
 * the launch, so batched rows are bit-identical to m = 1. PDL as the main
 * kernel: nothing reads x or gamma or writes y before griddepcontrol.wait. */
#ifndef QGC_KERNELS_TAIL_CUH
#define QGC_KERNELS_TAIL_CUH

#include "kernels_decode.cuh"
#include "layout.h"

namespace qgc {

constexpr int kTailThreads = 256;

struct TailParams {
  const uint8_t *rows; /* the tail rows, packed (layout.h) */
  int nrows;           /* n % 16 */
  int64_t n, k, row0;  /* y's row stride; the first tail row */
  const void *x, *gamma;
  void *y;
  int64_t m;
  int x_bf16, g_bf16, y_bf16;
  float eps, inv_k;
};

__device__ __forceinline__ float tail_elem(const void *p, int64_t i, bool bf16) {
  return bf16 ? bf16_bits_f32(static_cast<const unsigned short *>(p)[i]) : static_cast<const float *>(p)[i];
}

/* Sum of one value per thread in a fixed tree (red: kTailThreads floats). */
__device__ __forceinline__ float tail_reduce(float v, float *red) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = kTailThreads / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float r = red[0];
  __syncthreads(); /* red is reused */
  return r;
}

template <int FORMAT, int GROUP>
__global__ void __launch_bounds__(kTailThreads) tail_kernel(const TailParams p) {
  constexpr bool kNF4 = FORMAT == QGEMV_NF4;
  __shared__ float red[kTailThreads], lut[16];
  pdl_launch_dependents();
  if (threadIdx.x < 16) lut[threadIdx.x] = nf4_value((int)threadIdx.x);
  const int r = (int)blockIdx.x;
  const int64_t nb = p.k / GROUP;
  const uint8_t *codes = nullptr, *blocks = nullptr;
  const float *scales = nullptr;
  if (kNF4) {
    codes = p.rows + (size_t)r * (size_t)(p.k / 2);
    scales = reinterpret_cast<const float *>(p.rows + (size_t)p.nrows * (size_t)(p.k / 2)) + (size_t)r * (size_t)nb;
  } else {
    blocks = p.rows + (size_t)r * (size_t)nb * (2 + GROUP / 4);
  }
  pdl_wait();
  __syncthreads(); /* lut */
  for (int64_t a = blockIdx.y; a < p.m; a += gridDim.y) {
    const char *xa = static_cast<const char *>(p.x) + (size_t)a * (size_t)p.k * (p.x_bf16 ? 2 : 4);
    float dot = 0.0f, ss = 0.0f;
    for (int64_t b = threadIdx.x; b < nb; b += kTailThreads) {
      float s = 0.0f, d;
      if (kNF4) d = scales[b];
      else d = half_bits_f32((uint32_t)blocks[b * (2 + GROUP / 4)] | ((uint32_t)blocks[b * (2 + GROUP / 4) + 1] << 8));
      for (int j = 0; j < GROUP; ++j) {
        const int64_t kk = b * GROUP + j;
        float xv = tail_elem(xa, kk, p.x_bf16 != 0);
        if (p.gamma != nullptr) {
          ss = fmaf(xv, xv, ss);
          xv *= tail_elem(p.gamma, kk, p.g_bf16 != 0);
        }
        float wv;
        if (kNF4) wv = lut[(codes[kk / 2] >> (4 * (kk & 1))) & 15];
        else wv = (float)(((blocks[b * (2 + GROUP / 4) + 2 + j / 4] >> (2 * (j & 3))) & 3) - 1);
        s = fmaf(wv, xv, s);
      }
      dot = fmaf(s, d, dot);
    }
    float tot = tail_reduce(dot, red);
    if (p.gamma != nullptr) tot *= 1.0f / sqrtf(tail_reduce(ss, red) * p.inv_k + p.eps);
    if (threadIdx.x == 0) {
      const int64_t i = a * p.n + p.row0 + r;
      if (p.y_bf16)
        static_cast<__nv_bfloat16 *>(p.y)[i] = __float2bfloat16_rn(tot);
      else
        static_cast<float *>(p.y)[i] = tot;
    }
  }
}

}  // namespace qgc

#endif
