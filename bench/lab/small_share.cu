/* Issue 13, small shapes: does an m = 1 matvec that holds each CTA's share of
 * the weights in flight before `griddepcontrol.wait` (as graph_floor.cu's
 * read does: 2.73-3.03 us at 4096 x 4096 NF4's bytes, bench/NOTES.md v41,
 * v42), then stages x in shared memory, then decodes and multiplies from
 * registers on CUDA cores, get near that floor? The library takes 7.1-8.3 us
 * (NF4) and 4.6-6.3 us (Q2_0 g64) there. Standalone: its own formats, layout,
 * kernels, timing and checks.
 *
 *   nvcc -O3 -std=c++17 -arch=sm_90 bench/lab/small_share.cu -o small_share
 *   small_share [--shape NxK]... [--nodes N] [--reps R] [--json FILE]
 *               [--fmt nf4|q2g64|all] [--grid-mult M] [--no-time]
 *               [--deadline S]   (default 120: variants past it are skipped)
 * Default shapes (N rows = outputs, K = inputs): 4096x4096, 1024x4096,
 * 256x4096, 14336x4096, 4096x14336; --shape replaces them (repeatable; N >= 1,
 * K a multiple of 64). --no-time: one launch a variant and the checks only
 * (for compute-sanitizer). Exit status 1 if any variant misses the bound.
 *
 * Variants (each for U = 4, 8, 16 words in flight a thread and 256 or 512
 * threads a CTA; U 16 with 512 threads is not built: two buffers of 16
 * words are 128 registers, all a thread gets; any variant the compiler gave
 * local memory is skipped at run time and says so):
 *   loads        per format: the same loads, grid, geometry, x staging and
 *                launch as the full kernel, the words XORed into a value
 *                stored only if impossible: the floor.
 *   nf4-f32x     NF4 (block 64, f32 scale), x f32: the full matvec.
 *   nf4-bf16x    the same with x bf16 (raw uint16, widened exactly).
 *   q2g64-f32x   Q2_0 group 64 (fp16 d, value (code - 1) d), x f32.
 *   q2g64-bf16x  the same with x bf16.
 * A full variant against its format's loads says what the decode, the math
 * and the CTA's sum and store cost beyond the bytes.
 *
 * Timing as graph_floor.cu and `qgemv bench --graph`: a CUDA graph of
 * NODES kernel nodes (64 unless the rotation needs more) joined by
 * programmatic dependent launch, median of R (15) replays, us a node. The
 * weights rotate beyond L2: C copies (same values) with C x bytes >= 4 x
 * the L2 size; node i reads copy i % C and the node count is a multiple of
 * C (between two reads of a copy every other copy is read once). A streaming
 * read of 1 GiB (best of five grid and depth choices) gives "% read".
 * Checks: after the replays y (NaN before them) against a host double
 * reference of the same dequantized weights, then one launch each with an
 * adversarial x (huge values only on columns whose weights are 0 in every
 * row, 1e-5 elsewhere) and an all-positive x (rows of one code add up
 * coherently): max over rows and the three x of |y - ref| / R, R =
 * sqrt(sum_k (w x)^2); FAIL over 1e-3 (DESIGN.md section 5).
 *
 * ---- Device layout (host repack; DESIGN.md section 4's bytes go in) ----
 * Rows split over the G CTAs (G = SMs x grid-mult): CTA c takes rows
 * [c N / G, (c + 1) N / G), nr <= nrmax = ceil(N / G); k is not split over
 * CTAs, so there is no finishing launch and no atomics. A 16-byte word holds
 * 32 NF4 codes (half a block) or 64 Q2_0 codes (one block) of one row; a
 * row has nkw words. Inside a CTA, thread t = q RP + r (RP a power of two,
 * P = THREADS / RP k-parts) takes rows r, RP + r, 2 RP + r, ... (NP passes)
 * and, in each pass, the words kw = q, q + P, q + 2P, ... (JW a pass): item
 * i = pass JW + j. RP is the largest power of two whose items a thread, NP
 * JW, are within 4% of the fewest (4096 x 4096: RP 32, P 16 with 512
 * threads: a warp is 32 rows at one k, x reads are broadcasts). The CTA's code stream is
 * [item i][thread t] 16-byte words, so each warp's load of an item is 512
 * contiguous bytes; items past a CTA's rows or a row's words are holes
 * (zeros, never loaded). NF4 word: four 32-bit registers g, register g =
 * rotl(s, 2) where s holds the code of k offset 8g + b in nibble 2b and
 * that of 8g + 4 + b in nibble 2b + 1: then w & 0x3C3C3C3C holds 4 x code
 * of offsets 8g..8g+3 in its bytes and rotr(w, 4) & 0x3C3C3C3C those of
 * 8g+4..8g+7: byte offsets into a 16-entry f32 table in shared memory, one
 * byte extraction and one LDS a code. Q2_0 word: the block's 16 code bytes
 * as ggml stores them (element j at bits 2 (j % 16) of register j / 16);
 * (code - 1) is decoded exactly with a magic float: for bit position 2jj <=
 * 20, (w & (3 << 2jj)) | bits(2^(23 - 2jj)) is the float 2^(23 - 2jj) +
 * code, minus (2^(23 - 2jj) + 1) is code - 1 exactly (codes 11..15 of a
 * register from w >> 22): one LOP3, one FADD, one FFMA a weight. Scales: a
 * CTA's region [block][row] (f32 or fp16), copied whole into shared memory
 * with cp.async before the wait. x: staged as f32 in shared memory with 4
 * floats of padding after every word's 32 (NF4) or 64 (Q2_0) values, so the
 * lanes of a warp that read different words (RP < 32) hit different banks.
 *
 * ---- Kernel ----
 * launch_dependents; scales by cp.async; round 0's U loads a thread;
 * griddepcontrol.wait; x staged; then for each round: the next round's U
 * loads into the other register buffer, then this round's math. Math per
 * word in f32: 4 chains of FMAs (8 products each for NF4, 16 for Q2_0), a
 * tree of 2 adds, then acc32 = fma(part, scale, acc32) over the words of
 * the round (at most U), acc32 added into an f64 accumulator at each round
 * end. At the end of a pass a row's k-parts meet: a warp shuffle butterfly
 * (in f64) over the k-parts inside a warp, then shared memory [pass][warp
 * or k-part][row], summed in f64 in k-part order by one thread a row and
 * rounded once to f32. Deterministic: every sum has a fixed order.
 *
 * ---- Why |y - ref| <= 1e-3 R (DESIGN.md 5.1's count) ----
 * x is exact in f32 (f32 given, or bf16 widened), NF4 table values and the
 * Q2_0 (code - 1) and fp16 d are exact f32; a product meets D f32 roundings
 * before the f64 accumulator: its chain (8 NF4, 16 Q2_0), the tree (2), the
 * fma with the scale and the round's accumulation (at most U = 16): D <= 26
 * (NF4), 34 (Q2_0). The f64 sums add k/32 + 40 or so roundings of 2^-53
 * (negligible), y one rounding of u = 2^-24. So |y - ref| <= (D + 3) u
 * sqrt(k) R: 29 u sqrt(k) R <= 1e-3 R for k <= 3.3e5 (NF4), 37 u sqrt(k) R
 * for k <= 2.0e5 (Q2_0); at k = 65536, 4.4e-4 and 5.6e-4. (Accumulating all
 * the words in f32 instead would let D grow with k / 32.)
 *
 * ---- Prediction (written before any run; H100: 132 SMs, ~3.2 TB/s read,
 * ~1.7 GHz) ----
 * 4096 x 4096, per SM 127 k weights. loads: NF4 9.4 MB (70 KB a CTA) about
 * 3.0 us (graph_floor's 2.73 for 8.6 MB plus x staged, 0.2); Q2_0 4.7 MB
 * about 2.0 us (fixed cost ~1 us, then the bytes).
 * NF4 full: per 8 codes ~29 instructions (3 mask/rotate, 8 byte extracts,
 * 8 LDS of the table, 8 FFMA, 2 LDS.128 of x) plus ~0.4 a code of per-word
 * work: ~4 issue slots a weight, 3970 cycles an SM (2.3 us); but shared
 * memory does one wavefront a cycle: the table is one wavefront per 32
 * codes, x 8 per 1024 (broadcast), ~5100 wavefronts an SM = 3.0 us. The
 * math is as long as the read, and only the part after each warp's words
 * land overlaps: NF4 full 4.5-5.5 us (f32 and bf16 x alike), 1.5-1.8x the
 * floor, still under the tiles' 7.1-8.3. Q2_0 full: LOP3 + FADD + FFMA a
 * weight plus x (16 LDS.128 a word) and per-word work: ~3.6 slots a weight,
 * ~3600 cycles = 2.1 us, shared memory ~1000 wavefronts: issue bound;
 * 3.0-3.8 us, 1.5-1.9x its floor (library 4.6-6.3). U: at 4096 x 4096 with
 * 512 threads the NF4 share is 8 words a thread: U 8 puts it all in flight
 * before the wait, U 4 half (Q2_0's 4 words: all at U 4 too); predicted
 * within 5% of each other (the math, not the read, sets the time).
 * 1024 x 4096 and 256 x 4096: fixed costs: loads 1.2-1.5 and 0.9-1.2 us,
 * full 1.6-2.2 and 1.1-1.4. 14336 x 4096 and 4096 x 14336 (33 / 16.5 MB):
 * loads ~10.5 us (NF4) and ~5.5 (Q2_0); NF4 full shared-memory bound at
 * ~10.5 us of math overlapped in rounds: 12-13 us (library LUT 16.5 /
 * 17.2); Q2_0 ~7.5 us of issue: 8-9 us. If NF4 comes out near 2x its floor
 * everywhere, its table lookups (shared memory) are the limit, not the
 * bytes in flight.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#define CK(call)                                                                                      \
  do {                                                                                                \
    cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                          \
      fflush(stdout);                                                                                 \
      fprintf(stderr, "small_share: %s failed at line %d (%s)\n", #call, __LINE__,                    \
              cudaGetErrorString(e_));                                                                \
      exit(3);                                                                                        \
    }                                                                                                 \
  } while (0)

enum { kNF4 = 0, kQ2 = 1 };
enum { kLoads = 0, kF32x = 1, kBf16x = 2 };

/* DESIGN.md section 4, exactly (each an f32 value) */
#define NF4_VALUES                                                                                  \
  -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f, -0.28444138169288635f, \
      -0.18477343022823334f, -0.09105003625154495f, 0.0f, 0.07958029955625534f,                    \
      0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f, 0.44070982933044434f,      \
      0.5626170039176941f, 0.7229568362236023f, 1.0f
