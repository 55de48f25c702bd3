/* Can this machine run AMX tiles, and what would Q2_0's integer sums cost
 * on them? (issue 12: the 16-core host's m = 8 is behind ggml; its VNNI
 * kernel issues 12 vpdpbusd per 256 weights and activation row, so m = 8
 * costs 8x m = 1's products.) One thread, hot data.
 *
 *   make -C bench/cpu-lab amx-probe && bench/cpu-lab/amx-probe [REPS]
 *
 * 1. What the CPU and the kernel say: CPUID's AMX bits, XCR0's tile state,
 *    arch_prctl's supported and permitted features, and the permission
 *    request (Linux asks each process to request the tile data state).
 * 2. One tile product under a SIGILL handler (ggml's AMX Q4_0 at m = 8 died
 *    with SIGILL on this host, bench/NOTES-cpu.md v21).
 * 3. The tile unit's rate by the rows of a product (tdp_rate), int8 and
 *    bf16: whether a product of 3 rows costs less than one of 16.
 * 4. Q2_0 block sums the AMX way, checked integer for integer against a
 *    scalar sum, and timed beside q2_vnni.c's block sums (compiled in):
 *    - B (unsigned, 16 rows of 64 bytes): the codes of 16 weight rows, as
 *      the interleaved layout holds them (cpu_interleave.h: in vector v,
 *      lane r's byte t, bits 2f..2f+1 = element 16v + 4f + t), field f of
 *      vector v as tile row 4v + f: no transpose, 3 shifts and 4 ands per
 *      64 bytes;
 *    - A (signed, m rows of 64 bytes, one tile per digit plane p): digit p
 *      of elements 0..63 of activation row t in natural order, rows t
 *      `stride` bytes apart (a layout the quantizer could write directly);
 *    - C_p = A_p B: m x 16 int32, C_p[t][r] = sum_j c_rj d_tpj.
 *    Cycles per weight for m = 1, 2, 4, 8, 16 against the VNNI sums (one
 *    block_sums per activation row, block_sums2 per pair as the kernel
 *    does). TSC ticks, best of REPS. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <immintrin.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include "backend-cpu/q2_vnni.c"

#define ARCH_GET_XCOMP_SUPP 0x1021
#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

#define TAMX __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl")))

typedef struct tilecfg {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} __attribute__((packed)) tilecfg;

static sigjmp_buf jb;
static void on_sigill(int s) {
  (void)s;
  siglongjmp(jb, 1);
}

static uint64_t xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

/* The variants (v31 run 2; run 1 had "plain" alone):
 * - plain: per block, unpack B, load it, C_p = A_p B for the 3 planes (A_p:
 *   m activation rows, `stride` apart), store C, read it back.
 * - ring: B unpacked D blocks ahead into a ring of R slots (a tile load of
 *   bytes just stored waits for the stores), C stored into two buffers
 *   alternately and read back one block later.
 * - row: ring, and one A tile per activation row (its 3 planes as rows, 64
 *   bytes apart: the plane-major layout), m products of 3 rows per block
 *   instead of 3 of m rows.
 * - ring-pre: ring with B from codes unpacked beforehand: what the unpack
 *   costs.
 * - inter4: ring, A tiles of 4 activation rows x 4 planes (the 4th zero)
 *   from an interleaved layout ([block][row][plane][64]), ceil(m / 4)
 *   products per block. */
enum { M_PLAIN, M_RING, M_ROW, M_PRE, M_INTER, M_COUNT };
static const char *const mode_name[M_COUNT] = {"plain", "ring", "row", "ring-pre", "inter4"};
#define RING 4
#define AHEAD 2

typedef struct lab {
  const uint8_t *w;   /* g64 interleaved: per group and block 32 scale bytes, 4 x 64 code bytes */
  int groups, nb, m;
  const int8_t *xa;   /* [t][block][plane][64], rows `stride` apart */
  size_t stride;
  const int8_t *xi;   /* [block][t (16)][plane (4)][64] */
  const uint8_t *pre; /* [group][block][1024]: B unpacked */
  int32_t *out;       /* [group][block][plane][t][16] when checking */
} lab;

