/*
 * The emulation that scripts/x86-emu-check.sh proves the AVX-512 and AMX
 * levels with (src/backend-cpu/x86_emu.h) against the real instructions,
 * bit for bit, on random inputs and the edge cases the kernels can meet
 * (NaN, infinities, subnormals, shift counts past 31, partial masks, every
 * tile shape). It covers what x86_emu.h writes itself: the intrinsics it
 * adds beside SIMDe's and the AMX tile instructions; SIMDe's own are that
 * library's to test. Runs where the CPU has AVX-512 F/BW/VL/DQ (the GPU
 * machine's host), the tiles where it also has AMX-INT8 and Linux grants
 * the tile state; SKIP (77) elsewhere, saying why.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

static uint64_t xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static bool has_avx512(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_F16C) || !(c & bit_FMA)) return false;
  if (__get_cpuid_max(0, NULL) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned need = bit_AVX2 | bit_AVX512F | bit_AVX512DQ | bit_AVX512BW | bit_AVX512VL;
  return (b & need) == need && (xcr0() & 0xe6u) == 0xe6u;
}

static bool has_amx(void) {
  unsigned a, b, c, d;
  __cpuid_count(7, 0, a, b, c, d);
  if (!((d >> 24) & 1) || !((d >> 25) & 1) || (xcr0() & 0x60000u) != 0x60000u) return false;
#if defined(__linux__)
  return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
#else
  return false;
#endif
}

static int compare_avx512(void);
static int compare_amx(void);

int main(void) {
  if (!has_avx512()) {
    printf("SKIP: this CPU lacks AVX-512 F/BW/VL/DQ; the emulation is compared with it on the GPU machine's host\n");
    return 77;
  }
  int failed = compare_avx512();
  if (has_amx())
    failed += compare_amx();
  else
    printf("no usable AMX-INT8 here: the tile emulation was not compared\n");
  printf("%s\n", failed ? "FAIL" : "x86_emu.h matches the hardware");
  return failed ? 1 : 0;
}

/* Everything below may use the instructions main checked for. */
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#define QG_X86_EMU_TEST
#include "x86_emu.h"