__constant__ float c_nf4[16] = {NF4_VALUES};
static const float h_nf4[16] = {NF4_VALUES};

template <int FMT>
struct Fmt;
template <>
struct Fmt<kNF4> {
  static constexpr int CW = 32, SB = 4; /* codes a 16-byte word, bytes a scale */
};
template <>
struct Fmt<kQ2> {
  static constexpr int CW = 64, SB = 2;
};

/* Kernel parameters (one copy of the weights; the geometry of `Geom`). */
struct KP {
  const uint4 *codes;          /* CTA c's stream at c * I * THREADS words */
  const unsigned char *scales; /* CTA c's region at c * sreg bytes */
  const void *x;               /* k activations, f32 or bf16 */
  float *y;                    /* n outputs */
  unsigned *sink;              /* loads: written only if impossible */
  int n, nkw, nblk;            /* rows, words a row, 64-blocks a row */
  int RP, lgRP, P, NP, JW, I;  /* rows a pass, k-parts, passes, words a pass, items */
  int KWe, Gp;                 /* k-parts inside a warp (>= 1), sum slots a pass and row */
  int sreg, xs_bytes;          /* scale region stride, staged x bytes */
};

struct Cur {
  int i, pi, j; /* item, pass, word within the pass */
};

__device__ __forceinline__ void cur_step(Cur &c, int JW) {
  ++c.i;
  if (++c.j == JW) {
    c.j = 0;
    ++c.pi;
  }
}

__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

/* One round: U items of the thread's stream, each a 16-byte load or a hole. */
template <int U, int T>
__device__ __forceinline__ void issue(uint4 (&b)[U], Cur &c, const uint4 *gp, const KP &p, int nr, int q, int r) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    b[u] = make_uint4(0u, 0u, 0u, 0u);
    if (c.i < p.I && c.pi * p.RP + r < nr && c.j * p.P + q < p.nkw) b[u] = __ldg(gp + (size_t)c.i * T);
    cur_step(c, p.JW);
  }
}

__device__ __forceinline__ float lut_at(const float *lut, unsigned byte_off) {
  return *reinterpret_cast<const float *>(reinterpret_cast<const char *>(lut) + byte_off);
}

