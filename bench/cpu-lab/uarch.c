/* Throughput of the instructions the kernels are built from, on this core:
 * each loop runs 12 independent chains of one instruction; the clock is a
 * chain of dependent integer adds (1 cycle each on every x86 core we know),
 * so the figures are per cycle without a PMU (none in this VM). Best of 15
 * runs: time slices lost to other processes only lengthen a run.
 *
 *   ./uarch          one line per instruction: per cycle, and weights per
 *                    cycle where the instruction is a kernel's multiply;
 *                    the latency of vpdpbusd and of the FMA (one chain);
 *                    vpdpbusd over 2, 4 and 6 chains (12 are the line
 *                    above) and with a broadcast memory operand. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define REPS 4000000L
#define T __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,gfni,avx512vbmi"), noinline))

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile uint64_t sink;

static void clock_chain(void) {
  uint64_t a = 1;
  for (long i = 0; i < REPS; i++) __asm__ volatile("add $1, %0\n add $1, %0\n add $1, %0\n add $1, %0\n" : "+r"(a));
  sink = a;
}

/* Twelve independent accumulators, one instruction each per iteration. */
#define BODY12(stmt) stmt(0) stmt(1) stmt(2) stmt(3) stmt(4) stmt(5) stmt(6) stmt(7) stmt(8) stmt(9) stmt(10) stmt(11)

#define ZMM_LOOP(name, decl, op)                                                                   \
  static T void name(void) {                                                                       \
    decl;                                                                                          \
    __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,       \
            a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;                                         \
    for (long i = 0; i < REPS / 4; i++) {                                                          \
      BODY12(op)                                                                                   \
      __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));           \
      __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));         \
    }                                                                                              \
    __m512i s = _mm512_xor_si512(a0, a11);                                                         \
    sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(s, _mm512_xor_si512(a5, a7)));      \
  }

#define DECL_B __m512i b = _mm512_set1_epi8(3), c = _mm512_set1_epi8(5); (void)b; (void)c
#define OP_DPBUSD(i) a##i = _mm512_dpbusd_epi32(a##i, b, c);
#define OP_DPWSSD(i) a##i = _mm512_dpwssd_epi32(a##i, b, c);
#define OP_MADDUBS(i) a##i = _mm512_maddubs_epi16(a##i, b);
#define OP_PERMD(i) a##i = _mm512_permutexvar_epi32(a##i, b);
#define OP_PERMILPS(i) a##i = _mm512_castps_si512(_mm512_permutevar_ps(_mm512_castsi512_ps(b), a##i));
#define OP_SHUFB(i) a##i = _mm512_shuffle_epi8(b, a##i);
#define OP_SRLI(i) a##i = _mm512_srli_epi32(a##i, 1);
#define OP_AND(i) a##i = _mm512_and_si512(a##i, b);
#define OP_GF2P8(i) a##i = _mm512_gf2p8affine_epi64_epi8(a##i, b, 0);
#define OP_FMA(i) a##i = _mm512_castps_si512(_mm512_fmadd_ps(_mm512_castsi512_ps(a##i), _mm512_castsi512_ps(b), _mm512_castsi512_ps(c)));
#define OP_ADDPS(i) a##i = _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a##i), _mm512_castsi512_ps(b)));
#define OP_PERMPS(i) a##i = _mm512_castps_si512(_mm512_permutexvar_ps(b, _mm512_castsi512_ps(a##i)));
#define OP_CVTDQ(i) a##i = _mm512_castps_si512(_mm512_cvtepi32_ps(a##i));

/* One chain of twelve dependent instructions per iteration: the latency.
 * A kernel whose accumulators form fewer than latency x throughput chains
 * cannot reach the throughput (q2_vnni.c: 12 chains at m = 1 since v17). */
