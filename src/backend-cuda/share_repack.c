/* Host-side repack into the share layout (share_layout.h) and the choice
 * of its geometry. Plain C: the module and the CPU-side emulation test
 * (test_cuda_share_layout) share it. */
#include <string.h>

#include "share_layout.h"

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* A thread's items at RP rows a pass of T threads: NP passes of JW words. */
static int64_t items_at(int nrmax, int nkw, int threads, int rp, int64_t *np, int64_t *jw) {
  *np = ceil_div(nrmax, rp);
  *jw = ceil_div(nkw, threads / rp);
  return *np * *jw;
}

static int choose_at(qgemv_format f, int32_t group, int64_t n, int64_t k, int sms, size_t smem_optin, int threads,
                     qgc_share_geom *out) {
  const int nf4 = f == QGEMV_NF4;
  const int64_t block = nf4 ? 64 : group;
  if (n <= 0 || k <= 0 || n > INT32_MAX || k > INT32_MAX || sms < 1 || k % 64 || (block != 64 && block != 128) ||
      k % block)
    return 0;
  qgc_share_geom g;
  memset(&g, 0, sizeof g);
  g.threads = threads;
  g.ctas = n < sms ? (int)n : sms;
  g.cw = nf4 ? 32 : 64;
  g.scale_bytes = nf4 ? 4 : 2;
  g.lg_wps = block == g.cw ? 0 : 1;
  g.nkw = (int)(k / g.cw);
  g.nblk = (int)(k / block);
  g.nrmax = (int)ceil_div(n, g.ctas);
  /* the largest RP whose items a thread, NP JW, are within 4% of the
   * fewest (14336 x 4096 at 256: RP 16, 7 x 8 = 56 items, not RP 2, 55 x 1) */
  int64_t fewest = -1, np, jw;
  for (int rp = threads; rp >= 1; rp >>= 1) {
    const int64_t items = items_at(g.nrmax, g.nkw, threads, rp, &np, &jw);
    if (fewest < 0 || items < fewest) fewest = items;
  }
  for (int rp = threads; rp >= 1; rp >>= 1) {
    if (items_at(g.nrmax, g.nkw, threads, rp, &np, &jw) * 100 <= fewest * 104) {
      g.rp = rp;
      g.kparts = threads / rp;
      g.passes = (int)np;
      g.jw = (int)jw;
      break;
    }
  }
  while ((1 << g.lg_rp) < g.rp) g.lg_rp++;
  const int64_t items = (int64_t)g.passes * g.jw;
  g.kwe = g.rp >= 32 ? 1 : 32 / g.rp;
  g.gp = g.kparts / g.kwe;
  const int64_t xs = (int64_t)g.nkw * (g.cw + 4) * 4, sreg = ceil_div((int64_t)g.nrmax * g.nblk * g.scale_bytes, 16) * 16;
  /* the pass sums, the norm's warp sums (f64), NF4's table (16 f32) */
  const int64_t red = (int64_t)g.passes * g.gp * g.rp * 8 + threads / 32 * 8 + 64;
  const int64_t smem = xs + sreg + red;
  if (items > INT32_MAX / threads || smem > (int64_t)smem_optin) return 0;
  g.items = (int)items;
  g.xs_bytes = (int)xs;
  g.sreg = (int)sreg;
  g.red_bytes = (int)red;
  g.smem = (int)smem;
  *out = g;
  return 1;
}

int qgc_share_threads_auto(const qgc_share_geom *at_max) {
  return at_max->items >= QGC_SHARE_U ? QGC_SHARE_THREADS_MAX : QGC_SHARE_THREADS_MIN;
}

int qgc_share_choose(qgemv_format f, int32_t group, int64_t n, int64_t k, int sms, size_t smem_optin, int threads,
                     qgc_share_geom *out) {
  if (threads == QGC_SHARE_THREADS_MIN || threads == QGC_SHARE_THREADS_MAX)
    return choose_at(f, group, n, k, sms, smem_optin, threads, out);
  if (threads != 0) return 0;
  /* the larger count's sums take more shared memory, so where it does not
   * fit the smaller one may */
  qgc_share_geom g;
  if (choose_at(f, group, n, k, sms, smem_optin, QGC_SHARE_THREADS_MAX, &g) &&
      qgc_share_threads_auto(&g) == QGC_SHARE_THREADS_MAX) {
    *out = g;
    return 1;
  }
  return choose_at(f, group, n, k, sms, smem_optin, QGC_SHARE_THREADS_MIN, out);
}

