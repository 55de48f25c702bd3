/* Accuracy of the integer Q2_0 path against the oracle, on random and on
 * adversarial inputs (lab).
 *
 *   ./accuracy            one line per case: the worst |y - ref| / R over
 *                         all outputs for
 *     int16x1  a model of the single int16 term per block (scale max|x|/32767)
 *     lab D=4  the VNNI kernel, 4 digits (31-bit terms), tau 5e-4
 *     lab D=3  the VNNI kernel, 3 digits (23-bit terms), tau 5e-4
 *     qgemv    the library's current f32 path (auto level)
 *   and the extra terms the lab's quantizer added (over all rows, D=4/D=3).
 * A figure above 1e-3 breaks the contract. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define TAU 5e-4

typedef struct acase {
  const char *name;
  int g;
  int64_t n, k;
  void (*make)(const struct acase *c, uint64_t *s, uint8_t *data, float *x);
} acase;

static uint16_t f16(float f) { return qgemv_f32_to_f16(f); }

static void set_code(uint8_t *data, int g, int64_t nb, int64_t r, int64_t j, int c) {
  size_t blk = 2u + (size_t)g / 4u;
  uint8_t *b = data + ((size_t)r * (size_t)nb + (size_t)(j / g)) * blk + 2;
  int e = (int)(j % g);
  b[e / 4] = (uint8_t)((b[e / 4] & ~(3 << (2 * (e % 4)))) | (c << (2 * (e % 4))));
}

static void set_scale(uint8_t *data, int g, int64_t nb, int64_t r, int64_t b, float d) {
  size_t blk = 2u + (size_t)g / 4u;
  uint16_t h = f16(d);
  memcpy(data + ((size_t)r * (size_t)nb + (size_t)b) * blk, &h, 2);
}

/* Random weights quantized by the library, x from a distribution. */
static void random_weights(const acase *c, uint64_t *s, uint8_t *data) {
  float *w = malloc(sizeof(float) * (size_t)(c->n * c->k));
  for (int64_t i = 0; i < c->n * c->k; i++) w[i] = (float)(0.02 * lab_normal(s));
  qgemv_quantize(QGEMV_Q2_0, c->n, c->k, c->g, w, data, NULL);
  free(w);
}

static void x_normal(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  random_weights(c, s, data);
  for (int64_t j = 0; j < c->k; j++) x[j] = (float)lab_normal(s);
}

static void x_heavy(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  random_weights(c, s, data);
  for (int64_t j = 0; j < c->k; j++) {
    double a = lab_normal(s), b = lab_normal(s), d = lab_normal(s);
    x[j] = (float)(a / sqrt((b * b + d * d) / 2.0)); /* Student t, 2 d.o.f. */
  }
}

static void x_outliers(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  random_weights(c, s, data);
  for (int64_t j = 0; j < c->k; j++) x[j] = (float)(lab_normal(s) * (lab_rng(s) % 100 == 0 ? 100.0 : 1.0));
}

static void x_bf16(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  random_weights(c, s, data);
  for (int64_t j = 0; j < c->k; j++) x[j] = qgemv_bf16_to_f32(qgemv_f32_to_bf16((float)lab_normal(s)));
}

/* Every block: one large activation on a zero weight, the rest small and
 * meeting +-1 and +2 weights. */
static void big_meets_zero(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  int64_t nb = c->k / c->g;
  for (int64_t r = 0; r < c->n; r++) {
    for (int64_t b = 0; b < nb; b++) set_scale(data, c->g, nb, r, b, 1.0f);
    for (int64_t j = 0; j < c->k; j++) set_code(data, c->g, nb, r, j, j % c->g == 0 ? 1 : (int)(lab_rng(s) % 2) * 2 + (lab_rng(s) % 2 ? 1 : 0));
  }
  for (int64_t j = 0; j < c->k; j++) x[j] = j % c->g == 0 ? 1000.0f : (float)(0.01 * lab_normal(s));
}

/* Every x on the int16 grid plus just under half a step, weights all +1:
 * the rounding errors of a single int16 term all point one way. */