/* 32 NF4 codes (k offsets 0..31 of the word) times x: 4 chains of 8 FMAs. */
__device__ __forceinline__ float nf4_word(const uint4 w, const float *xp, const float *lut) {
  const unsigned ws[4] = {w.x, w.y, w.z, w.w};
  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    const float4 xa = reinterpret_cast<const float4 *>(xp)[2 * g];
    const float4 xb = reinterpret_cast<const float4 *>(xp)[2 * g + 1];
    const unsigned e = ws[g] & 0x3C3C3C3Cu;                            /* 4 code, offsets 8g + b */
    const unsigned o = __funnelshift_r(ws[g], ws[g], 4) & 0x3C3C3C3Cu; /* offsets 8g + 4 + b */
    c0 = fmaf(lut_at(lut, e & 0xFFu), xa.x, c0);
    c1 = fmaf(lut_at(lut, __byte_perm(e, 0u, 0x4441u)), xa.y, c1);
    c2 = fmaf(lut_at(lut, __byte_perm(e, 0u, 0x4442u)), xa.z, c2);
    c3 = fmaf(lut_at(lut, e >> 24), xa.w, c3);
    c0 = fmaf(lut_at(lut, o & 0xFFu), xb.x, c0);
    c1 = fmaf(lut_at(lut, __byte_perm(o, 0u, 0x4441u)), xb.y, c1);
    c2 = fmaf(lut_at(lut, __byte_perm(o, 0u, 0x4442u)), xb.z, c2);
    c3 = fmaf(lut_at(lut, o >> 24), xb.w, c3);
  }
  return (c0 + c1) + (c2 + c3);
}

/* 64 Q2_0 codes times x: (code - 1) from a magic float (header), 4 chains of
 * 16 FMAs. */
__device__ __forceinline__ float q2_word(const uint4 w, const float *xp) {
  const unsigned ws[4] = {w.x, w.y, w.z, w.w};
  float c[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    const unsigned lo = ws[g], hi = ws[g] >> 22;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const float4 xv = reinterpret_cast<const float4 *>(xp)[4 * g + m];
      const float xe[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = 4 * m + e;              /* code j of register g: k offset 16g + j */
        const int jj = j < 11 ? j : j - 11;   /* its bit pair in lo or hi */
        const unsigned src = j < 11 ? lo : hi;
        const unsigned bits = (src & (3u << (2 * jj))) | ((unsigned)(150 - 2 * jj) << 23);
        const float v = __uint_as_float(bits) - (float)((1 << (23 - 2 * jj)) + 1);
        c[e] = fmaf(v, xe[e], c[e]);
      }
    }
  }
  return (c[0] + c[1]) + (c[2] + c[3]);
}

/* x into shared memory as f32, 4 floats of padding after every CW. XV
 * vectors a thread are loaded before any is stored. */
template <int FMT, int MODE, int XV, int T>
__device__ __forceinline__ void stage_x(const KP &p, float *xs, int t) {
  constexpr int CW = Fmt<FMT>::CW;
  const int K = p.nkw * CW;
  if (MODE == kBf16x) {
    const uint4 *xg = reinterpret_cast<const uint4 *>(p.x);
    const int nv = K >> 3;
    for (int b0 = 0; b0 < nv; b0 += XV * T) {
      uint4 v[XV];
#pragma unroll
      for (int e = 0; e < XV; ++e) {
        const int i = b0 + e * T + t;
        v[e] = make_uint4(0u, 0u, 0u, 0u);
        if (i < nv) v[e] = __ldg(xg + i);
      }
#pragma unroll
      for (int e = 0; e < XV; ++e) {
        const int i = b0 + e * T + t;
        if (i < nv) {
          const int k = i << 3;
          float4 *d = reinterpret_cast<float4 *>(xs + k + 4 * (k / CW));
          d[0] = make_float4(__uint_as_float(v[e].x << 16), __uint_as_float(v[e].x & 0xFFFF0000u),
                             __uint_as_float(v[e].y << 16), __uint_as_float(v[e].y & 0xFFFF0000u));
          d[1] = make_float4(__uint_as_float(v[e].z << 16), __uint_as_float(v[e].z & 0xFFFF0000u),
                             __uint_as_float(v[e].w << 16), __uint_as_float(v[e].w & 0xFFFF0000u));
        }
      }
    }
  } else {
    const float4 *xg = reinterpret_cast<const float4 *>(p.x);
    const int nv = K >> 2;
    for (int b0 = 0; b0 < nv; b0 += XV * T) {
      float4 v[XV];
#pragma unroll
      for (int e = 0; e < XV; ++e) {
        const int i = b0 + e * T + t;
        v[e] = make_float4(0.f, 0.f, 0.f, 0.f);
        if (i < nv) v[e] = __ldg(xg + i);
      }
#pragma unroll
      for (int e = 0; e < XV; ++e) {
        const int i = b0 + e * T + t;
        if (i < nv) {
          const int k = i << 2;
          *reinterpret_cast<float4 *>(xs + k + 4 * (k / CW)) = v[e];
        }
      }
    }
  }
}

/* A pass ends: the row's k-parts inside the warp meet (butterfly over the
 * lane bits above RP), one slot a warp (or a k-part when RP >= 32). */
__device__ __forceinline__ void flush(double v, int pi, int g, int r, int t, const KP &p, double *red) {
  for (int off = p.RP; off < 32; off <<= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if (p.RP >= 32 || (t & 31) < p.RP) red[(pi * p.Gp + g) * p.RP + r] = v;
}

/* One round's math. Item validity differs by lane; the pass end does not. */
template <int FMT, int MODE, int U>
__device__ __forceinline__ void consume(const uint4 (&b)[U], Cur &c, const KP &p, int nr, int q, int r, int g, int t,
                                        const float *xs, const unsigned char *ss, const float *lut, double *red,
                                        float &acc32, double &acc64, unsigned &fold) {
  constexpr int CW = Fmt<FMT>::CW;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (c.i < p.I) {
      const int rl = c.pi * p.RP + r, kw = c.j * p.P + q;
      if (rl < nr && kw < p.nkw) {
        if (MODE == kLoads) {
          fold ^= b[u].x ^ b[u].y ^ b[u].z ^ b[u].w;
        } else {
          const float *xp = xs + kw * (CW + 4);
          float part, s;
          if (FMT == kNF4) {
            part = nf4_word(b[u], xp, lut);
            s = reinterpret_cast<const float *>(ss)[(kw >> 1) * nr + rl];
          } else {
            part = q2_word(b[u], xp);
            s = __half2float(reinterpret_cast<const __half *>(ss)[kw * nr + rl]);
          }
          acc32 = fmaf(part, s, acc32);
        }
      }
      if (MODE != kLoads && c.j == p.JW - 1) {
        acc64 += (double)acc32;
        acc32 = 0.f;
        flush(acc64, c.pi, g, r, t, p, red);
        acc64 = 0.0;
      }
      cur_step(c, p.JW);
    }
  }
  if (MODE != kLoads) {
    acc64 += (double)acc32;
    acc32 = 0.f;
  }
}

