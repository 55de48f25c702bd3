/* The dense baseline for qgemv bench: cuBLAS bf16 GEMV (GemmEx, f32
 * compute) of the same shape, loaded at run time so that the module never
 * depends on cuBLAS; UNSUPPORTED, with the reason, where it is absent.
 * The few declarations are our own (types by their documented values), so
 * building needs no cuBLAS headers either. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_state.h"

namespace {

typedef int cublas_status;
typedef void *cublas_handle;
enum { kOpN = 0, kOpT = 1, kR16BF = 14, kCompute32F = 68, kGemmDefault = -1 };
typedef cublas_status (*create_fn)(cublas_handle *);
typedef cublas_status (*destroy_fn)(cublas_handle);
typedef cublas_status (*set_stream_fn)(cublas_handle, cudaStream_t);
typedef cublas_status (*gemm_ex_fn)(cublas_handle, int, int, int, int, int, const void *, const void *, int, int,
                                    const void *, int, int, const void *, void *, int, int, int, int);

struct Cublas {
  void *lib = nullptr;
  create_fn create = nullptr;
  destroy_fn destroy = nullptr;
  set_stream_fn set_stream = nullptr;
  gemm_ex_fn gemm_ex = nullptr;
  char why[256] = "";
};

Cublas cublas;
pthread_once_t cublas_once = PTHREAD_ONCE_INIT;

void load_cublas() {
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  for (const char *name : names) {
    cublas.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (cublas.lib) break;
  }
  if (!cublas.lib) {
    snprintf(cublas.why, sizeof cublas.why,
             "cuBLAS is not installed here (libcublas.so.13, .12 or libcublas.so not found by dlopen)");
    return;
  }
  cublas.create = (create_fn)dlsym(cublas.lib, "cublasCreate_v2");
  cublas.destroy = (destroy_fn)dlsym(cublas.lib, "cublasDestroy_v2");
  cublas.set_stream = (set_stream_fn)dlsym(cublas.lib, "cublasSetStream_v2");
  cublas.gemm_ex = (gemm_ex_fn)dlsym(cublas.lib, "cublasGemmEx");
  if (!cublas.create || !cublas.destroy || !cublas.set_stream || !cublas.gemm_ex) {
    snprintf(cublas.why, sizeof cublas.why, "the cuBLAS found lacks cublasGemmEx or cublasCreate_v2");
    dlclose(cublas.lib);
    cublas.lib = nullptr;
  }
}

int cmp_double(const void *a, const void *b) {
  const double x = *static_cast<const double *>(a), y = *static_cast<const double *>(b);
  return (x > y) - (x < y);
}

}  // namespace

/* y[m, n] = x[m, k] . W[n, k]^T with W row-major: in cuBLAS's column-major
 * terms Y (n x m) = W^T (W is k x n, leading dimension k) times X (k x m). */
extern "C" qgemv_status qgc_dense_bf16_time(void *state, int64_t n, int64_t k, int64_t m, int copies,
                                            double min_time, double *seconds) {
  qgc_state *st = static_cast<qgc_state *>(state);
  pthread_once(&cublas_once, load_cublas);
  if (!cublas.lib) return qgc_fail(QGEMV_ERR_UNSUPPORTED, "%s", cublas.why);
  if (n > INT32_MAX || k > INT32_MAX || m > INT32_MAX)
    return qgc_fail(QGEMV_ERR_UNSUPPORTED, "cuBLAS takes 32-bit dimensions");
  DeviceGuard guard(st->device);
  const size_t wbytes = (size_t)n * (size_t)k * 2;
  void **w = static_cast<void **>(calloc((size_t)copies, sizeof(void *)));
  void *x = nullptr, *y = nullptr;
  cublas_handle h = nullptr;
  cudaEvent_t t0 = nullptr, t1 = nullptr;
  double *samples = static_cast<double *>(malloc(1024 * sizeof(double)));
  const cudaStream_t s = st->stream();
  qgemv_status status = QGEMV_OK;
  cudaError_t e = (w && samples) ? cudaSuccess : cudaErrorMemoryAllocation;
  for (int c = 0; e == cudaSuccess && c < copies; c++) {
    e = cudaMalloc(&w[c], wbytes);
    if (e == cudaSuccess) e = cudaMemsetAsync(w[c], 0x3c, wbytes, s); /* bf16 0x3c3c ~ 0.0115 */
  }
  if (e == cudaSuccess) e = cudaMalloc(&x, (size_t)m * (size_t)k * 2);
  if (e == cudaSuccess) e = cudaMemsetAsync(x, 0x3f, (size_t)m * (size_t)k * 2, s);
  if (e == cudaSuccess) e = cudaMalloc(&y, (size_t)m * (size_t)n * 2);
  if (e == cudaSuccess) e = cudaEventCreate(&t0);
  if (e == cudaSuccess) e = cudaEventCreate(&t1);
  if (e != cudaSuccess) status = qgc_fail_cuda(e, "allocating the dense baseline's buffers");
  if (status == QGEMV_OK && (cublas.create(&h) != 0 || cublas.set_stream(h, s) != 0))
    status = qgc_fail(QGEMV_ERR_DEVICE, "cuBLAS could not be initialised on CUDA device %d", st->device);
  int count = 0;
  const float alpha = 1.0f, beta = 0.0f;
  double elapsed = 0.0;
  /* Round -1 warms up; then rounds over all copies until min_time has
   * passed (at least 5 rounds); the median per call. */
  for (int round = -1; status == QGEMV_OK && count < 1024; round++) {
    e = cudaEventRecord(t0, s);
    for (int c = 0; e == cudaSuccess && c < copies; c++) {
      if (cublas.gemm_ex(h, kOpT, kOpN, (int)n, (int)m, (int)k, &alpha, w[c], kR16BF, (int)k, x, kR16BF, (int)k,
                         &beta, y, kR16BF, (int)n, kCompute32F, kGemmDefault) != 0) {
        status = qgc_fail(QGEMV_ERR_DEVICE, "cublasGemmEx failed for %lldx%lld, m=%lld", (long long)n,
                          (long long)k, (long long)m);
        break;
      }
    }
    if (status != QGEMV_OK) break;
    if (e == cudaSuccess) e = cudaEventRecord(t1, s);
    if (e == cudaSuccess) e = cudaEventSynchronize(t1);
    float ms = 0.0f;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, t0, t1);
    if (e != cudaSuccess) {
      status = qgc_fail_cuda(e, "timing cuBLAS");
      break;
    }
    if (round < 0) continue;
    samples[count++] = (double)ms * 1e-3 / copies;
    elapsed += (double)ms * 1e-3;
    if (count >= 5 && elapsed >= min_time) break;
  }
  if (status == QGEMV_OK) {
    qsort(samples, (size_t)count, sizeof(double), cmp_double);
    *seconds = samples[count / 2];
  }
  if (h) cublas.destroy(h);
  if (t0) cudaEventDestroy(t0);
  if (t1) cudaEventDestroy(t1);
  for (int c = 0; w && c < copies; c++) cudaFree(w[c]);
  cudaFree(x);
  cudaFree(y);
  cudaGetLastError();
  free(w);
  free(samples);
  return status;
}
