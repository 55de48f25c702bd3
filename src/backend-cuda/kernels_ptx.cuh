/* Device primitives of the CUDA kernels, as inline PTX so that the
 * instruction is the one named whatever the compiler version: tensor-core
 * mma, cp.async, the bulk-copy engine with mbarriers, programmatic
 * dependent launch, packed half arithmetic.
 *
 * The weight ring is filled by bulk copies (TMA, sm_90 and newer: H100/
 * H200, sm_100, sm_120, GB10's sm_121) or by 16-byte cp.async (sm_80, 86,
 * 89); QGC_TMA says which, per architecture of the fat binary. Helpers the
 * other pipe needs compile to nothing there.
 *
 * The per-lane helpers are also compiled for the host (QGC_HD, plain C++
 * fallbacks under !__CUDA_ARCH__), so that the CPU emulation test runs the
 * kernels' decode and staging functions as they are. */
#ifndef QGC_KERNELS_PTX_CUH
#define QGC_KERNELS_PTX_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#define QGC_HD __host__ __device__ __forceinline__
/* #pragma unroll for the device pass only (the host compiler warns). */
#ifdef __CUDA_ARCH__
#define QGC_UNROLL _Pragma("unroll")
#define QGC_NO_UNROLL _Pragma("unroll 1")
#else
#define QGC_UNROLL
#define QGC_NO_UNROLL
#endif

/* QGC_FORCE_CP_ASYNC: the sm_80 ring on every architecture, for checking
 * it where no sm_80-89 card is at hand (compute-sanitizer racecheck sees
 * no mbarrier there: bench/gpu-pack-run.sh). */
#if defined(QGC_FORCE_CP_ASYNC) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900)
#define QGC_TMA 0
#else
#define QGC_TMA 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define QGC_SM90_ASM 1 /* bulk copies, mbarrier waits, griddepcontrol */
#else
#define QGC_SM90_ASM 0
#endif

namespace qgc {

__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* ---- cp.async: 16 bytes global -> shared, bypassing L1 (sm_80+) ---- */
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/* ---- mbarrier + bulk copy (sm_90+) ---- */
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
/* Makes initialised barriers visible to the async proxy (bulk copies). */
__device__ __forceinline__ void fence_mbar_init() {
#if QGC_SM90_ASM
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
/* Orders this thread's earlier shared-memory reads of a slot before the
 * bulk copy that refills it. */
__device__ __forceinline__ void fence_proxy_async() {
#if QGC_SM90_ASM
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
__device__ __forceinline__ void mbar_arrive_tx(uint32_t bar, uint32_t bytes) {
#if QGC_SM90_ASM
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
#else
  (void)bar, (void)bytes;
#endif
}
/* The weight stream is evict-first in L2 (the tiles' bulk copies, the LUT
 * kernel's code and scale loads): read once a call, it no longer pushes
 * out what is read again soon, B and the k-split's partial sums. On the
 * H100 0.90-1.00x the time, most where B is large (batched NF4), nowhere
 * slower (bench/NOTES.md v51, v52). 0: the default policy, for A/B runs. */
#ifndef QGC_EXP_WEF
#define QGC_EXP_WEF 1
#endif
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t pol = 0;
#if QGC_SM90_ASM
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
#endif
  return pol;
}
/* One bulk copy of the weight stream global -> shared completing `bytes`
 * on the barrier, under L2 policy pol (l2_evict_first_policy) where
 * QGC_EXP_WEF. Sizes and addresses are multiples of 16. */
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar, uint64_t pol) {
#if QGC_SM90_ASM
  if (QGC_EXP_WEF)
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::
            "r"(dst),
        "l"(src), "r"(bytes), "r"(bar), "l"(pol)
        : "memory");
  else
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
#else
  (void)dst, (void)src, (void)bytes, (void)bar, (void)pol;
#endif
}
/* Waits for phase `parity` of the barrier. */
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
#if QGC_SM90_ASM
  uint32_t ok = 0;
  while (!ok)
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
#else
  (void)bar, (void)parity;
#endif
}

/* ---- programmatic dependent launch (sm_90+) ----
 * wait: returns once every grid this one depends on has completed and its
 * memory is visible (at once when the launch had no programmatic edge).
 * Nothing that reads x or gamma or writes y may come before it: x may be
 * what the previous matvec writes, y what it reads. launch_dependents: lets
 * the next grid of the stream start its own pre-wait part (its weight
 * ring) on SMs this grid leaves free. Before sm_90 both are nothing and
 * the host launches without the attribute. */