static void config(tilecfg *c, int mode, int m) {
  memset(c, 0, sizeof *c);
  c->palette = 1;
  const int r = mode == M_ROW ? 3 : mode == M_INTER ? 4 * (m < 4 ? m : 4) : m;
  for (int i = 0; i < 6; i++) c->rows[i] = (uint8_t)r, c->colsb[i] = 64;
  c->rows[6] = c->rows[7] = 16, c->colsb[6] = c->colsb[7] = 64;
}

TAMX static void tiles_on(const tilecfg *c) { _tile_loadconfig(c); }
TAMX static void tiles_off(void) { _tile_release(); }

TAMX static inline void unpack(const uint8_t *q, uint8_t *bt) {
  const __m512i m3 = _mm512_set1_epi8(3);
  for (int v = 0; v < 4; v++) {
    const __m512i c = _mm512_loadu_si512(q + 64 * v);
    _mm512_store_si512(bt + 256 * v, _mm512_and_si512(c, m3));
    _mm512_store_si512(bt + 256 * v + 64, _mm512_and_si512(_mm512_srli_epi16(c, 2), m3));
    _mm512_store_si512(bt + 256 * v + 128, _mm512_and_si512(_mm512_srli_epi16(c, 4), m3));
    _mm512_store_si512(bt + 256 * v + 192, _mm512_and_si512(_mm512_srli_epi16(c, 6), m3));
  }
}

static inline const uint8_t *codes(const lab *L, int s) { return L->w + (size_t)s * 288u + 32u; }

/* One (block, plane, row)'s 16 sums: checked or summed. */
TAMX static inline void emit(const lab *L, int s, int p, int t, const int32_t *src, __m512i *sum) {
  const __m512i v = _mm512_load_si512(src);
  if (L->out) _mm512_storeu_si512(L->out + (((size_t)s * 3u + (size_t)p) * 16u + (size_t)t) * 16u, v);
  *sum = _mm512_add_epi32(*sum, v);
}

TAMX static int64_t amx_sums(const lab *L, int mode) {
  _Alignas(64) uint8_t ring[RING][1024];
  _Alignas(64) int32_t cb[2][16][3][16]; /* [slot][t or 4-row tile][plane or row][lane] */
  _Alignas(64) int32_t ci[2][4][16][16];
  __m512i sum = _mm512_setzero_si512();
  const int total = L->groups * L->nb, m = L->m;
  const bool ahead = mode != M_PLAIN && mode != M_PRE, defer = mode != M_PLAIN;
  if (ahead)
    for (int s = 0; s < AHEAD && s < total; s++) unpack(codes(L, s), ring[s % RING]);
  for (int s = 0; s <= total; s++) {
    if (s < total) {
      const int b = s % L->nb;
      if (mode == M_PLAIN) {
        unpack(codes(L, s), ring[0]);
        _tile_loadd(6, ring[0], 64);
      } else if (mode == M_PRE) {
        _tile_loadd(6, L->pre + (size_t)s * 1024u, 64);
      } else {
        if (s + AHEAD < total) unpack(codes(L, s + AHEAD), ring[(s + AHEAD) % RING]);
        _tile_loadd(6, ring[s % RING], 64);
      }
      int32_t(*c)[3][16] = cb[s & 1];
      if (mode == M_ROW) {
        for (int t = 0; t < m; t++) {
          const int8_t *a = L->xa + (size_t)t * L->stride + 256 * b;
          if (t & 1) {
            _tile_loadd(4, a, 64);
            _tile_zero(1);
            _tile_dpbsud(1, 4, 6);
            _tile_stored(1, c[t], 64);
          } else {
            _tile_loadd(3, a, 64);
            _tile_zero(0);
            _tile_dpbsud(0, 3, 6);
            _tile_stored(0, c[t], 64);
          }
        }
      } else if (mode == M_INTER) {
        for (int i = 0; 4 * i < m; i++) {
          const int8_t *a = L->xi + (size_t)b * 4096u + (size_t)i * 1024u;
          if (i & 1) {
            _tile_loadd(4, a, 64);
            _tile_zero(1);
            _tile_dpbsud(1, 4, 6);
            _tile_stored(1, ci[s & 1][i], 64);
          } else {
            _tile_loadd(3, a, 64);
            _tile_zero(0);
            _tile_dpbsud(0, 3, 6);
            _tile_stored(0, ci[s & 1][i], 64);
          }
        }
      } else {
        const int8_t *a = L->xa + 256 * b;
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_loadd(3, a, L->stride);
        _tile_loadd(4, a + 64, L->stride);
        _tile_loadd(5, a + 128, L->stride);
        _tile_dpbsud(0, 3, 6);
        _tile_dpbsud(1, 4, 6);
        _tile_dpbsud(2, 5, 6);
        /* [plane][t][lane] in the slot's 3 x 16 x 16 ints */
        _tile_stored(0, &c[0][0][0], 64);
        _tile_stored(1, &c[0][0][0] + 256, 64);
        _tile_stored(2, &c[0][0][0] + 512, 64);
      }
    }
    /* read back: this block's (plain) or the previous one's */
    const int r = defer ? s - 1 : s;
    if (r < 0 || r >= total) continue;
    const int32_t *c = &cb[r & 1][0][0][0];
    for (int t = 0; t < m; t++)
      for (int p = 0; p < 3; p++) {
        const int32_t *src = mode == M_ROW     ? c + (t * 3 + p) * 16
                             : mode == M_INTER ? &ci[r & 1][t / 4][4 * (t % 4) + p][0]
                                               : c + (p * 16 + t) * 16;
        emit(L, r, p, t, src, &sum);
      }
  }
  return _mm512_reduce_add_epi32(sum);
}