template <int FMT, int MODE, int U, int T>
__global__ void __launch_bounds__(T, 1) share_kernel(const KP p) {
  constexpr int SB = Fmt<FMT>::SB;
  constexpr int XV = (8 * U + 32 + 40 <= 65536 / T) ? 8 : 4; /* x vectors in flight: what registers allow */
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ float lut[16];
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int t = threadIdx.x, c = blockIdx.x, G = gridDim.x;
  const int R0 = (int)((long long)c * p.n / G);
  const int nr = (int)((long long)(c + 1) * p.n / G) - R0;
  const int q = t >> p.lgRP, r = t & (p.RP - 1), g = q / p.KWe;
  float *xs = reinterpret_cast<float *>(smem);
  unsigned char *ss = smem + p.xs_bytes;
  double *red = reinterpret_cast<double *>(smem + p.xs_bytes + p.sreg);

  /* before the wait: nothing here depends on the previous kernel */
  {
    const int nch = (nr * p.nblk * SB + 15) >> 4;
    const unsigned char *sg = p.scales + (size_t)c * p.sreg;
    for (int i = t; i < nch; i += T) cp_async16(ss + 16 * i, sg + 16 * i);
    cp_async_commit();
  }
  if (FMT == kNF4 && t < 16) lut[t] = c_nf4[t];
  const uint4 *gp = p.codes + (size_t)c * p.I * T + t;
  Cur ld = {0, 0, 0};
  uint4 A[U], B[U];
  issue<U, T>(A, ld, gp, p, nr, q, r); /* round 0 */

  asm volatile("griddepcontrol.wait;" ::: "memory");
  stage_x<FMT, MODE, XV, T>(p, xs, t);
  cp_async_wait_all();
  __syncthreads();

  Cur mt = {0, 0, 0};
  float acc32 = 0.f;
  double acc64 = 0.0;
  unsigned fold = 0u;
  const int NR = (p.I + U - 1) / U;
  for (int rd = 0; rd < NR; rd += 2) {
    if (rd + 1 < NR) issue<U, T>(B, ld, gp, p, nr, q, r); /* round rd + 1 */
    consume<FMT, MODE, U>(A, mt, p, nr, q, r, g, t, xs, ss, lut, red, acc32, acc64, fold);
    if (rd + 1 < NR) {
      if (rd + 2 < NR) issue<U, T>(A, ld, gp, p, nr, q, r); /* round rd + 2 */
      consume<FMT, MODE, U>(B, mt, p, nr, q, r, g, t, xs, ss, lut, red, acc32, acc64, fold);
    }
  }
  if (MODE == kLoads) {
    fold ^= __float_as_uint(xs[(t * 7) % (p.nkw * Fmt<FMT>::CW)]); /* keeps the staging */
    if (fold == 0x9e3779b9u) p.sink[c] = fold;                     /* almost never: keeps the loads */
    return;
  }
  __syncthreads();
  for (int s = t; s < p.NP * p.RP; s += T) { /* s = the CTA's row pi RP + r */
    if (s < nr) {
      const int pi = s >> p.lgRP, rr = s & (p.RP - 1);
      const double *rp = red + (size_t)pi * p.Gp * p.RP + rr;
      double sum = 0.0;
      for (int k = 0; k < p.Gp; ++k) sum += rp[(size_t)k * p.RP];
      p.y[R0 + s] = (float)sum;
    }
  }
}

