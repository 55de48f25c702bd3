/* The share matvec (DESIGN.md section 6, "The share form"): a small weight
 * uploaded for m = 1, in share_layout.h's layout. Brought in from the lab
 * (bench/lab/small_share.cu's share_kernel, bench/NOTES.md v44) in its
 * measured form: one CTA an SM, U = 4 words in flight a thread, k whole in
 * a CTA; 256 or 512 threads, the geometry's count (bench/NOTES.md v48).
 *
 * A CTA copies its scales into shared memory (cp.async) and issues its
 * first round of U 16-byte loads a thread before griddepcontrol.wait: no
 * kernel writes the weights, so they fly while the previous kernel
 * finishes. After the wait it stages x (times gamma with RMSNorm, one f32
 * rounding) in shared memory as f32, then takes its rounds: the next
 * round's loads, then this round's math. NF4 decodes through a 16-entry
 * f32 table in shared memory (one byte extraction and one shared load a
 * code), Q2_0 by a magic float ((c - 1) exactly: one LOP3 and one FADD).
 * Per word: 4 chains of f32 FMAs (8 products each for NF4, 16 for Q2_0), a
 * tree of 2 adds, one FMA with the scale into a round's f32 sum, added
 * into an f64 accumulator at each round's end. At a pass's end the row's
 * k-parts meet in f64: a shuffle butterfly inside the warp, then shared
 * memory, summed in k-part order by one thread a row, times the norm's
 * 1/rms (f64 rsqrt, from the sums of squares of the staged x, which every
 * CTA adds in the same order), rounded once to f32 (and once more to bf16 for
 * a bf16 y). Every sum has a fixed order: deterministic. */
#ifndef QGC_SHARE_KERNELS_CUH
#define QGC_SHARE_KERNELS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "../core/layouts.h"
#include "kernels_decode.cuh"
#include "kernels_stage.cuh"
#include "share_layout.h"

namespace qgc {

/* The thread count T (256 or 512, the geometry's) is a template argument:
 * with it a runtime value, the kernel at 256 ran 1-6% slower than v47's
 * compiled-in 256, and neither 256's launch bounds nor a stepped load
 * pointer won that back (bench/NOTES.md v49). */
constexpr int kShareU = QGC_SHARE_U;

struct ShareParams {
  const uint4 *codes;          /* CTA c's at c I T words */
  const unsigned char *scales; /* CTA c's region at c sreg bytes */
  const void *x;               /* one activation row, f32 or bf16 */
  const void *gamma;           /* NORM */
  void *y;                     /* one output row */
  int n, k, nkw, nblk;
  int rp, lg_rp, kparts, passes, jw, items, gp, sreg, xs_bytes;
  float eps;
  int y_bf16, x_vec, g_vec; /* x_vec, g_vec: 16-byte aligned */
};

/* Where a thread is in its stream: the same for every thread of the CTA. */
struct ShareCur {
  int i, pi, j; /* item, pass, word within the pass */
};

__device__ __forceinline__ void share_step(ShareCur &c, int jw) {
  ++c.i;
  if (++c.j == jw) {
    c.j = 0;
    ++c.pi;
  }
}

/* One round: U items of the thread's stream, each a 16-byte load or a
 * hole; gp: the thread's first word. */
template <int T>
__device__ __forceinline__ void share_issue(uint4 (&b)[kShareU], ShareCur &c, const uint4 *gp, const ShareParams &p,
                                            int nr, int q, int r) {
#pragma unroll
  for (int u = 0; u < kShareU; ++u) {
    b[u] = make_uint4(0u, 0u, 0u, 0u);
    if (c.i < p.items && c.pi * p.rp + r < nr && c.j * p.kparts + q < p.nkw) b[u] = __ldg(gp + (size_t)c.i * T);
    share_step(c, p.jw);
  }
}

__device__ __forceinline__ float share_lut(const float *lut, unsigned byte_off) {
  return *reinterpret_cast<const float *>(reinterpret_cast<const char *>(lut) + byte_off);
}

/* An NF4 word (32 codes) times x: byte b of w & 0x3C3C3C3C is 4 x the code
 * of k offset 8g + b, of rotr(w, 4) & 0x3C3C3C3C that of 8g + 4 + b. */
__device__ __forceinline__ float share_nf4_word(const uint4 &w, const float *xp, const float *lut) {
  const uint32_t reg[4] = {w.x, w.y, w.z, w.w};
  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    const float4 xa = reinterpret_cast<const float4 *>(xp)[2 * g];
    const float4 xb = reinterpret_cast<const float4 *>(xp)[2 * g + 1];
    const uint32_t e = reg[g] & 0x3C3C3C3Cu, o = __funnelshift_r(reg[g], reg[g], 4) & 0x3C3C3C3Cu;
    c0 = fmaf(share_lut(lut, e & 0xFFu), xa.x, c0);
    c1 = fmaf(share_lut(lut, __byte_perm(e, 0u, 0x4441u)), xa.y, c1);
    c2 = fmaf(share_lut(lut, __byte_perm(e, 0u, 0x4442u)), xa.z, c2);
    c3 = fmaf(share_lut(lut, e >> 24), xa.w, c3);
    c0 = fmaf(share_lut(lut, o & 0xFFu), xb.x, c0);
    c1 = fmaf(share_lut(lut, __byte_perm(o, 0u, 0x4441u)), xb.y, c1);
    c2 = fmaf(share_lut(lut, __byte_perm(o, 0u, 0x4442u)), xb.z, c2);
    c3 = fmaf(share_lut(lut, o >> 24), xb.w, c3);
  }
  return (c0 + c1) + (c2 + c3);
}

