/* Device primitives of the kernel lab, as inline PTX so that the instruction
 * is the one named: tensor-core mma, the global load flavours, cp.async,
 * the bulk copy engine and mbarriers. Host fallbacks exist only for what the
 * host emulation (emu_test.cpp) runs: the packed half arithmetic. */
#ifndef LAB_PTX_CUH
#define LAB_PTX_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#define LAB_HD __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define LAB_UNROLL _Pragma("unroll")
#else
#define LAB_UNROLL
#endif

namespace lab {

/* ---- global loads (16 bytes) ---- */
enum LoadFlavour { kLdg = 0, kLdCs = 1, kLdNa = 2, kLdPlain = 3 };

template <int F>
__device__ __forceinline__ uint4 ld16(const void *p) {
  uint4 r;
  if (F == kLdg) {
    r = __ldg(reinterpret_cast<const uint4 *>(p));
  } else if (F == kLdCs) {
    asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  } else if (F == kLdNa) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else {
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  }
  return r;
}

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

/* ---- cp.async: 16 bytes global -> shared, bypassing L1 ---- */
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
/* wait_group takes an immediate: dispatch a run-time depth. */
__device__ __forceinline__ void cp_async_wait_rt(int n) {
  switch (n) {
    case 0: cp_async_wait<0>(); break;
    case 1: cp_async_wait<1>(); break;
    case 2: cp_async_wait<2>(); break;
    case 3: cp_async_wait<3>(); break;
    case 4: cp_async_wait<4>(); break;
    case 5: cp_async_wait<5>(); break;
    case 6: cp_async_wait<6>(); break;
    default: cp_async_wait<7>(); break;
  }
}

/* ---- mbarrier + bulk copy (sm_90+, also sm_120/121) ---- */
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
/* Makes the initialised barriers visible to the async proxy (bulk copies). */
__device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
/* One bulk copy global -> shared that completes `bytes` on the barrier.
 * Sizes and addresses are multiples of 16. */
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
/* Waits for phase `parity` of the barrier. Bounded: a kernel bug must not
 * hang the GPU run, so after ~2^24 polls it records the failure in *err and
 * returns; once *err is set every other wait gives up within 1024 polls
 * (the variant is then reported as failed, its time as meaningless). */
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity, unsigned *err) {
  for (uint32_t tries = 0;; ++tries) {
    uint32_t ok;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
    if (ok) return;
    if ((tries & 1023u) == 1023u && (tries > (1u << 24) || *(volatile unsigned *)err)) {
      atomicOr(err, 1u);
      return;
    }
  }
}

/* ---- programmatic dependent launch (sm_90+, also sm_120/121) ----
 * wait: returns once every grid this one depends on has completed and its
 * memory is visible (at once when the launch had no programmatic edge).
 * Nothing that reads x or writes y may come before it: x may be what the
 * previous matvec writes, y what it reads. launch_dependents: lets the next
 * grid in the stream start its own pre-wait part (its weight ring) on SMs
 * this grid leaves free. */
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

/* ---- tensor cores: D = A B + D, m16n8k16, f32 accumulation ----
 * lane = 4 g + t. a0 (row g, k 2t..2t+1), a1 (row g+8, k 2t..), a2 (row g,
 * k 2t+8..), a3 (row g+8, k 2t+8..); b0 (k 2t..2t+1, col g), b1 (k 2t+8..,
 * col g); d0,d1 (row g, cols 2t, 2t+1), d2,d3 (row g+8, cols 2t, 2t+1).
 * Each output element is the dot product of its own row and column. */
__device__ __forceinline__ void mma_f16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* ---- bits and halves ---- */
LAB_HD float bits_f32(uint32_t w) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(w);
#else
  float f;
  memcpy(&f, &w, 4);
  return f;
#endif
}
LAB_HD uint32_t f32_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t w;
  memcpy(&w, &f, 4);
  return w;
#endif
}
LAB_HD float half_bits_f32(uint32_t h16) { return __half2float(__ushort_as_half((unsigned short)(h16 & 0xffffu))); }
LAB_HD uint32_t f32_to_half_bits(float f) { return __half_as_ushort(__float2half_rn(f)); }
LAB_HD float bf16_bits_f32(uint32_t b16) { return bits_f32((b16 & 0xffffu) << 16); }
/* f32 -> bf16 bits, round to nearest even (finite inputs). */
LAB_HD uint32_t f32_to_bf16_rn_bits(float f) {
#ifdef __CUDA_ARCH__
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
  const uint32_t w = f32_bits(f);
  return ((w + 0x7fffu + ((w >> 16) & 1u)) >> 16) & 0xffffu;
#endif
}

/* Packed FMA on two halves; the host fallback rounds twice, which is exact
 * where the kernels use it (exact results only). */
LAB_HD uint32_t hfma2_f16(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else
  uint32_t d = 0;
  for (int h = 0; h < 2; h++)
    d |= f32_to_half_bits(half_bits_f32(a >> 16 * h) * half_bits_f32(b >> 16 * h) + half_bits_f32(c >> 16 * h))
         << (16 * h);
  return d;
#endif
}
LAB_HD uint32_t hfma2_bf16(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else
  uint32_t d = 0;
  for (int h = 0; h < 2; h++) {
    const float v =
        bf16_bits_f32(a >> 16 * h) * bf16_bits_f32(b >> 16 * h) + bf16_bits_f32(c >> 16 * h);
    d |= (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(v)) << (16 * h);
  }
  return d;
#endif
}

}  // namespace lab

#endif