static void aligned_rounding(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  int64_t nb = c->k / c->g;
  for (int64_t r = 0; r < c->n; r++) {
    for (int64_t b = 0; b < nb; b++) set_scale(data, c->g, nb, r, b, 1.0f);
    for (int64_t j = 0; j < c->k; j++) set_code(data, c->g, nb, r, j, 2);
  }
  const float m = 1.0f, step = m / 32767.0f;
  for (int64_t j = 0; j < c->k; j++) {
    if (j % c->g == 0) {
      x[j] = m;
      continue;
    }
    float q = (float)(16384 + lab_rng(s) % 16000);
    x[j] = (q + 0.499f) * step;
  }
}

/* One huge activation on a zero weight, the rest 1e-30 scale. */
static void extreme_range(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  big_meets_zero(c, s, data, x);
  for (int64_t j = 0; j < c->k; j++) x[j] = j % c->g == 0 ? 1e30f : (float)(1e-30 * lab_normal(s));
}

/* A tiny activation per block among large ones; the tiny ones meet the
 * only nonzero weights. */
static void tiny_alone(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  int64_t nb = c->k / c->g;
  for (int64_t r = 0; r < c->n; r++) {
    for (int64_t b = 0; b < nb; b++) set_scale(data, c->g, nb, r, b, 1.0f);
    for (int64_t j = 0; j < c->k; j++) set_code(data, c->g, nb, r, j, j % c->g == 5 ? 3 : 1);
  }
  for (int64_t j = 0; j < c->k; j++) x[j] = j % c->g == 5 ? (float)(1e-7 * (1.0 + lab_normal(s) * 0.1)) : (float)lab_normal(s);
}

/* Zero weights everywhere: ref = 0 and R = 0, so y must be exactly 0. */
static void zero_weights(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  int64_t nb = c->k / c->g;
  for (int64_t r = 0; r < c->n; r++) {
    for (int64_t b = 0; b < nb; b++) set_scale(data, c->g, nb, r, b, 3.0f);
    for (int64_t j = 0; j < c->k; j++) set_code(data, c->g, nb, r, j, 1);
  }
  for (int64_t j = 0; j < c->k; j++) x[j] = (float)lab_normal(s);
}

/* Subnormal and zero activations mixed with normal ones. */
static void subnormal(const acase *c, uint64_t *s, uint8_t *data, float *x) {
  random_weights(c, s, data);
  for (int64_t j = 0; j < c->k; j++) {
    int kind = (int)(lab_rng(s) % 4);
    x[j] = kind == 0 ? 0.0f : kind == 1 ? (float)(1e-40 * lab_normal(s)) : kind == 2 ? (float)(1e-20 * lab_normal(s)) : (float)lab_normal(s);
  }
}

/* The int16 model: one term per block, scale max|x| / 32767. */
static void int16_model(const uint8_t *data, int g, int64_t n, int64_t k, const float *x, double *y) {
  int64_t nb = k / g;
  size_t blk = 2u + (size_t)g / 4u;
  for (int64_t r = 0; r < n; r++) {
    double acc = 0.0;
    for (int64_t b = 0; b < nb; b++) {
      const uint8_t *p = data + ((size_t)r * (size_t)nb + (size_t)b) * blk;
      double m = 0.0;
      for (int j = 0; j < g; j++) m = fmax(m, fabs((double)x[b * g + j]));
      double sc = m / 32767.0;
      int64_t sum = 0;
      for (int j = 0; j < g; j++) {
        int code = (p[2 + j / 4] >> (2 * (j % 4))) & 3;
        int64_t q = sc > 0 ? (int64_t)nearbyint(x[b * g + j] / sc) : 0;
        sum += (code - 1) * q;
      }
      acc += (double)sum * sc * (double)qgemv_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
    }
    y[r] = acc;
  }
}

static double worst_ratio(const double *ref, const double *bound, const double *y, int64_t n) {
  double w = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs(y[i] - ref[i]);
    double r = bound[i] > 0 ? e / bound[i] : (e > 0 ? INFINITY : 0.0);
    if (r > w || isnan(r)) w = r;
  }
  return w;
}