#define OP_DPBUSD0(i) a0 = _mm512_dpbusd_epi32(a0, b, c);
#define OP_FMA0(i) a0 = _mm512_castps_si512(_mm512_fmadd_ps(_mm512_castsi512_ps(a0), _mm512_castsi512_ps(b), _mm512_castsi512_ps(c)));
#define ZMM_CHAIN(name, op)                                                              \
  static T void name(void) {                                                             \
    DECL_B;                                                                              \
    __m512i a0 = _mm512_set1_epi32(1);                                                   \
    for (long i = 0; i < REPS / 4; i++) {                                                \
      BODY12(op)                                                                         \
      __asm__ volatile("" : "+v"(a0));                                                   \
    }                                                                                    \
    sink = (uint64_t)_mm512_reduce_add_epi64(a0);                                        \
  }
ZMM_CHAIN(chain_dpbusd, OP_DPBUSD0)
ZMM_CHAIN(chain_fma, OP_FMA0)

/* Twelve vpdpbusd per iteration over N accumulators (instruction j into
 * accumulator j % N): what N chains carry. */
#define OPC(i) a##i = _mm512_dpbusd_epi32(a##i, b, c);
#define DPBUSD_CHAINS(N, BODY)                                                                \
  static T void chains_dpbusd_##N(void) {                                                     \
    DECL_B;                                                                                   \
    __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;          \
    for (long i = 0; i < REPS / 4; i++) {                                                     \
      BODY                                                                                    \
      __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));      \
    }                                                                                         \
    __m512i t = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));         \
    t = _mm512_xor_si512(t, _mm512_xor_si512(a4, a5));                                        \
    sink = (uint64_t)_mm512_reduce_add_epi64(t);                                              \
  }
DPBUSD_CHAINS(2, OPC(0) OPC(1) OPC(0) OPC(1) OPC(0) OPC(1) OPC(0) OPC(1) OPC(0) OPC(1) OPC(0) OPC(1))
DPBUSD_CHAINS(4, OPC(0) OPC(1) OPC(2) OPC(3) OPC(0) OPC(1) OPC(2) OPC(3) OPC(0) OPC(1) OPC(2) OPC(3))
DPBUSD_CHAINS(6, OPC(0) OPC(1) OPC(2) OPC(3) OPC(4) OPC(5) OPC(0) OPC(1) OPC(2) OPC(3) OPC(4) OPC(5))

/* Twelve chains of vpdpbusd whose x digits are a {1to16} memory operand,
 * as the Q2_0 kernel issues them (q2_vnni.c dot4). */
static T void chains_dpbusd_bcst(void) {
  static int32_t digits[16] __attribute__((aligned(64)));
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0,
          a10 = a0, a11 = a0;
#define OP_BCST(i) __asm__ volatile("vpdpbusd %1%{1to16%}, %2, %0" : "+v"(a##i) : "m"(digits[i]), "v"(b));
  for (long i = 0; i < REPS / 4; i++) {
    BODY12(OP_BCST)
  }
#undef OP_BCST
  (void)c;
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

ZMM_LOOP(zmm_dpbusd, DECL_B, OP_DPBUSD)
ZMM_LOOP(zmm_dpwssd, DECL_B, OP_DPWSSD)
ZMM_LOOP(zmm_maddubs, DECL_B, OP_MADDUBS)
ZMM_LOOP(zmm_permd, DECL_B, OP_PERMD)
ZMM_LOOP(zmm_permilps, DECL_B, OP_PERMILPS)
ZMM_LOOP(zmm_shufb, DECL_B, OP_SHUFB)
ZMM_LOOP(zmm_srli, DECL_B, OP_SRLI)
ZMM_LOOP(zmm_and, DECL_B, OP_AND)
ZMM_LOOP(zmm_gf2p8, DECL_B, OP_GF2P8)
ZMM_LOOP(zmm_fma, DECL_B, OP_FMA)
ZMM_LOOP(zmm_cvtdq, DECL_B, OP_CVTDQ)
ZMM_LOOP(zmm_addps, DECL_B, OP_ADDPS)
ZMM_LOOP(zmm_permps, DECL_B, OP_PERMPS)

/* A mix: per 256 Q2_0 weights of the VNNI kernel, 4 field extractions and
 * 16 dot products (12 chains share them). */
static T void zmm_q2mix(void) {
  __m512i b = _mm512_set1_epi8(3), c = _mm512_set1_epi8(5), codes = _mm512_set1_epi8(0x1b);
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0;
  for (long i = 0; i < REPS / 16; i++) {
    for (int f = 0; f < 4; f++) {
      __m512i w = _mm512_and_si512(_mm512_srli_epi16(codes, 2 * f), b);
      a0 = _mm512_dpbusd_epi32(a0, w, c);
      a1 = _mm512_dpbusd_epi32(a1, w, c);
      a2 = _mm512_dpbusd_epi32(a2, w, c);
      a3 = _mm512_dpbusd_epi32(a3, w, c);
      __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(codes));
    }
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3)));
}