/* A Q2_0 word (64 codes) times x. For the code at bits 2jj (jj <= 10;
 * codes 11..15 of a register from w >> 22), (w & (3 << 2jj)) | the bits of
 * 2^(23 - 2jj) is the float 2^(23 - 2jj) + code; minus 2^(23 - 2jj) + 1 it
 * is code - 1, exactly. */
__device__ __forceinline__ float share_q2_word(const uint4 &w, const float *xp) {
  const uint32_t reg[4] = {w.x, w.y, w.z, w.w};
  float c[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    const uint32_t lo = reg[g], hi = lo >> 22;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const float4 xv = reinterpret_cast<const float4 *>(xp)[4 * g + m];
      const float xe[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = 4 * m + e, jj = j < 11 ? j : j - 11;
        const uint32_t src = j < 11 ? lo : hi;
        const float v = __uint_as_float((src & (3u << (2 * jj))) | ((uint32_t)(150 - 2 * jj) << 23)) -
                        (float)((1 << (23 - 2 * jj)) + 1);
        c[e] = fmaf(v, xe[e], c[e]);
      }
    }
  }
  return (c[0] + c[1]) + (c[2] + c[3]);
}

/* Step s's 16 staged x values (elements 16 s ..), 4 floats of padding
 * after every word's CW. */
template <int CW>
__device__ __forceinline__ float *share_x_slot(float *xs, int s) {
  return xs + s * 16 + 4 * (s * 16 / CW);
}

/* x (times gamma) into shared memory as f32, 4 floats of padding after
 * every word's CW values (lanes on different words hit different banks),
 * 16 elements a step (a word holds 32 or 64); with NORM, ss gets the
 * squares of x in f64 (exact products), in the thread's element order.
 * Not f32: there x^2 overflows from |x| = 2^64 and vanishes under 2^-75,
 * and eps may be as small as the smallest f32 (v49's QGC_SHARE_SSQ_F32,
 * 0.96-1.00x the time on the H100; bench/NOTES.md v50, v51). */
template <int T, int CW, bool XBF, int NORM>
__device__ __forceinline__ void share_stage(const ShareParams &p, float *xs, int t, double &ss) {
  const int steps = p.k >> 4;
#pragma unroll 2
  for (int s = t; s < steps; s += T) {
    float v[16];
    load16(p.x, (int64_t)s * 16, XBF, p.x_vec, v);
    if (NORM) {
      float gm[16];
      load16(p.gamma, (int64_t)s * 16, NORM == 2, p.g_vec, gm);
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        ss += (double)v[i] * (double)v[i];
        v[i] *= gm[i];
      }
    }
    float4 *d = reinterpret_cast<float4 *>(share_x_slot<CW>(xs, s));
#pragma unroll
    for (int i = 0; i < 4; ++i) d[i] = make_float4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
  }
}

/* A pass ends: the row's k-parts inside the warp meet (butterfly over the
 * lane bits at and above RP), one slot a warp (a k-part when RP >= 32). */