/* The lab kernel, with the backend's quantizer (cpu_xfix.c, 4 digits). */
static double lab_case(const acase *c, const uint8_t *data, const float *x, const double *ref, const double *bound,
                       int *extra, int *exact) {
  uint8_t *w = aligned_alloc(64, q2v_bytes(c->n, c->k, c->g));
  q2v_repack(data, c->n, c->k, c->g, w);
  void *ws = aligned_alloc(64, qg_xfix_row_bytes(c->k, c->g));
  qg_xfix_row xr = qg_xfix_quantize(x, c->k, c->g, ws, qg_xfix_term_portable);
  *extra = xr.nextra;
  *exact = 0;
  for (int64_t b = 0; b < c->k / c->g; b++) *exact += xr.blocks[b].terms == 0;
  float *y = malloc(sizeof(float) * (size_t)c->n);
  double *yd = malloc(sizeof(double) * (size_t)c->n);
  q2v_matvec(w, c->n, c->k, c->g, &xr, x, 1, y, 1);
  for (int64_t i = 0; i < c->n; i++) yd[i] = y[i];
  double r = worst_ratio(ref, bound, yd, c->n);
  free(ws);
  free(w);
  free(y);
  free(yd);
  return r;
}

/* A model of the path with 3 digits (23-bit terms): the representation of
 * xq.c, products summed exactly in double. */
static double d3_model(const acase *c, const uint8_t *data, const float *x, const double *ref, const double *bound,
                       int *extra) {
  xq_row xr;
  if (xq_quantize(x, c->k, c->g, 3, TAU, &xr) != 0) return NAN;
  *extra = xr.nextra;
  int64_t nb = c->k / c->g;
  size_t blk = 2u + (size_t)c->g / 4u;
  double *yd = malloc(sizeof(double) * (size_t)c->n);
  for (int64_t r = 0; r < c->n; r++) {
    double acc = 0.0;
    for (int64_t b = 0; b < nb; b++) {
      const uint8_t *p = data + ((size_t)r * (size_t)nb + (size_t)b) * blk;
      double d = (double)qgemv_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
      for (int t = 0; t < xr.nterms[b]; t++) {
        const int8_t *dg = t == 0 ? xr.digits + 4 * b * c->g : xr.extra[xr.first_extra[b] + t - 1].digits;
        int e = t == 0 ? xr.exp[b] : xr.extra[xr.first_extra[b] + t - 1].exp;
        double sum = 0.0;
        for (int j = 0; j < c->g; j++) {
          int code = (p[2 + j / 4] >> (2 * (j % 4))) & 3;
          double q = 0.0;
          for (int pl = 3; pl >= 0; pl--) q = q * 256.0 + dg[16 * (j / 4) + 4 * pl + j % 4];
          sum += (code - 1) * q;
        }
        acc += sum * ldexp(d, e);
      }
    }
    yd[r] = acc;
  }
  double r = worst_ratio(ref, bound, yd, c->n);
  xq_free(&xr);
  free(yd);
  return r;
}

static double q2t_case(const acase *c, const uint8_t *data, const float *x, const double *ref, const double *bound) {
  uint8_t *w = aligned_alloc(64, q2t_bytes(c->n, c->k, c->g));
  float *tab = malloc(sizeof(float) * (size_t)c->k * 8u);
  q2t_repack(data, c->n, c->k, c->g, w);
  q2t_tables(x, c->k, tab);
  float *y = malloc(sizeof(float) * (size_t)c->n);
  double *yd = malloc(sizeof(double) * (size_t)c->n);
  q2t_matvec(w, c->n, c->k, c->g, tab, 1, y, 1);
  for (int64_t i = 0; i < c->n; i++) yd[i] = y[i];
  double r = worst_ratio(ref, bound, yd, c->n);
  free(w);
  free(tab);
  free(y);
  free(yd);
  return r;
}

/* The library (its default level) on one row of x. */
static double library_case(const qgemv_weight_desc *d, const float *x, const double *ref, const double *bound) {
  qgemv_ctx *ctx;
  qgemv_weight *w;
  qgemv_tensor *tx, *ty;
  if (qgemv_open("cpu", &ctx) || qgemv_weight_upload(ctx, d, &w) || qgemv_tensor_new(ctx, QGEMV_F32, 1, d->k, &tx) ||
      qgemv_tensor_new(ctx, QGEMV_F32, 1, d->n, &ty))
    return NAN;
  qgemv_tensor_write(tx, x, sizeof(float) * (size_t)d->k);
  qgemv_matvec(ctx, w, tx, ty, NULL);
  float *y = malloc(sizeof(float) * (size_t)d->n);
  double *yd = malloc(sizeof(double) * (size_t)d->n);
  qgemv_tensor_read(ty, y, sizeof(float) * (size_t)d->n);
  for (int64_t i = 0; i < d->n; i++) yd[i] = y[i];
  double r = worst_ratio(ref, bound, yd, d->n);
  qgemv_close(ctx);
  free(y), free(yd);
  return r;
}