/* The read probe: persistent, U loads in flight a thread. */
template <int U>
__global__ void __launch_bounds__(512) probe_kernel(const uint4 *p, size_t count, unsigned *sink) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + (U - 1) * stride < count; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldg(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = __ldg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

/* ------------------------------------------------------------------ host */

struct Kern {
  int fmt, mode, U, T;
  void (*fn)(KP);
};

#define K4(F, M, U) {F, M, U, 256, share_kernel<F, M, U, 256>}, {F, M, U, 512, share_kernel<F, M, U, 512>}
#define K3(F, M) K4(F, M, 4), K4(F, M, 8), {F, M, 16, 256, share_kernel<F, M, 16, 256>}
static const Kern kKerns[] = {K3(kNF4, kLoads), K3(kNF4, kF32x), K3(kNF4, kBf16x),
                              K3(kQ2, kLoads),  K3(kQ2, kF32x),  K3(kQ2, kBf16x)};

static const Kern *find_kern(int fmt, int mode, int U, int T) {
  for (const Kern &k : kKerns)
    if (k.fmt == fmt && k.mode == mode && k.U == U && k.T == T) return &k;
  return nullptr;
}

static const char *fmt_name(int fmt) { return fmt == kNF4 ? "nf4" : "q2g64"; }
static std::string variant_name(int fmt, int mode) {
  if (mode == kLoads) return "loads";
  return std::string(fmt_name(fmt)) + (mode == kF32x ? "-f32x" : "-bf16x");
}

struct Geom {
  int G, T, CW, SB, nkw, nblk, nrmax, RP, lgRP, P, NP, JW, I, KWe, Gp, sreg, xs_bytes;
  size_t red_bytes, smem, codes_bytes, copy_bytes;
};

static int cta_row0(int c, int n, int G) { return (int)((long long)c * n / G); }

static Geom make_geom(int fmt, int n, int k, int G, int T) {
  Geom g = {};
  g.G = G;
  g.T = T;
  g.CW = fmt == kNF4 ? 32 : 64;
  g.SB = fmt == kNF4 ? 4 : 2;
  g.nkw = k / g.CW;
  g.nblk = k / 64;
  for (int c = 0; c < G; ++c) g.nrmax = std::max(g.nrmax, cta_row0(c + 1, n, G) - cta_row0(c, n, G));
  /* the largest RP whose items a thread, NP JW, are within 4% of the fewest
   * (14336 x 4096 at 256 threads: RP 16, 7 x 8 = 56 items, not RP 2, 55 x 1) */
  long fewest = -1;
  for (int RP = T; RP >= 1; RP >>= 1) {
    const int P = T / RP, NP = std::max(1, (g.nrmax + RP - 1) / RP), JW = (g.nkw + P - 1) / P;
    if (fewest < 0 || (long)NP * JW < fewest) fewest = (long)NP * JW;
  }
  for (int RP = T; RP >= 1; RP >>= 1) {
    const int P = T / RP, NP = std::max(1, (g.nrmax + RP - 1) / RP), JW = (g.nkw + P - 1) / P;
    if ((long)NP * JW * 100 <= fewest * 104) {
      g.RP = RP;
      g.P = P;
      g.NP = NP;
      g.JW = JW;
      break;
    }
  }
  g.lgRP = 0;
  while ((1 << g.lgRP) < g.RP) ++g.lgRP;
  g.I = g.NP * g.JW;
  g.KWe = g.RP >= 32 ? 1 : 32 / g.RP;
  g.Gp = g.P / g.KWe;
  g.xs_bytes = g.nkw * (g.CW + 4) * 4;
  g.sreg = (g.nrmax * g.nblk * g.SB + 15) / 16 * 16;
  g.red_bytes = (size_t)g.NP * g.Gp * g.RP * 8;
  g.smem = (size_t)g.xs_bytes + g.sreg + g.red_bytes;
  g.codes_bytes = (size_t)G * g.I * T * 16;
  g.copy_bytes = ((g.codes_bytes + 255) / 256 * 256 + (size_t)G * g.sreg + 255) / 256 * 256;
  return g;
}

/* ---- weights, activations, reference ---- */

static uint64_t g_rng = 0x5EEDC0DE2024ull;
static uint64_t rng_u64() { /* splitmix64 */
  uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double rng_u01() { return (double)(rng_u64() >> 11) * (1.0 / 9007199254740992.0); }
static double rng_gauss() {
  const double u1 = rng_u01() + 1e-300, u2 = rng_u01();
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static bool zero_col(int kk) { return kk % 97 == 13; } /* weights 0 in every row */
static bool flat_row(int row) { return row % 11 == 3; } /* every other weight the top code */

struct HostW {
  int fmt, n, k, nblk;
  std::vector<uint8_t> code;  /* n * k, one code a byte */
  std::vector<float> s32;     /* NF4 scales */
  std::vector<uint16_t> s16;  /* Q2_0 d, fp16 bits */
  std::vector<double> sd;     /* the scale as a double, either format */
  size_t real_bytes;          /* DESIGN.md section 4's bytes */
};

static void gen_weights(HostW &w, int fmt, int n, int k) {
  w.fmt = fmt;
  w.n = n;
  w.k = k;
  w.nblk = k / 64;
  w.code.assign((size_t)n * k, 0);
  w.sd.assign((size_t)n * w.nblk, 0.0);
  if (fmt == kNF4)
    w.s32.assign((size_t)n * w.nblk, 0.f);
  else
    w.s16.assign((size_t)n * w.nblk, 0);
  const int zc = fmt == kNF4 ? 7 : 1, top = fmt == kNF4 ? 15 : 3, mask = fmt == kNF4 ? 15 : 3;
  for (int row = 0; row < n; ++row) {
    for (int b = 0; b < w.nblk; ++b) {
      const float s = (float)(0.25 + 0.75 * rng_u01());
      const size_t si = (size_t)row * w.nblk + b;
      if (fmt == kNF4) {
        w.s32[si] = s;
        w.sd[si] = s;
      } else {
        const __half h = __float2half_rn(s);
        uint16_t bits;
        memcpy(&bits, &h, 2);
        w.s16[si] = bits;
        w.sd[si] = (double)__half2float(h);
      }
    }
    uint8_t *cr = &w.code[(size_t)row * k];
    for (int kk = 0; kk < k; ++kk)
      cr[kk] = (uint8_t)(zero_col(kk) ? zc : flat_row(row) ? top : (int)(rng_u64() >> 40) & mask);
  }
  w.real_bytes = fmt == kNF4 ? (size_t)n * k / 2 + (size_t)n * w.nblk * 4 : (size_t)n * w.nblk * 18;
}

static uint16_t f2bf(float f) { /* round to nearest even; no NaN here */
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static float bf2f(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static const char *kSetName[3] = {"gauss", "adv", "pos"};

static std::vector<float> make_x(int set, int k) {
  std::vector<float> x(k);
  for (int kk = 0; kk < k; ++kk) {
    if (set == 0)
      x[kk] = (float)rng_gauss();
    else if (set == 1)
      x[kk] = zero_col(kk) ? (float)((kk & 1 ? -1.0 : 1.0) * 1e5 * (1.0 + rng_u01())) : (float)(1e-5 * rng_gauss());
    else
      x[kk] = (float)(0.5 + 0.5 * rng_u01());
  }
  return x;
}

static void reference(const HostW &w, const std::vector<float> &x, std::vector<double> &ref, std::vector<double> &R) {
  double vd[16];
  for (int c = 0; c < 16; ++c) vd[c] = w.fmt == kNF4 ? (double)h_nf4[c] : (double)(c - 1);
  ref.assign(w.n, 0.0);
  R.assign(w.n, 0.0);
  for (int row = 0; row < w.n; ++row) {
    const uint8_t *cr = &w.code[(size_t)row * w.k];
    double acc = 0.0, r2 = 0.0;
    for (int b = 0; b < w.nblk; ++b) {
      const double s = w.sd[(size_t)row * w.nblk + b];
      for (int e = 0; e < 64; ++e) {
        const int kk = b * 64 + e;
        const double pr = vd[cr[kk]] * s * (double)x[kk];
        acc += pr;
        r2 += pr * pr;
      }
    }
    ref[row] = acc;
    R[row] = sqrt(r2);
  }
}

static double max_err(const std::vector<float> &y, const std::vector<double> &ref, const std::vector<double> &R) {
  double m = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) return INFINITY;
    const double d = fabs((double)y[i] - ref[i]);
    const double e = R[i] > 0.0 ? d / R[i] : (d == 0.0 ? 0.0 : INFINITY);
    m = std::max(m, e);
  }
  return m;
}

/* ---- repack (layout in the header) ---- */

static uint32_t rotl32(uint32_t v, int s) { return (v << s) | (v >> (32 - s)); }

static void pack(const Geom &g, const HostW &w, std::vector<uint8_t> &out) {
  out.assign(g.copy_bytes, 0);
  uint32_t *cw = reinterpret_cast<uint32_t *>(out.data());
  uint8_t *sb = out.data() + (g.codes_bytes + 255) / 256 * 256;
  for (int c = 0; c < g.G; ++c) {
    const int R0 = cta_row0(c, w.n, g.G), nr = cta_row0(c + 1, w.n, g.G) - R0;
    for (int i = 0; i < g.I; ++i) {
      const int pi = i / g.JW, j = i % g.JW;
      for (int t = 0; t < g.T; ++t) {
        const int q = t >> g.lgRP, r = t & (g.RP - 1), rl = pi * g.RP + r, kw = j * g.P + q;
        if (rl >= nr || kw >= g.nkw) continue;
        const uint8_t *cr = &w.code[(size_t)(R0 + rl) * w.k + (size_t)kw * g.CW];
        uint32_t *wd = cw + (((size_t)c * g.I + i) * g.T + t) * 4;
        for (int gq = 0; gq < 4; ++gq) {
          uint32_t v = 0;
          if (w.fmt == kNF4) {
            for (int b = 0; b < 4; ++b)
              v |= (uint32_t)cr[8 * gq + b] << (8 * b) | (uint32_t)cr[8 * gq + 4 + b] << (8 * b + 4);
            v = rotl32(v, 2);
          } else {
            for (int jj = 0; jj < 16; ++jj) v |= (uint32_t)cr[16 * gq + jj] << (2 * jj);
          }
          wd[gq] = v;
        }
      }
    }
    uint8_t *sr = sb + (size_t)c * g.sreg;
    for (int b = 0; b < g.nblk; ++b)
      for (int rl = 0; rl < nr; ++rl) {
        const size_t si = (size_t)(R0 + rl) * w.nblk + b, di = (size_t)b * nr + rl;
        if (w.fmt == kNF4)
          memcpy(sr + di * 4, &w.s32[si], 4);
        else
          memcpy(sr + di * 2, &w.s16[si], 2);
      }
  }
}

/* ---- records ---- */

struct Rec {
  std::string shape, fmt, variant, status;
  int U, T, regs, occ, nodes, copies;
  double us, us_min, gbps, pct, err;
  std::string err_set;
};

static double now_s() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void launch(const Kern &kn, const Geom &g, const KP &kp, cudaStream_t s) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(g.G);
  cfg.blockDim = dim3(g.T);
  cfg.dynamicSmemBytes = g.smem;
  cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, kn.fn, kp));
}