__device__ __forceinline__ void pdl_wait() {
#if QGC_SM90_ASM
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_launch_dependents() {
#if QGC_SM90_ASM
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* ---- tensor cores: D = A B + D, m16n8k16, f32 accumulation ----
 * lane = 4 g + t. a0 (row g, k 2t..2t+1), a1 (row g+8, k 2t..2t+1), a2 (row
 * g, k 2t+8..), a3 (row g+8, k 2t+8..); b0 (k 2t..2t+1, col g), b1 (k
 * 2t+8.., col g); d0, d1 (row g, cols 2t, 2t+1), d2, d3 (row g+8, cols 2t,
 * 2t+1). Each output element is the dot product of its own row of A and
 * column of B. */
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

/* Integer mma, m16n8k32: d += A B exactly in int32, A unsigned bytes (the
 * Q2_0 codes 0..2), B signed bytes (the activation digits, kI4). Fragment
 * layout (PTX ISA): a0 = row g, k 4t..4t+3; a1 = row g + 8, same k; a2, a3
 * = k 16 + 4t..; b0 = k 4t..4t+3 of column g, b1 = k 16 + 4t..; d as the
 * float mma's. */
__device__ __forceinline__ void mma_u8s8(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* A shared-memory load kept where the source puts it (volatile): after the
 * previous block's mma, so fewer registers live across it. */
__device__ __forceinline__ uint4 lds128_at(uint32_t a) { /* a: a shared-window address */
  uint4 r;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "r"(a));
  return r;
}
__device__ __forceinline__ uint4 lds128_ordered(const void *p) { return lds128_at(smem_addr(p)); }

/* ---- bits and halves ---- */
QGC_HD float bits_f32(uint32_t w) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(w);
#else
  float f;
  memcpy(&f, &w, 4);
  return f;
#endif
}
QGC_HD uint32_t f32_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t w;
  memcpy(&w, &f, 4);
  return w;
#endif
}
QGC_HD float half_bits_f32(uint32_t h16) { return __half2float(__ushort_as_half((unsigned short)(h16 & 0xffffu))); }
QGC_HD uint32_t f32_to_half_bits(float f) { return __half_as_ushort(__float2half_rn(f)); }
QGC_HD float bf16_bits_f32(uint32_t b16) { return bits_f32((b16 & 0xffffu) << 16); }
/* f32 -> bf16 bits, round to nearest even (finite inputs; the device
 * instruction also keeps NaN a NaN). */
QGC_HD uint32_t f32_to_bf16_bits(float f) {
#ifdef __CUDA_ARCH__
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
  const uint32_t w = f32_bits(f);
  return ((w + 0x7fffu + ((w >> 16) & 1u)) >> 16) & 0xffffu;
#endif
}

/* Byte permute: byte i of the result is byte (sel >> 4i) & 7 of the pair
 * (a, b) (a: bytes 0-3); selectors here never set bit 3 (sign mode). */
QGC_HD uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
#ifdef __CUDA_ARCH__
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
#else
  const uint64_t ab = (uint64_t)a | (uint64_t)b << 32;
  uint32_t d = 0;
  for (int i = 0; i < 4; i++) d |= (uint32_t)(ab >> (8 * ((sel >> (4 * i)) & 7)) & 0xffu) << (8 * i);
  return d;
#endif
}

/* Packed FMA on two bf16 held in a word. The host fallback rounds twice;
 * the kernels use it only where the result is exact. */
QGC_HD uint32_t hfma2_bf16(uint32_t a, uint32_t b, uint32_t c) {
#ifdef __CUDA_ARCH__
  uint32_t d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else
  uint32_t d = 0;
  for (int h = 0; h < 2; h++)
    d |= f32_to_bf16_bits(bf16_bits_f32(a >> 16 * h) * bf16_bits_f32(b >> 16 * h) + bf16_bits_f32(c >> 16 * h))
         << (16 * h);
  return d;
#endif
}

/* a b, bf16x2, one rounding (a fma with -0, which keeps a product's
 * sign: kDG's (code - 1) gamma, exact). */
QGC_HD uint32_t hmul2_bf16(uint32_t a, uint32_t b) { return hfma2_bf16(a, b, 0x80008000u); }

/* a + c, bf16x2, one rounding (sm_90 has the add; before it, a fma by 1). */
QGC_HD uint32_t hadd2_bf16(uint32_t a, uint32_t c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t d;
  asm("add.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(c));
  return d;
#else
  return hfma2_bf16(a, 0x3f803f80u, c);
#endif
}

}  // namespace qgc

#endif