/* NF4: random and adversarial inputs for the f32 paths (nf4i: f64
 * accumulation over blocks; qgemv: the library's current level). */
typedef struct ncase {
  const char *name;
  int64_t n, k;
  int kind;
} ncase;

static void nf4_make(const ncase *c, uint64_t *s, uint8_t *data, float *scales, float *x) {
  int64_t nb = c->k / 64;
  if (c->kind <= 2 || c->kind == 6) {
    float *w = malloc(sizeof(float) * (size_t)(c->n * c->k));
    for (int64_t i = 0; i < c->n * c->k; i++) w[i] = (float)(0.02 * lab_normal(s));
    qgemv_quantize(QGEMV_NF4, c->n, c->k, 64, w, data, scales);
    free(w);
  } else {
    /* constructed codes: 3 big meets zero (code 7 at j % 64 == 0, extremes
     * elsewhere), 4 zero weights, 5 all +1 (code 15), 7 code 2 (-0.525)
     * but for one -1 per block (the block's amax) */
    for (int64_t r = 0; r < c->n; r++) {
      for (int64_t b = 0; b < nb; b++) scales[r * nb + b] = 1.0f;
      for (int64_t j = 0; j < c->k; j++) {
        int code = c->kind == 4   ? 7
                   : c->kind == 5 ? 15
                   : c->kind == 7 ? (j % 64 == 0 ? 0 : 2)
                                  : (j % 64 == 0 ? 7 : (lab_rng(s) % 2 ? 0 : 15));
        uint8_t *p = data + (size_t)r * (size_t)(c->k / 2) + (size_t)(j / 2);
        *p = (uint8_t)(j % 2 ? (*p & 0x0f) | (code << 4) : (*p & 0xf0) | code);
      }
    }
  }
  for (int64_t j = 0; j < c->k; j++) {
    double v = lab_normal(s);
    switch (c->kind) {
    case 1: v = v / sqrt((pow(lab_normal(s), 2) + pow(lab_normal(s), 2)) / 2); break;
    case 2: v *= lab_rng(s) % 100 == 0 ? 100.0 : 1.0; break;
    case 3: v = j % 64 == 0 ? 1e30 : 1e-30 * v; break;
    case 5: v = 1.0 + (double)(lab_rng(s) % 1024) / 1048576.0; break;
    case 6: v = (lab_rng(s) % 4 == 0) ? 1e-40 * v : (lab_rng(s) % 3 == 0 ? 0.0 : v); break;
    case 7: v = -1.0; break;
    default: break;
    }
    x[j] = (float)v;
  }
}

static double nf4_lab(const ncase *c, const uint8_t *data, const float *scales, const float *x, const double *ref,
                      const double *bound) {
  uint8_t *w = aligned_alloc(64, nf4i_bytes(c->n, c->k));
  nf4i_repack(data, scales, c->n, c->k, w);
  float *y = malloc(sizeof(float) * (size_t)c->n);
  double *yd = malloc(sizeof(double) * (size_t)c->n);
  nf4i_matvec(w, c->n, c->k, x, 1, y, 1);
  for (int64_t i = 0; i < c->n; i++) yd[i] = y[i];
  double r = worst_ratio(ref, bound, yd, c->n);
  free(w), free(y), free(yd);
  return r;
}


/* A model of an NF4 table held in fp16 (products and sums exact). */
static double nf4_fp16_model(const ncase *c, const uint8_t *data, const float *scales, const float *x,
                             const double *ref, const double *bound) {
  const float *lut = qgemv_nf4_table();
  double *yd = malloc(sizeof(double) * (size_t)c->n);
  for (int64_t r = 0; r < c->n; r++) {
    double acc = 0.0;
    for (int64_t j = 0; j < c->k; j++) {
      int code = (data[(size_t)r * (size_t)(c->k / 2) + (size_t)(j / 2)] >> (4 * (j % 2))) & 15;
      acc += (double)qgemv_f16_to_f32(qgemv_f32_to_f16(lut[code])) * scales[r * (c->k / 64) + j / 64] * x[j];
    }
    yd[r] = acc;
  }
  double w = worst_ratio(ref, bound, yd, c->n);
  free(yd);
  return w;
}

