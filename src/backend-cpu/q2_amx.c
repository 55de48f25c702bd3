/*
 * Q2_0 by integer tile products on AMX (the avx512amx level: AVX-512 VNNI
 * and AMX-INT8, Sapphire Rapids and later). The sums are q2_vnni_sums.h's,
 * A_p = sum_j (c_j - 1) d_pj exactly in int32, and so is the fold: the
 * same integers, so y is bit for bit the avx512vnni level's, for every m.
 * What changes is who makes the products:
 *
 *   B (unsigned, 16 x 64 bytes): the codes of a group's 16 weight rows for
 *     64 elements. The interleaved layout (cpu_interleave.h) gives them
 *     without a transpose: field f of code vector v, (c >> 2f) & 3, is the
 *     tile row 4v + f (elements 16v + 4f .. + 3 of the 16 rows). The unpack
 *     runs AMX_AHEAD blocks ahead into a ring, since a tile load of bytes
 *     just stored waits for the stores.
 *   A (signed, rows of 64 bytes): digit planes 0-2 of 64 elements, in the
 *     plane-major layout (xq4, pm) that this level's quantizer term writes
 *     (qg_q2_amx_xfix). Two forms: "rows", one activation row's 3 planes
 *     as a tile, one product per activation row; "planes", plane p of up
 *     to 16 activation rows as a tile (their digit rows are evenly spaced
 *     in the backend's workspace), three products per pass.
 *   C = A B: int32, (plane or row) by weight row: A_p + sum_j d_pj for the
 *     16 lanes, stored and folded one block later.
 *
 * Where the VNNI kernel issues 12 vpdpbusd per 256 weights and activation
 * row, the tile unit does 16 rows x 64 bytes x 16 weight rows in one
 * instruction. On the GPU machine's host (bench/NOTES-cpu.md v34,
 * q2-amx-hot) the planes form ran at 1.07-1.37x VNNI's speed at m = 8 and
 * 1.2-2.6x at m = 16, but 0.40-0.77x at m = 4, and the rows form slower
 * than VNNI at every m up to 8. So the level runs avx512vnni's kernel
 * below QG_AMX_MIN_M (cpu.h; the backend picks it, kernel.below), and
 * this one, reached with fewer rows only when called directly (the lab),
 * takes the VNNI sums on its own digits there. Blocks on the exact path
 * (terms 0) and further terms (one digit) take the VNNI code as well.
 */
#if defined(__x86_64__)
#include "x86_intrin.h"
#include <stdbool.h>
#include <string.h>

#include "q2_vnni_sums.h"

#define QG_AMX_TARGET                                                                                             \
  __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define AX static inline __attribute__((always_inline)) QG_AMX_TARGET

/* Activation rows per pass over a group; the unpack ring; the fewest
 * activation rows for which a pass takes the planes form (below it the
 * rows form: a call's last pass may have fewer than QG_AMX_MIN_M; the
 * planes form was the faster of the two from 4 rows on, v34); all give
 * the same bits. */
enum { AMX_ROWS = 16, AMX_RING = 4, AMX_AHEAD = 2 };
#ifndef QG_AMX_PLANES_MIN_M
#define QG_AMX_PLANES_MIN_M 4
#endif

typedef struct tilecfg {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} __attribute__((packed)) tilecfg;

/* Two forms of a pass's products, by tile:
 * - rows (one product per activation row): 0, 1 C of even and odd rows (3
 *   planes x 64 bytes); 2, 3 and 4, 5 their A, chunks 0 and 1 of a block
 *   (g = 128 has two), alternating by parity so that one row's product
 *   overlaps the next row's loads;
 * - planes (one product per digit plane, the pass's mt activation rows as
 *   tile rows, `stride` bytes apart in the workspace): 0-2 C_p (mt x 64),
 *   3-5 A_p;
 * and 6, 7 B, chunks 0 and 1 (16 x 64), in both. */
AX void tiles_on(bool planes, int mt) {
  tilecfg c;
  memset(&c, 0, sizeof c);
  c.palette = 1;
  for (int i = 0; i < 6; i++) c.rows[i] = (uint8_t)(planes ? mt : 3), c.colsb[i] = 64;
  c.rows[6] = c.rows[7] = 16, c.colsb[6] = c.colsb[7] = 64;
  _tile_loadconfig(&c);
}