static T void pair_DPBUSD_AND(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_DPBUSD(0) OP_AND(1) OP_DPBUSD(2) OP_AND(3) OP_DPBUSD(4) OP_AND(5) OP_DPBUSD(6) OP_AND(7) OP_DPBUSD(8) OP_AND(9) OP_DPBUSD(10) OP_AND(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_DPBUSD_SRLI(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_DPBUSD(0) OP_SRLI(1) OP_DPBUSD(2) OP_SRLI(3) OP_DPBUSD(4) OP_SRLI(5) OP_DPBUSD(6) OP_SRLI(7) OP_DPBUSD(8) OP_SRLI(9) OP_DPBUSD(10) OP_SRLI(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_DPBUSD_PERMILPS(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_DPBUSD(0) OP_PERMILPS(1) OP_DPBUSD(2) OP_PERMILPS(3) OP_DPBUSD(4) OP_PERMILPS(5) OP_DPBUSD(6) OP_PERMILPS(7) OP_DPBUSD(8) OP_PERMILPS(9) OP_DPBUSD(10) OP_PERMILPS(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_DPBUSD_GF2P8(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_DPBUSD(0) OP_GF2P8(1) OP_DPBUSD(2) OP_GF2P8(3) OP_DPBUSD(4) OP_GF2P8(5) OP_DPBUSD(6) OP_GF2P8(7) OP_DPBUSD(8) OP_GF2P8(9) OP_DPBUSD(10) OP_GF2P8(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_FMA_PERMILPS(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_FMA(0) OP_PERMILPS(1) OP_FMA(2) OP_PERMILPS(3) OP_FMA(4) OP_PERMILPS(5) OP_FMA(6) OP_PERMILPS(7) OP_FMA(8) OP_PERMILPS(9) OP_FMA(10) OP_PERMILPS(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_FMA_PERMD(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_FMA(0) OP_PERMD(1) OP_FMA(2) OP_PERMD(3) OP_FMA(4) OP_PERMD(5) OP_FMA(6) OP_PERMD(7) OP_FMA(8) OP_PERMD(9) OP_FMA(10) OP_PERMD(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_FMA_SRLI(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_FMA(0) OP_SRLI(1) OP_FMA(2) OP_SRLI(3) OP_FMA(4) OP_SRLI(5) OP_FMA(6) OP_SRLI(7) OP_FMA(8) OP_SRLI(9) OP_FMA(10) OP_SRLI(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_FMA_AND(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_FMA(0) OP_AND(1) OP_FMA(2) OP_AND(3) OP_FMA(4) OP_AND(5) OP_FMA(6) OP_AND(7) OP_FMA(8) OP_AND(9) OP_FMA(10) OP_AND(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_DPBUSD_FMA(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_DPBUSD(0) OP_FMA(1) OP_DPBUSD(2) OP_FMA(3) OP_DPBUSD(4) OP_FMA(5) OP_DPBUSD(6) OP_FMA(7) OP_DPBUSD(8) OP_FMA(9) OP_DPBUSD(10) OP_FMA(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_DPBUSD_SHUFB(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_DPBUSD(0) OP_SHUFB(1) OP_DPBUSD(2) OP_SHUFB(3) OP_DPBUSD(4) OP_SHUFB(5) OP_DPBUSD(6) OP_SHUFB(7) OP_DPBUSD(8) OP_SHUFB(9) OP_DPBUSD(10) OP_SHUFB(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_FMA_CVTDQ(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_FMA(0) OP_CVTDQ(1) OP_FMA(2) OP_CVTDQ(3) OP_FMA(4) OP_CVTDQ(5) OP_FMA(6) OP_CVTDQ(7) OP_FMA(8) OP_CVTDQ(9) OP_FMA(10) OP_CVTDQ(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_PERMPS_ADDPS(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_PERMPS(0) OP_ADDPS(1) OP_PERMPS(2) OP_ADDPS(3) OP_PERMPS(4) OP_ADDPS(5) OP_PERMPS(6) OP_ADDPS(7) OP_PERMPS(8) OP_ADDPS(9) OP_PERMPS(10) OP_ADDPS(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_PERMPS_SRLI(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_PERMPS(0) OP_SRLI(1) OP_PERMPS(2) OP_SRLI(3) OP_PERMPS(4) OP_SRLI(5) OP_PERMPS(6) OP_SRLI(7) OP_PERMPS(8) OP_SRLI(9) OP_PERMPS(10) OP_SRLI(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_PERMPS_FMA(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_PERMPS(0) OP_FMA(1) OP_PERMPS(2) OP_FMA(3) OP_PERMPS(4) OP_FMA(5) OP_PERMPS(6) OP_FMA(7) OP_PERMPS(8) OP_FMA(9) OP_PERMPS(10) OP_FMA(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_ADDPS_FMA(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_ADDPS(0) OP_FMA(1) OP_ADDPS(2) OP_FMA(3) OP_ADDPS(4) OP_FMA(5) OP_ADDPS(6) OP_FMA(7) OP_ADDPS(8) OP_FMA(9) OP_ADDPS(10) OP_FMA(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_ADDPS_SRLI(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_ADDPS(0) OP_SRLI(1) OP_ADDPS(2) OP_SRLI(3) OP_ADDPS(4) OP_SRLI(5) OP_ADDPS(6) OP_SRLI(7) OP_ADDPS(8) OP_SRLI(9) OP_ADDPS(10) OP_SRLI(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

static T void pair_DPBUSD_ADDPS(void) {
  DECL_B;
  __m512i a0 = _mm512_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
  for (long i = 0; i < REPS / 4; i++) {
    OP_DPBUSD(0) OP_ADDPS(1) OP_DPBUSD(2) OP_ADDPS(3) OP_DPBUSD(4) OP_ADDPS(5) OP_DPBUSD(6) OP_ADDPS(7) OP_DPBUSD(8) OP_ADDPS(9) OP_DPBUSD(10) OP_ADDPS(11)
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  sink = (uint64_t)_mm512_reduce_add_epi64(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a5, a11)));
}

typedef struct { const char *name; void (*fn)(void); } pair_probe;
static const pair_probe pairs[] = {
      {"dpbusd + and", pair_DPBUSD_AND},
      {"dpbusd + srli", pair_DPBUSD_SRLI},
      {"dpbusd + permilps", pair_DPBUSD_PERMILPS},
      {"dpbusd + gf2p8", pair_DPBUSD_GF2P8},
      {"fma + permilps", pair_FMA_PERMILPS},
      {"fma + permd", pair_FMA_PERMD},
      {"fma + srli", pair_FMA_SRLI},
      {"fma + and", pair_FMA_AND},
      {"dpbusd + fma", pair_DPBUSD_FMA},
      {"dpbusd + shufb", pair_DPBUSD_SHUFB},
      {"fma + cvtdq", pair_FMA_CVTDQ},
      {"permps + addps", pair_PERMPS_ADDPS},
      {"permps + srli", pair_PERMPS_SRLI},
      {"permps + fma", pair_PERMPS_FMA},
      {"addps + fma", pair_ADDPS_FMA},
      {"addps + srli", pair_ADDPS_SRLI},
      {"dpbusd + addps", pair_DPBUSD_ADDPS}
};

typedef struct {
  const char *name;
  void (*fn)(void);
  double per_iter;       /* instructions per loop iteration / REPS scale */
  double weights_per_op; /* weights one instruction serves, 0: not a multiply */
} probe;

static double best(void (*fn)(void)) {
  double b = 1e30;
  for (int r = 0; r < 15; r++) {
    double t0 = now();
    fn();
    double dt = now() - t0;
    if (dt < b) b = dt;
  }
  return b;
}

int main(void) {
  double clk = best(clock_chain) / (4.0 * REPS); /* seconds per cycle */
  printf("clock: %.3f GHz (dependent-add chain)\n", 1e-9 / clk);
  const probe ps[] = {
      {"vpdpbusd zmm", zmm_dpbusd, 3.0, 16.0}, /* 64 u8*s8; 4 x digits per weight */
      {"vpdpwssd zmm", zmm_dpwssd, 3.0, 16.0}, /* 32 s16*s16; 2 x terms per weight */
      {"vpmaddubsw zmm", zmm_maddubs, 3.0, 0},
      {"vfmadd231ps zmm", zmm_fma, 3.0, 16.0},
      {"vpermd zmm", zmm_permd, 3.0, 0},
      {"vpermilps zmm", zmm_permilps, 3.0, 0},
      {"vpshufb zmm", zmm_shufb, 3.0, 0},
      {"vpsrld zmm", zmm_srli, 3.0, 0},
      {"vpandd zmm", zmm_and, 3.0, 0},
      {"vgf2p8affineqb zmm", zmm_gf2p8, 3.0, 0},
      {"vcvtdq2ps zmm", zmm_cvtdq, 3.0, 0},
      {"vaddps zmm", zmm_addps, 3.0, 0},
      {"vpermps zmm", zmm_permps, 3.0, 0},
  };
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    double per_cycle = (12.0 * (REPS / 4)) / (best(ps[i].fn) / clk);
    printf("%-20s %.2f per cycle", ps[i].name, per_cycle);
    if (ps[i].weights_per_op > 0) printf("  (%.1f weights per cycle at f32-equivalent precision)", per_cycle * ps[i].weights_per_op);
    printf("\n");
  }
  printf("%-20s %.2f cycles\n", "vpdpbusd latency", (best(chain_dpbusd) / clk) / (12.0 * (REPS / 4)));
  printf("%-20s %.2f cycles\n", "vfmadd231ps latency", (best(chain_fma) / clk) / (12.0 * (REPS / 4)));
  const struct {
    const char *name;
    void (*fn)(void);
  } chains[] = {{"vpdpbusd, 2 chains", chains_dpbusd_2}, {"vpdpbusd, 4 chains", chains_dpbusd_4},
                {"vpdpbusd, 6 chains", chains_dpbusd_6},
                {"vpdpbusd {1to16} mem", chains_dpbusd_bcst}};
  for (size_t i = 0; i < sizeof chains / sizeof chains[0]; i++)
    printf("%-20s %.2f per cycle\n", chains[i].name, (12.0 * (REPS / 4)) / (best(chains[i].fn) / clk));
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    printf("%-20s %.2f instructions per cycle, 1:1\n", pairs[i].name, (12.0 * (REPS / 4)) / (best(pairs[i].fn) / clk));
  double mix = (4.0 * 4 * (REPS / 16)) / (best(zmm_q2mix) / clk);
  printf("%-20s %.2f vpdpbusd per cycle with 1.75 decode ops per 4 (%.1f weights/cycle)\n", "q2 VNNI mix", mix, mix * 16.0);
  return 0;
}