static void nf4_cases(void) {
  const ncase cases[] = {
      {"nf4 normal x", 64, 8192, 0},        {"nf4 Student-t(2) x", 64, 8192, 1}, {"nf4 1% outliers x100", 64, 8192, 2},
      {"nf4 big x meets zero w", 64, 8192, 3}, {"nf4 zero weights", 16, 4096, 4},  {"nf4 all +1, k=65536", 16, 65536, 5},
      {"nf4 subnormal x", 64, 4096, 6},       {"nf4 code 2 (-0.525), x = -1", 16, 4096, 7},
  };
  printf("%-26s %10s %10s %10s\n", "case", "nf4i", "qgemv", "fp16 LUT");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const ncase *c = &cases[i];
    uint64_t s = 777 + i;
    uint8_t *data = calloc(qgemv_data_bytes(QGEMV_NF4, c->n, c->k, 64), 1);
    float *scales = malloc(sizeof(float) * qgemv_scale_count(QGEMV_NF4, c->n, c->k, 64));
    float *x = malloc(sizeof(float) * (size_t)c->k);
    nf4_make(c, &s, data, scales, x);
    qgemv_weight_desc d = {.format = QGEMV_NF4, .n = c->n, .k = c->k, .group = 64, .data = data, .scales = scales};
    double *ref = malloc(sizeof(double) * (size_t)c->n), *bound = malloc(sizeof(double) * (size_t)c->n);
    qgemv_reference_matvec(&d, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0, ref, bound);
    printf("%-26s %10.2e %10.2e %10.2e\n", c->name, nf4_lab(c, data, scales, x, ref, bound),
           library_case(&d, x, ref, bound), nf4_fp16_model(c, data, scales, x, ref, bound));
    free(data), free(scales), free(x), free(ref), free(bound);
  }
}

/* Row t of a batched call equals an m = 1 call on that row, bit for bit,
 * with 1 and 2 threads. */
static int identity(void) {
  const int64_t n = 128, k = 4096, m = 5;
  uint64_t s = 99;
  int bad = 0;
  float *wf = malloc(sizeof(float) * (size_t)(n * k)), *x = malloc(sizeof(float) * (size_t)(m * k));
  for (int64_t i = 0; i < n * k; i++) wf[i] = (float)(0.02 * lab_normal(&s));
  for (int64_t i = 0; i < m * k; i++) x[i] = (float)(lab_normal(&s) * (i % 97 == 0 ? 1e4 : 1.0));
  x[2 * k + 77] = 1e-30f; /* row 2 needs extra terms ... */
  x[2 * k + 78] = 1e30f;
  x[3 * k + 200] = INFINITY; /* ... and row 3 an exact block */
  float *yb = malloc(sizeof(float) * (size_t)(m * n)), *y1 = malloc(sizeof(float) * (size_t)n);
  for (int g = 64; g <= 128; g += 64) {
    uint8_t *data = malloc(qgemv_data_bytes(QGEMV_Q2_0, n, k, g));
    qgemv_quantize(QGEMV_Q2_0, n, k, g, wf, data, NULL);
    uint8_t *w = aligned_alloc(64, q2v_bytes(n, k, g));
    q2v_repack(data, n, k, g, w);
    qg_xfix_row xr[5];
    void *ws = aligned_alloc(64, 5 * qg_xfix_row_bytes(k, g));
    for (int64_t t = 0; t < m; t++) xr[t] = qg_xfix_quantize(x + t * k, k, g, (char *)ws + t * qg_xfix_row_bytes(k, g), qg_xfix_term_portable);
    for (int th = 1; th <= 2; th++) {
      q2v_matvec(w, n, k, g, xr, x, m, yb, th);
      for (int64_t t = 0; t < m; t++) {
        q2v_matvec(w, n, k, g, &xr[t], x + t * k, 1, y1, 3 - th);
        if (memcmp(y1, yb + t * n, sizeof(float) * (size_t)n) != 0) bad++;
      }
    }
    free(ws);
    free(w);
    free(data);
  }
  {
    uint8_t *data = malloc(qgemv_data_bytes(QGEMV_NF4, n, k, 64));
    float *sc = malloc(sizeof(float) * qgemv_scale_count(QGEMV_NF4, n, k, 64));
    qgemv_quantize(QGEMV_NF4, n, k, 64, wf, data, sc);
    uint8_t *w = aligned_alloc(64, nf4i_bytes(n, k));
    nf4i_repack(data, sc, n, k, w);
    for (int th = 1; th <= 2; th++) {
      nf4i_matvec(w, n, k, x, m, yb, th);
      for (int64_t t = 0; t < m; t++) {
        nf4i_matvec(w, n, k, x + t * k, 1, y1, 3 - th);
        if (memcmp(y1, yb + t * n, sizeof(float) * (size_t)n) != 0) bad++;
      }
    }
    free(w), free(data), free(sc);
  }
  printf("batched == m=1 (q2v g64/g128, nf4i; 1 and 2 threads): %s\n", bad ? "DIFFERENT" : "bit-identical");
  free(wf), free(x), free(yb), free(y1);
  return bad;
}