/* B of one block into slot (chunk h at 1024 h): absent rows' codes are 0. */
AX void unpack(const grp *G, const int g, uint8_t *slot) {
  const __m512i m3 = _mm512_set1_epi8(3);
  for (int v = 0; v < g / 16; v++) {
    const __m512i c = load_codes(G, v);
    uint8_t *o = slot + 256 * v; /* chunk v / 4, rows 4 (v % 4) .. + 3 */
    _mm512_store_si512(o, _mm512_and_si512(c, m3));
    _mm512_store_si512(o + 64, _mm512_and_si512(_mm512_srli_epi16(c, 2), m3));
    _mm512_store_si512(o + 128, _mm512_and_si512(_mm512_srli_epi16(c, 4), m3));
    _mm512_store_si512(o + 192, _mm512_and_si512(_mm512_srli_epi16(c, 6), m3));
  }
}

/* Rows form: C of activation row t (its digits of the block at a) into c
 * (3 x 16 int32). Tile numbers must be constants, hence the macro. */
#define QG_AMX_ROW(C, A0, A1)          \
  do {                                 \
    _tile_loadd(A0, a, 64);            \
    _tile_zero(C);                     \
    _tile_dpbsud(C, A0, 6);            \
    if (g == 128) {                    \
      _tile_loadd(A1, a + 256, 64);    \
      _tile_dpbsud(C, A1, 7);          \
    }                                  \
    _tile_stored(C, c, 64);            \
  } while (0)
AX void product_row(int t, const int8_t *a, const int g, int32_t *c) {
  if (t & 1)
    QG_AMX_ROW(1, 4, 5);
  else
    QG_AMX_ROW(0, 2, 3);
}

/* Planes form: C_p of the pass's rows (digits of the block at a, rows
 * `stride` apart) into c (3 x AMX_ROWS x 16 int32, [p][t][lane]). */
AX void product_planes(const int8_t *a, size_t stride, const int g, int32_t *c) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  for (int h = 0; h < g / 64; h++) {
    const int8_t *ah = a + 256 * h;
    _tile_loadd(3, ah, stride);
    _tile_loadd(4, ah + 64, stride);
    _tile_loadd(5, ah + 128, stride);
    if (h == 0) {
      _tile_dpbsud(0, 3, 6);
      _tile_dpbsud(1, 4, 6);
      _tile_dpbsud(2, 5, 6);
    } else {
      _tile_dpbsud(0, 3, 7);
      _tile_dpbsud(1, 4, 7);
      _tile_dpbsud(2, 5, 7);
    }
  }
  _tile_stored(0, c, 64);
  _tile_stored(1, c + 16 * AMX_ROWS, 64);
  _tile_stored(2, c + 32 * AMX_ROWS, 64);
}

/* Block b of activation rows xr[0 .. mt) into acc: as row_block
 * (q2_vnni_sums.h) with A_p + sum_j d_pj from the tiles, row t's plane p
 * at c + 16 (ts t + ps p). */
AX void fold_block(const grp *G, const qg_xfix_row *xr, const float *x, int64_t k, int64_t b, int mt, const int g,
                   const int32_t *c, int ts, int ps, qg_acc16 *acc) {
  const __m512 s = scales(G);
  for (int t = 0; t < mt; t++) {
    const qg_xfix_block *bl = &xr[t].blocks[b];
    if (__builtin_expect(bl->terms == 0, 0)) {
      exact_block(G, x + (size_t)t * (size_t)k + b * g, s, g, &acc[t]);
      continue;
    }
    __m512i A[3];
    for (int p = 0; p < 3; p++)
      A[p] = _mm512_sub_epi32(_mm512_load_si512(c + 16 * (ts * t + ps * p)), _mm512_set1_epi32(bl->t0.dsum[p]));
    fold(A, s, bl->t0.scale, &acc[t]);
    if (bl->terms > 1) extra_terms(G, &xr[t], bl, s, g, true, &acc[t]);
  }
}

/* Output rows [i, i + rows) for activation rows t0 .. t0 + mt; planes:
 * their digits `stride` apart (else the rows form). */