enum { TRIALS = 4000 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

/* Random bits, often the edges: ±0, ±inf, NaNs, subnormals, extremes. */
static uint32_t rnd_f32_bits(void) {
  static const uint32_t edge[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc12345u,
                                  0x7f800001u, 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0x00800000u, 0x3f800000u};
  switch (rnd() % 4) {
  case 0: return edge[rnd() % (sizeof edge / sizeof edge[0])];
  case 1: return rnd(); /* any bits */
  default: return (rnd() & 0x80000000u) | ((100u + rnd() % 56u) << 23) | (rnd() & 0x7fffffu); /* moderate */
  }
}
static float rnd_f32(void) {
  uint32_t u = rnd_f32_bits();
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static double rnd_f64(void) {
  static const uint64_t edge[] = {0, 0x8000000000000000ull, 0x7ff0000000000000ull, 0x7ff8000000000000ull,
                                  0x0000000000000001ull, 0x47efffffe0000000ull, 0x36a0000000000000ull};
  uint64_t u = rnd() % 4 == 0 ? edge[rnd() % (sizeof edge / sizeof edge[0])]
                              : ((uint64_t)rnd() << 32 | rnd()) & (rnd() % 2 ? ~0ull : 0x83ffffffffffffffull);
  double d;
  memcpy(&d, &u, 8);
  return d;
}
static void fill(void *p, size_t bytes) {
  for (size_t i = 0; i < bytes; i++) ((uint8_t *)p)[i] = (uint8_t)rnd();
}
static qe_v512 rnd_ps(void) {
  qe_v512 v;
  for (int l = 0; l < 16; l++) v.f32[l] = rnd_f32();
  return v;
}

static int failures;
static void same(const void *emu, const void *hw, size_t bytes, const char *what, int trial) {
  if (memcmp(emu, hw, bytes) == 0) return;
  if (failures++ < 20) fprintf(stderr, "FAIL %s (trial %d): the emulation differs from the instruction\n", what, trial);
}
#define SAME(e, h, what)                                                                                            \
  do {                                                                                                              \
    __typeof__(h) h_ = (h);                                                                                         \
    __typeof__(h) e_ = (e);                                                                                         \
    same(&e_, &h_, sizeof h_, what, t);                                                                             \
  } while (0)

static int compare_avx512(void) {
  failures = 0;
  static const unsigned shifts[] = {0, 1, 7, 8, 24, 31, 32, 33, 255};
  static uint8_t buf[192]; /* masked loads at odd offsets, in bounds */
  for (int t = 0; t < TRIALS; t++) {
    qe_v512 a, b, r;
    fill(&a, sizeof a);
    fill(&b, sizeof b);
    fill(buf, sizeof buf);
    const uint16_t k = (uint16_t)(t % 3 == 0 ? 0xffffu : t % 3 == 1 ? rnd() : (1u << (rnd() % 17)) - 1u);
    const unsigned n = shifts[t % (sizeof shifts / sizeof shifts[0])];
    SAME(qe_srai_epi32(a.i, n), _mm512_srai_epi32(a.i, n), "_mm512_srai_epi32");
    SAME(qe_maskz_loadu_epi32(k, buf + 3), _mm512_maskz_loadu_epi32(k, buf + 3), "_mm512_maskz_loadu_epi32");
    SAME(qe_maskz_loadu_ps(k, buf + 65), _mm512_maskz_loadu_ps(k, buf + 65), "_mm512_maskz_loadu_ps");
    SAME(qe_256_maskz_loadu_epi16(k, buf + 129), _mm256_maskz_loadu_epi16(k, buf + 129), "_mm256_maskz_loadu_epi16");
    SAME(qe_cvtepi32_epi8(a.i), _mm512_cvtepi32_epi8(a.i), "_mm512_cvtepi32_epi8");
    SAME(qe_cvtepu8_epi32(_mm512_castsi512_si128(a.i)), _mm512_cvtepu8_epi32(_mm512_castsi512_si128(a.i)),
         "_mm512_cvtepu8_epi32");
    SAME(qe_cvtepi32_ps(a.i), _mm512_cvtepi32_ps(a.i), "_mm512_cvtepi32_ps");
    SAME(qe_cvtepi32_pd(_mm512_castsi512_si256(a.i)), _mm512_cvtepi32_pd(_mm512_castsi512_si256(a.i)),
         "_mm512_cvtepi32_pd");
    SAME(qe_cvtph_ps(_mm512_castsi512_si256(b.i)), _mm512_cvtph_ps(_mm512_castsi512_si256(b.i)), "_mm512_cvtph_ps");
    SAME(qe_permutevar_ps(b.f, a.i), _mm512_permutevar_ps(b.f, a.i), "_mm512_permutevar_ps");
    /* lanes below 2^26 in magnitude: GCC's reduction ends in a scalar int
     * add, whose overflow UBSan reports (the kernels' sums are far below) */
    const __m512i small = _mm512_srai_epi32(a.i, 6);
    SAME(qe_reduce_add_epi32(small), _mm512_reduce_add_epi32(small), "_mm512_reduce_add_epi32");

    qe_v512 x = rnd_ps(), y = rnd_ps();
    SAME(qe_cmpneq_ps_mask(x.f, y.f), _mm512_cmpneq_ps_mask(x.f, y.f), "_mm512_cmpneq_ps_mask");
    SAME(qe_cmpneq_ps_mask(x.f, x.f), _mm512_cmpneq_ps_mask(x.f, x.f), "_mm512_cmpneq_ps_mask (self)");
    SAME(qe_cvtps_epi32(x.f), _mm512_cvtps_epi32(x.f), "_mm512_cvtps_epi32");
    SAME(qe_cvtps_pd(_mm512_castps512_ps256(x.f)), _mm512_cvtps_pd(_mm512_castps512_ps256(x.f)), "_mm512_cvtps_pd");
    SAME(qe_reduce_max_ps(x.f), _mm512_reduce_max_ps(x.f), "_mm512_reduce_max_ps");
    for (int l = 0; l < 8; l++) r.f64[l] = rnd_f64();
    SAME(qe_cvtpd_ps(r.d), _mm512_cvtpd_ps(r.d), "_mm512_cvtpd_ps");
    { /* which of two NaNs an add keeps is the compiler's operand order, in
         both: any NaN matches any NaN here */
      const double e = qe_reduce_add_pd(r.d), h = _mm512_reduce_add_pd(r.d);
      if (!(e != e && h != h)) SAME(e, h, "_mm512_reduce_add_pd");
    }
    /* vscalefps with the finite, often fractional exponents the
     * quantizer passes, and a's of every class */
    for (int l = 0; l < 16; l++) y.f32[l] = (float)((int)(rnd() % 601) - 300) + (float)(rnd() % 4) * 0.25f;
    SAME(qe_scalef_ps(x.f, y.f), _mm512_scalef_ps(x.f, y.f), "_mm512_scalef_ps");
    SAME(qe_mask_scalef_ps(b.f, k, x.f, y.f), _mm512_mask_scalef_ps(b.f, k, x.f, y.f), "_mm512_mask_scalef_ps");
  }
  printf("AVX-512: %d of %d trials differ\n", failures, TRIALS);
  return failures;
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
typedef struct tilecfg {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} __attribute__((packed)) tilecfg;

/* C (M x N int32) += A (M x 4K signed bytes) . B (K x 4N unsigned bytes),
 * tiles 0-2 natively, then the same with the emulation; strides wider
 * than a row, so that what lies between rows must be left alone. */
static int compare_amx(void) {
  failures = 0;
  enum { ST = 80 };
  static uint8_t A[16 * ST], B[16 * ST];
  static int32_t C[16 * ST / 4], hw[16 * ST / 4], emu[16 * ST / 4];
  static uint8_t zhw[16 * ST], zemu[16 * ST];
  for (int t = 0; t < TRIALS / 4; t++) {
    const int M = 1 + (int)(rnd() % 16), K = 1 + (int)(rnd() % 16), N = 1 + (int)(rnd() % 16);
    fill(A, sizeof A);
    fill(B, sizeof B);
    fill(C, sizeof C);
    if (t % 8 == 0) memset(A, t % 16 == 0 ? 0x80 : 0x7f, sizeof A), memset(B, 0xff, sizeof B); /* extremes */
    tilecfg c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    c.rows[0] = (uint8_t)M, c.colsb[0] = (uint16_t)(4 * N);
    c.rows[1] = (uint8_t)M, c.colsb[1] = (uint16_t)(4 * K);
    c.rows[2] = (uint8_t)K, c.colsb[2] = (uint16_t)(4 * N);
    memcpy(hw, C, sizeof C);
    memcpy(emu, C, sizeof C);
    _tile_loadconfig(&c);
    _tile_loadd(0, hw, ST);
    _tile_loadd(1, A, ST);
    _tile_loadd(2, B, ST);
    _tile_dpbsud(0, 1, 2);
    _tile_stored(0, hw, ST);
    _tile_zero(1);
    memset(zhw, 0x5a, sizeof zhw);
    _tile_stored(1, zhw, ST);
    _tile_release();
    qe_tile_loadconfig(&c);
    qe_tile_loadd(0, emu, ST);
    qe_tile_loadd(1, A, ST);
    qe_tile_loadd(2, B, ST);
    qe_tile_dpbsud(0, 1, 2);
    qe_tile_stored(0, emu, ST);
    qe_tile_zero(1);
    memset(zemu, 0x5a, sizeof zemu);
    qe_tile_stored(1, zemu, ST);
    qe_tile_release();
    same(emu, hw, sizeof hw, "tdpbsud, tileloadd, tilestored", t);
    same(zemu, zhw, sizeof zhw, "tilezero", t);
  }
  printf("AMX: %d of %d trials differ\n", failures, TRIALS / 4);
  return failures;
}
#pragma GCC pop_options

#else
int main(void) {
  printf("SKIP: not x86-64; the emulation is for x86-64 machines without AVX-512 or AMX\n");
  return 77;
}
#endif