/* The VNNI kernel's sums over the same codes (its own digit layout, xv
 * rows `vstride` apart), summed into a checksum as above. */
QG_TARGET static int64_t vnni_sums(const uint8_t *w, int groups, int nb, const int8_t *xv, size_t vstride, int m) {
  const int32_t dz[4] = {0, 0, 0, 0};
  __m512i sum = _mm512_setzero_si512();
  for (int gi = 0; gi < groups; gi++)
    for (int b = 0; b < nb; b++) {
      grp G = {.p = w + ((size_t)gi * (size_t)nb + (size_t)b) * 288u, .rows = 16, .lanes = 0xffff};
      int t = 0;
      for (; t + 2 <= m; t += 2) {
        __m512i A[3], B[3];
        block_sums2(&G, xv + (size_t)t * vstride + 256 * b, xv + (size_t)(t + 1) * vstride + 256 * b, dz, dz, 64, false, A, B);
        for (int p = 0; p < 3; p++) sum = _mm512_add_epi32(sum, _mm512_add_epi32(A[p], B[p]));
      }
      if (t < m) {
        __m512i A[3];
        block_sums(&G, xv + (size_t)t * vstride + 256 * b, dz, 64, false, A);
        for (int p = 0; p < 3; p++) sum = _mm512_add_epi32(sum, A[p]);
      }
    }
  return _mm512_reduce_add_epi32(sum);
}

static int code_of(const uint8_t *w, int nb, int gi, int b, int r, int j) {
  const uint8_t *q = w + ((size_t)gi * (size_t)nb + (size_t)b) * 288u + 32u;
  const int v = j / 16, f = (j % 16) / 4, t = j % 4;
  return (q[64 * v + 4 * r + t] >> (2 * f)) & 3;
}

/* The tile unit's rate by the rows of the product (M: the A and C tiles'
 * rows; B 16 x 64 bytes): 4 independent chains (C tiles 0-3, A 4, B 5),
 * `n` products each; int8 (tdpbsud) and bf16 (tdpbf16ps, for an NF4
 * kernel on AMX-BF16). Ticks per product. */