static double probe_read(int sms, cudaStream_t s) {
  const size_t bytes = (size_t)1 << 30, count = bytes / 16;
  uint4 *buf;
  unsigned *sink;
  CK(cudaMalloc(&buf, bytes));
  CK(cudaMemset(buf, 1, bytes));
  CK(cudaMalloc(&sink, 4));
  struct P {
    const char *name;
    int U, bps;
  } const ps[] = {{"U4 x1", 4, 1}, {"U4 x2", 4, 2}, {"U4 x4", 4, 4}, {"U8 x1", 8, 1}, {"U8 x2", 8, 2}};
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  double best = 0.0;
  const char *bn = "";
  for (const P &pr : ps) {
    float bestms = 1e30f;
    for (int rep = 0; rep < 6; ++rep) {
      CK(cudaEventRecord(e0, s));
      if (pr.U == 4)
        probe_kernel<4><<<sms * pr.bps, 512, 0, s>>>(buf, count, sink);
      else
        probe_kernel<8><<<sms * pr.bps, 512, 0, s>>>(buf, count, sink);
      CK(cudaGetLastError());
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms = 0.f;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (rep > 0) bestms = std::min(bestms, ms);
    }
    const double gbps = bytes / (bestms * 1e-3) / 1e9;
    if (gbps > best) {
      best = gbps;
      bn = pr.name;
    }
  }
  printf("read probe: 1 GiB streamed, best %.0f GB/s (persistent 512 threads, %s blocks an SM)\n", best, bn);
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(buf));
  CK(cudaFree(sink));
  return best;
}

static void jnum(FILE *f, const char *key, double v, bool comma = true) {
  if (std::isfinite(v))
    fprintf(f, "\"%s\": %.6g%s", key, v, comma ? ", " : "");
  else
    fprintf(f, "\"%s\": null%s", key, comma ? ", " : "");
}

static void usage() {
  fprintf(stderr,
          "usage: small_share [--shape NxK]... [--nodes N] [--reps R] [--json FILE] [--fmt nf4|q2g64|all]\n"
          "                   [--grid-mult M] [--no-time] [--deadline S]\n");
  exit(2);
}