int qgc_share_auto(const qgc_share_geom *g) {
  return g->nrmax <= (g->cw == 32 ? QGC_SHARE_AUTO_ROWS_NF4 : QGC_SHARE_AUTO_ROWS);
}

static uint32_t rotl32(uint32_t v, int s) { return (v << s) | (v >> (32 - s)); }

/* Register gq of the word kw of a row (row_codes: the row's packed code
 * bytes; Q2_0: its block's code bytes, handled by the caller). */
static uint32_t nf4_reg(const uint8_t *row, int kw, int gq) {
  uint32_t s = 0;
  for (int b = 0; b < 4; b++) {
    const int o0 = 32 * kw + 8 * gq + b, o1 = o0 + 4; /* k offsets in the row */
    const uint32_t c0 = (row[o0 / 2] >> (4 * (o0 % 2))) & 15u, c1 = (row[o1 / 2] >> (4 * (o1 % 2))) & 15u;
    s |= c0 << (8 * b) | c1 << (8 * b + 4);
  }
  return rotl32(s, 2);
}

/* The 16 code bytes of word kw of a Q2_0 row (a g64 block, or half a
 * g128 block). */
static const uint8_t *q2_word(const qgemv_weight_desc *d, int64_t row, int kw) {
  const int64_t blocks = d->k / d->group, bb = 2 + d->group / 4, per = d->group / 64;
  return (const uint8_t *)d->data + (row * blocks + kw / per) * bb + 2 + 16 * (kw % per);
}

void qgc_share_repack_codes(const qgemv_weight_desc *d, const qgc_share_geom *g, int64_t c0, int64_t count,
                            uint8_t *dst) {
  memset(dst, 0, (size_t)count * qgc_share_cta_code_bytes(g));
  for (int64_t c = c0; c < c0 + count; c++) {
    const int64_t r0 = qgc_share_row0(g, d->n, c), nr = qgc_share_row0(g, d->n, c + 1) - r0;
    for (int i = 0; i < g->items; i++) {
      const int pi = i / g->jw, j = i % g->jw;
      for (int t = 0; t < g->threads; t++, dst += 16) {
        const int q = t >> g->lg_rp, r = t & (g->rp - 1), rl = pi * g->rp + r, kw = j * g->kparts + q;
        if (rl >= nr || kw >= g->nkw) continue; /* a hole */
        if (d->format == QGEMV_NF4) {
          const uint8_t *row = (const uint8_t *)d->data + (r0 + rl) * (d->k / 2);
          for (int gq = 0; gq < 4; gq++) {
            const uint32_t v = nf4_reg(row, kw, gq);
            memcpy(dst + 4 * gq, &v, 4);
          }
        } else {
          memcpy(dst, q2_word(d, r0 + rl, kw), 16);
        }
      }
    }
  }
}

void qgc_share_repack_scales(const qgemv_weight_desc *d, const qgc_share_geom *g, int64_t c0, int64_t count,
                             uint8_t *dst) {
  memset(dst, 0, (size_t)count * (size_t)g->sreg);
  const int64_t blocks = d->k / d->group, bb = 2 + d->group / 4;
  for (int64_t c = c0; c < c0 + count; c++, dst += g->sreg) {
    const int64_t r0 = qgc_share_row0(g, d->n, c), nr = qgc_share_row0(g, d->n, c + 1) - r0;
    for (int64_t b = 0; b < g->nblk; b++)
      for (int64_t rl = 0; rl < nr; rl++) {
        const int64_t row = r0 + rl;
        const void *src = d->format == QGEMV_NF4 ? (const void *)(d->scales + row * blocks + b)
                                                 : (const void *)((const uint8_t *)d->data + (row * blocks + b) * bb);
        memcpy(dst + (b * nr + rl) * g->scale_bytes, src, (size_t)g->scale_bytes);
      }
  }
}