AX void amx_group(const qg_cpu_job *job, int64_t i, int rows, int64_t t0, int mt, const int g, bool planes,
                  size_t stride) {
  const qgemv_weight_desc *d = &job->w->desc;
  const int64_t k = d->k, nb = k / g;
  const size_t vb = (size_t)rows * qg_interleave_q2_block(g);
  const qg_xfix_row *xr = &job->xq[t0];
  const float *x = job->xn + (size_t)t0 * (size_t)k;
  const grp G0 = {.p = (const uint8_t *)d->data + (size_t)i * (size_t)nb * qg_interleave_q2_block(g),
                  .rows = rows,
                  .lanes = (__mmask16)((1u << rows) - 1u)};
  _Alignas(64) uint8_t ring[AMX_RING][2048];
  _Alignas(64) int32_t cb[2][3 * AMX_ROWS * 16]; /* rows: [t][p][lane]; planes: [p][t][lane] */
  const int ts = planes ? 1 : 3, ps = planes ? AMX_ROWS : 1;
  qg_acc16 acc[AMX_ROWS];
  for (int t = 0; t < mt; t++) qg_acc16_zero(&acc[t]);
  tiles_on(planes, mt);
  for (int64_t b = 0; b < AMX_AHEAD && b < nb; b++) {
    const grp G = {G0.p + (size_t)b * vb, rows, G0.lanes};
    unpack(&G, g, ring[b % AMX_RING]);
  }
  for (int64_t b = 0; b < nb; b++) {
    if (b + AMX_AHEAD < nb) {
      const grp G = {G0.p + (size_t)(b + AMX_AHEAD) * vb, rows, G0.lanes};
      qg_prefetch_ahead(G.p, vb);
      unpack(&G, g, ring[(b + AMX_AHEAD) % AMX_RING]);
    }
    const uint8_t *slot = ring[b % AMX_RING];
    _tile_loadd(6, slot, 64);
    if (g == 128) _tile_loadd(7, slot + 1024, 64);
    if (planes) {
      product_planes(xr[0].digits + 4 * b * g, stride, g, cb[b & 1]);
    } else {
      for (int t = 0; t < mt; t++)
        if (xr[t].blocks[b].terms != 0) product_row(t, xr[t].digits + 4 * b * g, g, cb[b & 1] + 48 * t);
    }
    if (b > 0) {
      const grp G = {G0.p + (size_t)(b - 1) * vb, rows, G0.lanes};
      fold_block(&G, xr, x, k, b - 1, mt, g, cb[(b - 1) & 1], ts, ps, acc);
    }
  }
  const grp G = {G0.p + (size_t)(nb - 1) * vb, rows, G0.lanes};
  fold_block(&G, xr, x, k, nb - 1, mt, g, cb[(nb - 1) & 1], ts, ps, acc);
  for (int t = 0; t < mt; t++) qg_acc16_store(job, t0 + t, i, rows, &acc[t]);
}

/* The digit rows of the m activation rows lie `stride` apart (the
 * backend's workspace puts them so), which the planes form needs. */
AX bool even_stride(const qg_xfix_row *xr, int64_t m, size_t *stride) {
  if (m < 2) return false;
  const ptrdiff_t s = xr[1].digits - xr[0].digits;
  if (s <= 0) return false;
  for (int64_t t = 2; t < m; t++)
    if (xr[t].digits - xr[0].digits != s * t) return false;
  *stride = (size_t)s;
  return true;
}

/* planes: -1 the rows form, 1 the planes form where the rows allow it,
 * 0 by QG_AMX_PLANES_MIN_M. */
AX void amx_rows_g(const qg_cpu_job *job, int64_t row0, int64_t row1, const int g, int planes) {
  size_t stride = 0;
  const bool even = planes >= 0 && even_stride(job->xq, job->m, &stride); /* once a call */
  for (int64_t i = row0; i < row1; i += 16) {
    const int rows = row1 - i < 16 ? (int)(row1 - i) : 16;
    for (int64_t t0 = 0; t0 < job->m; t0 += AMX_ROWS) {
      const int mt = job->m - t0 < AMX_ROWS ? (int)(job->m - t0) : AMX_ROWS;
      const bool pl = even && mt >= 2 && (planes > 0 || mt >= QG_AMX_PLANES_MIN_M);
      amx_group(job, i, rows, t0, mt, g, pl, stride);
    }
  }
  _tile_release(); /* the tile state back to its initial one: cheaper context switches */
}

QG_AMX_TARGET void qg_q2_amx_rows_g64(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  if (job->m < QG_AMX_MIN_M)
    rows_g(job, row0, row1, 64, true);
  else
    amx_rows_g(job, row0, row1, 64, 0);
}

QG_AMX_TARGET void qg_q2_amx_rows_g128(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  if (job->m < QG_AMX_MIN_M)
    rows_g(job, row0, row1, 128, true);
  else
    amx_rows_g(job, row0, row1, 128, 0);
}

#else
typedef int qg_q2_amx_absent; /* not x86-64 */
#endif