__device__ __forceinline__ void share_flush(double v, int pi, int g, int r, int t, const ShareParams &p, double *red) {
  for (int off = p.rp; off < 32; off <<= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if (p.rp >= 32 || (t & 31) < p.rp) red[(pi * p.gp + g) * p.rp + r] = v;
}

/* One round's math. Which items are holes differs by lane; where a pass
 * ends does not (the cursor is the CTA's). */
template <int L>
__device__ __forceinline__ void share_consume(const uint4 (&b)[kShareU], ShareCur &c, const ShareParams &p, int nr, int q,
                                              int r, int g, int t, const float *xs, const unsigned char *ss,
                                              const float *lut, double *red, float &acc32, double &acc64) {
  constexpr bool NF4 = L == QG_LAYOUT_NF4;
  constexpr int CW = NF4 ? 32 : 64, LGWPS = L == QG_LAYOUT_Q2_G64 ? 0 : 1;
#pragma unroll
  for (int u = 0; u < kShareU; ++u) {
    if (c.i < p.items) {
      const int rl = c.pi * p.rp + r, kw = c.j * p.kparts + q;
      if (rl < nr && kw < p.nkw) {
        const float *xp = xs + kw * (CW + 4);
        float part, s;
        if constexpr (NF4) {
          part = share_nf4_word(b[u], xp, lut);
          s = reinterpret_cast<const float *>(ss)[(kw >> 1) * nr + rl];
        } else {
          part = share_q2_word(b[u], xp);
          s = __half2float(reinterpret_cast<const __half *>(ss)[(kw >> LGWPS) * nr + rl]);
        }
        acc32 = fmaf(part, s, acc32);
      }
      if (c.j == p.jw - 1) {
        acc64 += (double)acc32;
        acc32 = 0.f;
        share_flush(acc64, c.pi, g, r, t, p, red);
        acc64 = 0.0;
      }
      share_step(c, p.jw);
    }
  }
  acc64 += (double)acc32;
  acc32 = 0.f;
}

/* Dynamic shared memory: x (xs_bytes), the scales (sreg), the pass sums
 * (passes gp rp f64), the norm's warp sums (T / 32 f64), NF4's table (16
 * f32): share_layout.h's smem. */
template <int L, bool XBF, int NORM, int T>
__global__ void __launch_bounds__(T, 1) share_kernel(ShareParams p) {
  constexpr bool NF4 = L == QG_LAYOUT_NF4;
  constexpr int CW = NF4 ? 32 : 64, SB = NF4 ? 4 : 2, warps = T / 32;
  extern __shared__ __align__(16) unsigned char share_smem[];
  pdl_launch_dependents();
  const int t = threadIdx.x, c = blockIdx.x, G = gridDim.x;
  const int R0 = (int)((long long)c * p.n / G), nr = (int)((long long)(c + 1) * p.n / G) - R0;
  const int q = t >> p.lg_rp, r = t & (p.rp - 1), g = q / (p.kparts / p.gp);
  float *xs = reinterpret_cast<float *>(share_smem);
  unsigned char *ss = share_smem + p.xs_bytes;
  double *red = reinterpret_cast<double *>(share_smem + p.xs_bytes + p.sreg);
  double *ssq = red + (size_t)p.passes * p.gp * p.rp;
  float *lut = reinterpret_cast<float *>(ssq + warps);

  /* before the wait: nothing here depends on the previous kernel */
  {
    const int nch = (nr * p.nblk * SB + 15) >> 4;
    const unsigned char *sg = p.scales + (size_t)c * p.sreg;
    for (int i = t; i < nch; i += T) cp_async16(smem_addr(ss + 16 * i), sg + 16 * i);
    cp_async_commit();
  }
  if (NF4 && t < 16) lut[t] = nf4_value(t);
  const uint4 *gp = p.codes + (size_t)c * p.items * T + t;
  ShareCur ld = {0, 0, 0};
  uint4 A[kShareU], B[kShareU];
  share_issue<T>(A, ld, gp, p, nr, q, r); /* round 0 */

  pdl_wait(); /* x may be the previous kernel's y, and y what it reads */
  double sq = 0.0;
  share_stage<T, CW, XBF, NORM>(p, xs, t, sq);
  cp_async_wait<0>();
  __syncthreads();

  ShareCur mt = {0, 0, 0};
  float acc32 = 0.f;
  double acc64 = 0.0;
  const int rounds = (p.items + kShareU - 1) / kShareU;
  for (int rd = 0; rd < rounds; rd += 2) {
    if (rd + 1 < rounds) share_issue<T>(B, ld, gp, p, nr, q, r); /* round rd + 1 */
    share_consume<L>(A, mt, p, nr, q, r, g, t, xs, ss, lut, red, acc32, acc64);
    if (rd + 1 < rounds) {
      if (rd + 2 < rounds) share_issue<T>(A, ld, gp, p, nr, q, r); /* round rd + 2 */
      share_consume<L>(B, mt, p, nr, q, r, g, t, xs, ss, lut, red, acc32, acc64);
    }
  }
  /* The norm's sum of squares only now, off the path from the wait to the
   * first words' math: the same sum in every CTA (the same elements, order
   * and tree). */
  if (NORM) {
#pragma unroll
    for (int h = 16; h >= 1; h >>= 1) sq += __shfl_xor_sync(0xffffffffu, sq, h);
    if ((t & 31) == 0) ssq[t >> 5] = sq;
  }
  __syncthreads();
  double inv_rms = 1.0;
  if (NORM && t < nr) {
    double tot = ssq[0];
    for (int w = 1; w < warps; ++w) tot += ssq[w];
    inv_rms = rsqrt(tot / (double)p.k + (double)p.eps);
  }
  for (int s = t; s < nr; s += T) { /* s = the CTA's row pi RP + r */
    const int pi = s >> p.lg_rp, rr = s & (p.rp - 1);
    const double *rp = red + (size_t)pi * p.gp * p.rp + rr;
    double sum = 0.0;
    for (int j = 0; j < p.gp; ++j) sum += rp[(size_t)j * p.rp];
    const float f = (float)(sum * inv_rms);
    if (p.y_bf16)
      static_cast<__nv_bfloat16 *>(p.y)[R0 + s] = __float2bfloat16_rn(f);
    else
      static_cast<float *>(p.y)[R0 + s] = f;
  }
}

}  // namespace qgc

#endif