#define TAMXB __attribute__((target("amx-tile,amx-int8,amx-bf16,avx512f,avx512bw,avx512vl")))
TAMXB static double tdp_rate(int rows, int bf16, int n, const void *src) {
  tilecfg c;
  memset(&c, 0, sizeof c);
  c.palette = 1;
  for (int i = 0; i < 5; i++) c.rows[i] = (uint8_t)rows, c.colsb[i] = 64;
  c.rows[5] = 16, c.colsb[5] = 64;
  _tile_loadconfig(&c);
  _tile_loadd(4, src, 64);
  _tile_loadd(5, src, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const uint64_t t0 = __rdtsc();
  if (bf16)
    for (int i = 0; i < n; i++) {
      _tile_dpbf16ps(0, 4, 5);
      _tile_dpbf16ps(1, 4, 5);
      _tile_dpbf16ps(2, 4, 5);
      _tile_dpbf16ps(3, 4, 5);
    }
  else
    for (int i = 0; i < n; i++) {
      _tile_dpbsud(0, 4, 5);
      _tile_dpbsud(1, 4, 5);
      _tile_dpbsud(2, 4, 5);
      _tile_dpbsud(3, 4, 5);
    }
  _Alignas(64) uint8_t sink[1024];
  _tile_stored(0, sink, 64); /* waits for the chain */
  const double t = (double)(__rdtsc() - t0) / (4.0 * n);
  _tile_release();
  return t + 0.0 * sink[0];
}

int main(int argc, char **argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 50;
  unsigned a, b, c, d;
  __cpuid_count(7, 0, a, b, c, d);
  int has_bf16 = (d >> 22) & 1, tile = (d >> 24) & 1, int8 = (d >> 25) & 1;
  __cpuid(1, a, b, c, d);
  const int osx = (c >> 27) & 1;
  const uint64_t x0 = osx ? xcr0() : 0;
  printf("cpuid: amx-bf16 %d amx-tile %d amx-int8 %d osxsave %d; xcr0 %#llx (tilecfg %d tiledata %d)\n", has_bf16, tile,
         int8, osx, (unsigned long long)x0, (int)((x0 >> 17) & 1), (int)((x0 >> 18) & 1));
  unsigned long supp = 0, perm = 0;
  long rs = syscall(SYS_arch_prctl, ARCH_GET_XCOMP_SUPP, &supp);
  long rq = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
  long rp = syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &perm);
  printf("arch_prctl: supp rc %ld %#lx; req tiledata rc %ld; perm rc %ld %#lx\n", rs, supp, rq, rp, perm);
#if defined(QG_X86_EMU)
  /* x86_emu.h's tiles (the checks, not the times, mean something): the
   * int8 ones only */
  printf("QG_X86_EMU: the int8 tiles emulated, no bf16\n");
  tile = int8 = 1, has_bf16 = 0, rq = 0;
#endif
  const int bf16 = has_bf16; /* const: live across the sigsetjmp below */
  if (!tile || !int8 || rq != 0) {
    printf("AMX: not usable here\n");
    return 0;
  }
  signal(SIGILL, on_sigill);
  if (sigsetjmp(jb, 1)) {
    printf("AMX: SIGILL on the first tile instruction\n");
    return 0;
  }

  {
    _Alignas(64) static uint16_t src[512]; /* bf16 in [1, 2): normal numbers, and bytes for int8 */
    for (int i = 0; i < 512; i++) src[i] = (uint16_t)(0x3f80u | (unsigned)(rand() & 0x7f));
    printf("tile products, ticks each (4 chains) by rows M:");
    for (int bf = 0; bf < (bf16 ? 2 : 1); bf++) {
      printf("\n  %s:", bf ? "tdpbf16ps" : "tdpbsud");
      for (int rows = 1; rows <= 16; rows = rows < 4 ? rows + 1 : rows + 4) {
        double best = 1e30;
        for (int r = 0; r < 5; r++) {
          const double t = tdp_rate(rows, bf, 2000, src);
          if (t < best) best = t;
        }
        printf(" M=%d %.1f", rows, best);
      }
    }
    printf("\n");
  }

  /* Data: 64 groups (1024 rows) x 8 blocks of 64, g64 layout; digits
   * random in [-128, 127] (plane 2 too: the sums are checked, not the
   * quantizer). 1024 x 512 weights: 147 KB of codes, L2. */
  const int groups = 64, nb = 8, k = 64 * nb, M = 16;
  const size_t wb = (size_t)groups * (size_t)nb * 288u;
  uint8_t *w = aligned_alloc(64, wb);
  srand(7);
  for (size_t i = 0; i < wb; i++) w[i] = (uint8_t)rand();
  const size_t stride = (size_t)k * 4u; /* a row's digits: 4 planes x k */
  int8_t *xa = aligned_alloc(64, stride * M), *xv = aligned_alloc(64, stride * M);
  for (int t = 0; t < M; t++)
    for (int j = 0; j < k; j++)
      for (int p = 0; p < 4; p++) {
        const int8_t dv = p == 3 ? 0 : (int8_t)(rand() & 0xff);
        xa[(size_t)t * stride + 256 * (j / 64) + 64 * p + j % 64] = dv;
        xv[(size_t)t * stride + 16 * (j / 4) + 4 * p + j % 4] = dv;
      }
  int8_t *xi = aligned_alloc(64, (size_t)nb * 4096u);
  for (int bb = 0; bb < nb; bb++)
    for (int t = 0; t < M; t++)
      for (int p = 0; p < 4; p++)
        memcpy(xi + (size_t)bb * 4096u + (size_t)t * 256u + 64u * (size_t)p, xa + (size_t)t * stride + 256 * bb + 64 * p, 64);
  uint8_t *pre = aligned_alloc(64, (size_t)groups * nb * 1024u);
  for (int s = 0; s < groups * nb; s++)
    for (int v = 0; v < 4; v++)
      for (int f = 0; f < 4; f++)
        for (int i = 0; i < 64; i++) pre[(size_t)s * 1024u + 256u * v + 64u * f + i] = (w[(size_t)s * 288u + 32u + 64u * v + i] >> (2 * f)) & 3;
  int32_t *out = aligned_alloc(64, (size_t)groups * nb * 3 * 16 * 16 * 4);
  int32_t *ref = aligned_alloc(64, (size_t)groups * nb * 3 * 16 * 16 * 4);
  for (int gi = 0; gi < groups; gi++)
    for (int bb = 0; bb < nb; bb++)
      for (int p = 0; p < 3; p++)
        for (int t = 0; t < M; t++)
          for (int r = 0; r < 16; r++) {
            int32_t sacc = 0;
            for (int j = 0; j < 64; j++) sacc += code_of(w, nb, gi, bb, r, j) * xa[(size_t)t * stride + 256 * bb + 64 * p + j];
            ref[((((size_t)gi * nb + bb) * 3 + p) * 16 + t) * 16 + r] = sacc;
          }
  tilecfg cfg;
  int bad = 0;
  lab L = {.w = w, .groups = groups, .nb = nb, .xa = xa, .stride = stride, .xi = xi, .pre = pre};
  for (int mode = 0; mode < M_COUNT; mode++)
    for (int m = 1; m <= M; m *= 2) {
      L.m = m, L.out = out;
      memset(out, 0x55, (size_t)groups * nb * 3 * 16 * 16 * 4);
      config(&cfg, mode, m);
      tiles_on(&cfg);
      amx_sums(&L, mode);
      tiles_off();
      for (int s = 0; s < groups * nb; s++)
        for (int p = 0; p < 3; p++)
          for (int t = 0; t < m; t++)
            for (int r = 0; r < 16; r++) {
              const size_t i = (((size_t)s * 3 + p) * 16 + t) * 16 + r;
              if (out[i] != ref[i] && bad++ < 5)
                printf("MISMATCH %s m=%d group-block %d plane %d row %d lane %d: %d, want %d\n", mode_name[mode], m, s, p,
                       t, r, out[i], ref[i]);
            }
    }
  printf("check: %s\n", bad ? "FAILED" : "every variant's AMX sums equal the scalar sums (m = 1, 2, 4, 8, 16)");

  const double wts = (double)groups * 16.0 * (double)k;
  L.out = NULL;
  for (int m = 1; m <= M; m *= 2) {
    L.m = m;
    double bv = 1e30, ba[M_COUNT];
    int64_t cv = 0, ca[M_COUNT];
    for (int mode = 0; mode < M_COUNT; mode++) ba[mode] = 1e30;
    for (int r = 0; r < reps; r++) {
      for (int mode = 0; mode < M_COUNT; mode++) {
        config(&cfg, mode, m);
        uint64_t t0 = __rdtsc();
        tiles_on(&cfg);
        ca[mode] = amx_sums(&L, mode);
        tiles_off();
        const double t = (double)(__rdtsc() - t0);
        if (t < ba[mode]) ba[mode] = t;
      }
      uint64_t t0 = __rdtsc();
      cv = vnni_sums(w, groups, nb, xv, stride, m);
      const double t = (double)(__rdtsc() - t0);
      if (t < bv) bv = t;
    }
    /* the VNNI sums subtract nothing here (dsum 0) and add A_p as the AMX
     * checksums do, so the checksums agree */
    printf("m=%2d ticks per weight: VNNI %.4f", m, bv / wts);
    for (int mode = 0; mode < M_COUNT; mode++)
      printf(", %s %.4f%s", mode_name[mode], ba[mode] / wts, ca[mode] == cv ? "" : " (CHECKSUM DIFFERS)");
    printf("\n");
  }
  return bad != 0;
}