int main(int argc, char **argv) {
  std::vector<std::pair<int, int>> shapes;
  int nodes = 64, reps = 15, gmult = 1, fmt_sel = -1;
  bool timing = true;
  double deadline = 120.0;
  const char *json = nullptr;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    const bool has = a + 1 < argc;
    if (s == "--shape" && has) {
      int n = 0, k = 0;
      if (sscanf(argv[++a], "%dx%d", &n, &k) != 2 || n < 1 || k < 64 || k % 64) {
        fprintf(stderr, "small_share: bad shape '%s' (NxK, N >= 1, K a multiple of 64)\n", argv[a]);
        return 2;
      }
      shapes.push_back({n, k});
    } else if (s == "--nodes" && has) {
      nodes = atoi(argv[++a]);
    } else if (s == "--reps" && has) {
      reps = atoi(argv[++a]);
    } else if (s == "--json" && has) {
      json = argv[++a];
    } else if (s == "--grid-mult" && has) {
      gmult = atoi(argv[++a]);
    } else if (s == "--deadline" && has) {
      deadline = atof(argv[++a]);
    } else if (s == "--fmt" && has) {
      const std::string f = argv[++a];
      fmt_sel = f == "nf4" ? kNF4 : f == "q2g64" ? kQ2 : f == "all" ? -1 : -2;
      if (fmt_sel == -2) usage();
    } else if (s == "--no-time") {
      timing = false;
    } else {
      usage();
    }
  }
  if (nodes < 1 || nodes > 4096 || reps < 1 || reps > 1000 || gmult < 1 || gmult > 16) usage();
  if (shapes.empty()) shapes = {{4096, 4096}, {1024, 4096}, {256, 4096}, {14336, 4096}, {4096, 14336}};
  const double t_start = now_s();

  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int l2 = 0, khz = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const int sms = prop.multiProcessorCount, G = sms * gmult;
  printf("small_share: %s, %d SMs, L2 %d MB, %.2f GHz peak, shared memory %zu KB a CTA; grid %d CTAs\n", prop.name,
         sms, l2 >> 20, khz * 1e-6, prop.sharedMemPerBlockOptin >> 10, G);
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const double probe = timing ? probe_read(sms, st) : NAN;

  std::vector<Rec> recs;
  int fails = 0;
  unsigned *sink;
  CK(cudaMalloc(&sink, sizeof(unsigned) * 4096));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  for (const auto &sh : shapes) {
    const int n = sh.first, k = sh.second;
    char shape[32];
    snprintf(shape, sizeof shape, "%dx%d", n, k);
    for (int fmt = 0; fmt < 2; ++fmt) {
      if (fmt_sel >= 0 && fmt != fmt_sel) continue;
      HostW w;
      gen_weights(w, fmt, n, k);
      /* x: three sets, f32 and bf16; references on the values the kernel sees */
      std::vector<float> xf[3], xw[3];
      std::vector<uint16_t> xb[3];
      std::vector<double> ref[2][3], R[2][3];
      float *dxf[3];
      uint16_t *dxb[3];
      for (int set = 0; set < 3; ++set) {
        xf[set] = make_x(set, k);
        xb[set].resize(k);
        xw[set].resize(k);
        for (int kk = 0; kk < k; ++kk) {
          xb[set][kk] = f2bf(xf[set][kk]);
          xw[set][kk] = bf2f(xb[set][kk]);
        }
        reference(w, xf[set], ref[0][set], R[0][set]);
        reference(w, xw[set], ref[1][set], R[1][set]);
        CK(cudaMalloc(&dxf[set], sizeof(float) * k));
        CK(cudaMalloc(&dxb[set], sizeof(uint16_t) * k));
        CK(cudaMemcpy(dxf[set], xf[set].data(), sizeof(float) * k, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dxb[set], xb[set].data(), sizeof(uint16_t) * k, cudaMemcpyHostToDevice));
      }
      float *dy;
      CK(cudaMalloc(&dy, sizeof(float) * n));
      std::vector<float> y(n);

      for (int T : {256, 512}) {
        const Geom g = make_geom(fmt, n, k, G, T);
        if (g.smem + 1024 > prop.sharedMemPerBlockOptin) {
          printf("%s %s T %d: skip: %zu bytes of shared memory a CTA, over %zu\n", shape, fmt_name(fmt), T, g.smem,
                 prop.sharedMemPerBlockOptin);
          continue;
        }
        std::vector<uint8_t> host;
        pack(g, w, host);
        /* copies: C x bytes >= 4 x L2, nodes a multiple of C */
        size_t C = std::max<size_t>(2, ((size_t)4 * l2 + w.real_bytes - 1) / w.real_bytes);
        bool l2_note = false;
        if (C > 2048) {
          C = 2048;
          l2_note = true;
        }
        const int nodes_eff = (int)(C * ((nodes + C - 1) / C));
        uint8_t *dw;
        CK(cudaMalloc(&dw, g.copy_bytes * C));
        CK(cudaMemcpy(dw, host.data(), g.copy_bytes, cudaMemcpyHostToDevice));
        for (size_t cp = 1; cp < C; ++cp)
          CK(cudaMemcpyAsync(dw + cp * g.copy_bytes, dw, g.copy_bytes, cudaMemcpyDeviceToDevice, st));
        CK(cudaStreamSynchronize(st));
        printf("\n%s %s, %d threads: %.2f MB of weights and scales; RP %d rows x P %d k-parts, %d pass(es) x %d "
               "words = %d items a thread; shared %zu KB; %zu copies, %d nodes%s\n",
               shape, fmt_name(fmt), T, w.real_bytes / 1e6, g.RP, g.P, g.NP, g.JW, g.I, g.smem >> 10, C, nodes_eff,
               l2_note ? " (L2 not beaten: shape too small for 2048 copies)" : "");
        KP base = {};
        base.y = dy;
        base.sink = sink;
        base.n = n;
        base.nkw = g.nkw;
        base.nblk = g.nblk;
        base.RP = g.RP;
        base.lgRP = g.lgRP;
        base.P = g.P;
        base.NP = g.NP;
        base.JW = g.JW;
        base.I = g.I;
        base.KWe = g.KWe;
        base.Gp = g.Gp;
        base.sreg = g.sreg;
        base.xs_bytes = g.xs_bytes;
        const size_t scale_off = (g.codes_bytes + 255) / 256 * 256;
        auto at_copy = [&](KP kp, size_t cp) {
          kp.codes = reinterpret_cast<const uint4 *>(dw + cp * g.copy_bytes);
          kp.scales = dw + cp * g.copy_bytes + scale_off;
          return kp;
        };

        for (int mode : {kLoads, kF32x, kBf16x}) {
          for (int U : {4, 8, 16}) {
            Rec rc = {};
            rc.shape = shape;
            rc.fmt = fmt_name(fmt);
            rc.variant = variant_name(fmt, mode);
            rc.U = U;
            rc.T = T;
            rc.nodes = nodes_eff;
            rc.copies = (int)C;
            rc.us = rc.us_min = rc.gbps = rc.pct = rc.err = NAN;
            printf("  %-10s %-5s %-11s U %2d T %d  ", shape, rc.fmt.c_str(), rc.variant.c_str(), U, T);
            fflush(stdout);
            const Kern *kn = find_kern(fmt, mode, U, T);
            if (!kn) {
              rc.status = "skip: not built (2 x 16 words = 128 registers, all a thread gets at 512 threads)";
              printf("%s\n", rc.status.c_str());
              recs.push_back(rc);
              continue;
            }
            if (now_s() - t_start > deadline) {
              rc.status = "skip: past --deadline";
              printf("%s\n", rc.status.c_str());
              recs.push_back(rc);
              continue;
            }
            cudaFuncAttributes fa;
            CK(cudaFuncGetAttributes(&fa, kn->fn));
            rc.regs = fa.numRegs;
            if (fa.localSizeBytes > 0) {
              char b[96];
              snprintf(b, sizeof b, "skip: spills (%zu bytes of local memory a thread, %d registers)",
                       fa.localSizeBytes, fa.numRegs);
              rc.status = b;
              printf("%s\n", b);
              recs.push_back(rc);
              continue;
            }
            CK(cudaFuncSetAttribute(kn->fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g.smem));
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&rc.occ, kn->fn, T, g.smem));
            if (rc.occ < 1) {
              rc.status = "skip: does not fit an SM";
              printf("%s\n", rc.status.c_str());
              recs.push_back(rc);
              continue;
            }
            KP kp = base;
            kp.x = mode == kBf16x ? (const void *)dxb[0] : (const void *)dxf[0];
            /* one plain launch first: a fault names this variant */
            CK(cudaMemsetAsync(dy, 0xFF, sizeof(float) * n, st));
            launch(*kn, g, at_copy(kp, 0), st);
            CK(cudaStreamSynchronize(st));
            CK(cudaGetLastError());
            CK(cudaMemsetAsync(dy, 0xFF, sizeof(float) * n, st));
            if (timing) {
              cudaGraph_t gr;
              cudaGraphExec_t ge;
              CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
              for (int i = 0; i < nodes_eff; ++i) launch(*kn, g, at_copy(kp, (size_t)i % C), st);
              CK(cudaStreamEndCapture(st, &gr));
              CK(cudaGraphInstantiate(&ge, gr, 0));
              CK(cudaGraphLaunch(ge, st));
              CK(cudaStreamSynchronize(st));
              std::vector<float> tv;
              for (int rp = 0; rp < reps; ++rp) {
                CK(cudaEventRecord(e0, st));
                CK(cudaGraphLaunch(ge, st));
                CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1));
                float ms = 0.f;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                tv.push_back(ms * 1000.f / nodes_eff);
              }
              std::sort(tv.begin(), tv.end());
              rc.us = tv[tv.size() / 2];
              rc.us_min = tv[0];
              rc.gbps = w.real_bytes / (rc.us * 1e-6) / 1e9;
              rc.pct = 100.0 * rc.gbps / probe;
              CK(cudaGraphExecDestroy(ge));
              CK(cudaGraphDestroy(gr));
            } else {
              launch(*kn, g, at_copy(kp, 0), st);
              CK(cudaStreamSynchronize(st));
            }
            rc.status = "ok";
            if (mode != kLoads) {
              const int dt = mode == kBf16x ? 1 : 0;
              double worst = -1.0;
              for (int set = 0; set < 3; ++set) {
                if (set > 0) {
                  KP ka = kp;
                  ka.x = mode == kBf16x ? (const void *)dxb[set] : (const void *)dxf[set];
                  CK(cudaMemsetAsync(dy, 0xFF, sizeof(float) * n, st));
                  launch(*kn, g, at_copy(ka, 0), st);
                }
                CK(cudaStreamSynchronize(st));
                CK(cudaMemcpy(y.data(), dy, sizeof(float) * n, cudaMemcpyDeviceToHost));
                const double e = max_err(y, ref[dt][set], R[dt][set]);
                if (!(e <= worst)) {
                  worst = e;
                  rc.err_set = kSetName[set];
                }
              }
              rc.err = worst;
              if (!(worst <= 1e-3)) {
                rc.status = "FAIL";
                ++fails;
              }
            }
            printf("regs %3d  %d CTA/SM  %8.3f us (min %.3f)  %6.0f GB/s  %5.1f%% of read  ", rc.regs, rc.occ, rc.us,
                   rc.us_min, rc.gbps, rc.pct);
            if (mode == kLoads)
              printf("-\n");
            else
              printf("err/R %.2e (%s) %s\n", rc.err, rc.err_set.c_str(), rc.status.c_str());
            fflush(stdout);
            recs.push_back(rc);
          }
        }
        CK(cudaFree(dw));
      }
      CK(cudaFree(dy));
      for (int set = 0; set < 3; ++set) {
        CK(cudaFree(dxf[set]));
        CK(cudaFree(dxb[set]));
      }
    }
  }

  /* summary: per shape and format, the floor and the best full kernel per x dtype */
  struct Sum {
    std::string shape, fmt;
    const Rec *floor, *best[2];
  };
  std::vector<Sum> sums;
  for (const Rec &r : recs) {
    if (r.status != "ok" || !std::isfinite(r.us)) continue;
    Sum *sm = nullptr;
    for (Sum &s : sums)
      if (s.shape == r.shape && s.fmt == r.fmt) sm = &s;
    if (!sm) {
      sums.push_back({r.shape, r.fmt, nullptr, {nullptr, nullptr}});
      sm = &sums.back();
    }
    const Rec **slot = r.variant == "loads" ? &sm->floor : &sm->best[r.variant.find("bf16") != std::string::npos];
    if (!*slot || r.us < (*slot)->us) *slot = &r;
  }
  if (timing) {
    printf("\nsummary (us a call, median; floor = the loads variant, best over U and threads; read probe %.0f GB/s)\n",
           probe);
    printf("  %-11s %-6s %-16s %-24s %-24s\n", "shape", "fmt", "floor us (U,T)", "f32 x: us (U,T) full/floor",
           "bf16 x: us (U,T) full/floor");
    for (const Sum &s : sums) {
      char fl[32] = "-", b[2][40] = {"-", "-"};
      if (s.floor) snprintf(fl, sizeof fl, "%.3f (%d,%d)", s.floor->us, s.floor->U, s.floor->T);
      for (int d = 0; d < 2; ++d)
        if (s.best[d])
          snprintf(b[d], sizeof b[d], "%.3f (%d,%d) %.2fx", s.best[d]->us, s.best[d]->U, s.best[d]->T,
                   s.floor ? s.best[d]->us / s.floor->us : NAN);
      printf("  %-11s %-6s %-16s %-24s %-24s\n", s.shape.c_str(), s.fmt.c_str(), fl, b[0], b[1]);
    }
  }
  printf("\n%s: %d variant(s) over the bound\n", fails ? "FAIL" : "all within 1e-3 R", fails);

  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) {
      fprintf(stderr, "small_share: cannot write %s\n", json);
      return 4;
    }
    fprintf(f, "{\"device\": \"%s\", \"sms\": %d, \"grid\": %d, ", prop.name, sms, G);
    jnum(f, "probe_gbps", probe);
    fprintf(f, "\"records\": [\n");
    for (size_t i = 0; i < recs.size(); ++i) {
      const Rec &r = recs[i];
      fprintf(f, "  {\"shape\": \"%s\", \"fmt\": \"%s\", \"variant\": \"%s\", \"U\": %d, \"T\": %d, \"regs\": %d, ",
              r.shape.c_str(), r.fmt.c_str(), r.variant.c_str(), r.U, r.T, r.regs);
      fprintf(f, "\"cta_per_sm\": %d, \"nodes\": %d, \"copies\": %d, ", r.occ, r.nodes, r.copies);
      jnum(f, "us", r.us);
      jnum(f, "us_min", r.us_min);
      jnum(f, "gbps", r.gbps);
      jnum(f, "pct_read", r.pct);
      jnum(f, "err_over_R", r.err);
      fprintf(f, "\"err_set\": \"%s\", \"status\": \"%s\"}%s\n", r.err_set.c_str(), r.status.c_str(),
              i + 1 < recs.size() ? "," : "");
    }
    fprintf(f, "], \"summary\": [\n");
    for (size_t i = 0; i < sums.size(); ++i) {
      const Sum &s = sums[i];
      fprintf(f, "  {\"shape\": \"%s\", \"fmt\": \"%s\", ", s.shape.c_str(), s.fmt.c_str());
      jnum(f, "floor_us", s.floor ? s.floor->us : NAN);
      const char *dn[2] = {"f32x", "bf16x"};
      for (int d = 0; d < 2; ++d) {
        char key[32];
        snprintf(key, sizeof key, "%s_us", dn[d]);
        jnum(f, key, s.best[d] ? s.best[d]->us : NAN);
        snprintf(key, sizeof key, "%s_U", dn[d]);
        jnum(f, key, s.best[d] ? s.best[d]->U : NAN);
        snprintf(key, sizeof key, "%s_T", dn[d]);
        jnum(f, key, s.best[d] ? s.best[d]->T : NAN);
        snprintf(key, sizeof key, "%s_ratio", dn[d]);
        jnum(f, key, s.best[d] && s.floor ? s.best[d]->us / s.floor->us : NAN, d == 0);
      }
      fprintf(f, "}%s\n", i + 1 < sums.size() ? "," : "");
    }
    fprintf(f, "], \"fails\": %d}\n", fails);
    fclose(f);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  CK(cudaFree(sink));
  CK(cudaStreamDestroy(st));
  printf("%.1f s\n", now_s() - t_start);
  return fails ? 1 : 0;
}