int main(void) {
  if (identity()) return 1;
  const acase cases[] = {
      {"normal x, g128", 128, 64, 8192, x_normal},
      {"normal x, g64", 64, 64, 8192, x_normal},
      {"Student-t(2) x", 128, 64, 8192, x_heavy},
      {"1% outliers x100", 128, 64, 8192, x_outliers},
      {"bf16 x", 128, 64, 8192, x_bf16},
      {"big x meets zero w", 64, 64, 8192, big_meets_zero},
      {"aligned int16 rounding", 128, 16, 8192, aligned_rounding},
      {"aligned, k=65536", 128, 16, 65536, aligned_rounding},
      {"extreme range 1e30/1e-30", 64, 16, 4096, extreme_range},
      {"tiny x alone on w", 64, 16, 4096, tiny_alone},
      {"zero weights", 128, 16, 4096, zero_weights},
      {"subnormal x", 64, 64, 4096, subnormal},
  };
  printf("(figures: worst |y - ref| / R; the contract allows 1e-3)\n");
  printf("%-26s %10s %10s %10s %10s %10s  %s\n", "case", "int16x1", "D=3 model", "q2v", "q2t f32", "qgemv",
         "extra terms D=3 / q2v (exact blocks)");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const acase *c = &cases[i];
    uint64_t s = 1234 + i;
    size_t bytes = qgemv_data_bytes(QGEMV_Q2_0, c->n, c->k, c->g);
    uint8_t *data = calloc(bytes, 1);
    float *x = malloc(sizeof(float) * (size_t)c->k);
    c->make(c, &s, data, x);
    qgemv_weight_desc d = {.format = QGEMV_Q2_0, .n = c->n, .k = c->k, .group = c->g, .data = data};
    double *ref = malloc(sizeof(double) * (size_t)c->n), *bound = malloc(sizeof(double) * (size_t)c->n);
    double *y16 = malloc(sizeof(double) * (size_t)c->n);
    if (qgemv_reference_matvec(&d, 1, QGEMV_F32, x, QGEMV_F32, NULL, 0, ref, bound) != QGEMV_OK) {
      printf("%s: reference failed: %s\n", c->name, qgemv_last_error());
      return 1;
    }
    int16_model(data, c->g, c->n, c->k, x, y16);
    int e4 = 0, x4 = 0, e3 = 0;
    double r16 = worst_ratio(ref, bound, y16, c->n);
    double r3 = d3_model(c, data, x, ref, bound, &e3);
    double r4 = lab_case(c, data, x, ref, bound, &e4, &x4);
    double rt = q2t_case(c, data, x, ref, bound);
    double rq = library_case(&d, x, ref, bound);
    printf("%-26s %10.2e %10.2e %10.2e %10.2e %10.2e  %d / %d (%d) of %lld blocks\n", c->name, r16, r3, r4, rt, rq, e3,
           e4, x4, (long long)(c->k / c->g));
    free(data);
    free(x);
    free(ref);
    free(bound);
    free(y16);
  }
  nf4_cases();
  return 0;
}
