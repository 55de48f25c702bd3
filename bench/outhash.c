/*
 * outhash: one hash of the output bytes per fixed-seed case, for proving a
 * refactor changed no result. Build it against two installs (before and
 * after), run both on the same backend, and diff the outputs:
 *
 *   cc -O2 bench/outhash.c $(pkg-config --cflags --libs qgemv) -o outhash
 *   QGEMV_CPU_ISA=avx2 ./outhash cpu > after.txt     # or: ./outhash cuda
 *
 * It uses only the public API, so any two releases can be compared. Cases:
 * every layout, shapes with and without tail segments, f32/bf16 in and
 * out, no norm / f32 gamma / bf16 gamma, m in {1, 3, 8, 16}.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qgemv.h>

static uint64_t rng_state;
static uint32_t next_u32(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(rng_state >> 33);
}
static float uniform(void) { return ((float)next_u32() + 0.5f) / 2147483648.0f; } /* (0, 1) */
/* Normal-ish values with an occasional outlier, so blocks have real ranges. */
static float sample(float sigma) {
  float u = uniform(), v = uniform();
  float z = sqrtf(-2.0f * logf(u)) * cosf(6.2831853f * v);
  if (next_u32() % 97 == 0) z *= 12.0f;
  return z * sigma;
}

static uint64_t fnv1a(const void *p, size_t n, uint64_t h) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

#define CHECK(call)                                                                   \
  do {                                                                                \
    qgemv_status s_ = (call);                                                         \
    if (s_ != QGEMV_OK) {                                                             \
      fprintf(stderr, "outhash: %s: %s (%s)\n", #call, qgemv_status_str(s_), qgemv_last_error()); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static void *host_values(qgemv_dtype dt, int64_t count, float sigma, float offset) {
  size_t es = dt == QGEMV_F32 ? 4 : 2;
  unsigned char *p = malloc((size_t)count * es);
  if (!p) exit(1);
  for (int64_t i = 0; i < count; i++) {
    float v = offset + sample(sigma);
    if (dt == QGEMV_F32)
      memcpy(p + i * 4, &v, 4);
    else {
      uint16_t h = qgemv_f32_to_bf16(v);
      memcpy(p + i * 2, &h, 2);
    }
  }
  return p;
}

static void run_case(qgemv_ctx *ctx, const qgemv_weight *w, int64_t n, int64_t k, qgemv_dtype xd,
                     qgemv_dtype yd, int norm, int64_t m, const char *label) {
  rng_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(n * 131 + k * 7 + m * 3 + xd * 2 + yd + norm * 5);
  void *hx = host_values(xd, m * k, 1.0f, 0.0f);
  qgemv_tensor *x, *y, *g = NULL;
  CHECK(qgemv_tensor_new(ctx, xd, m, k, &x));
  CHECK(qgemv_tensor_new(ctx, yd, m, n, &y));
  size_t xes = xd == QGEMV_F32 ? 4 : 2, yes = yd == QGEMV_F32 ? 4 : 2;
  CHECK(qgemv_tensor_write(x, hx, (size_t)(m * k) * xes));
  qgemv_rmsnorm rn = {.eps = 1e-5f};
  void *hg = NULL;
  if (norm) {
    qgemv_dtype gd = norm == 1 ? QGEMV_F32 : QGEMV_BF16;
    hg = host_values(gd, k, 0.1f, 1.0f);
    CHECK(qgemv_tensor_new(ctx, gd, 1, k, &g));
    CHECK(qgemv_tensor_write(g, hg, (size_t)k * (gd == QGEMV_F32 ? 4 : 2)));
    rn.gamma = g;
  }
  CHECK(qgemv_matvec(ctx, w, x, y, norm ? &rn : NULL));
  CHECK(qgemv_sync(ctx));
  size_t ybytes = (size_t)(m * n) * yes;
  void *hy = malloc(ybytes);
  if (!hy) exit(1);
  CHECK(qgemv_tensor_read(y, hy, ybytes));
  printf("%s n=%lld k=%lld x=%s y=%s norm=%s m=%lld %016llx\n", label, (long long)n, (long long)k,
         xd == QGEMV_F32 ? "f32" : "bf16", yd == QGEMV_F32 ? "f32" : "bf16",
         norm == 0 ? "none" : norm == 1 ? "f32" : "bf16", (long long)m,
         (unsigned long long)fnv1a(hy, ybytes, 1469598103934665603ULL));
  free(hx), free(hy), free(hg);
  qgemv_tensor_free(x), qgemv_tensor_free(y);
  if (g) qgemv_tensor_free(g);
}

int main(int argc, char **argv) {
  qgemv_ctx *ctx;
  CHECK(qgemv_open(argc > 1 ? argv[1] : NULL, &ctx));
  static const struct { qgemv_format f; int32_t g; const char *name; } layouts[] = {
      {QGEMV_NF4, 64, "nf4"}, {QGEMV_Q2_0, 64, "q2_0/64"}, {QGEMV_Q2_0, 128, "q2_0/128"}};
  /* k: whole segments, and k with tail segments (1088 = 8.5 x 128, 2176 = 8.5 x 256). */
  static const int64_t shapes[][2] = {{96, 1024}, {257, 1152}, {64, 4096}, {130, 2176}, {1000, 8192}};
  static const int64_t ms[] = {1, 3, 8, 16};
  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      int64_t n = shapes[s][0], k = shapes[s][1];
      if (k % layouts[l].g) continue;
      rng_state = 12345u + (uint64_t)(n * 1000 + k) + l;
      float *wf = malloc((size_t)(n * k) * sizeof *wf);
      void *data = malloc(qgemv_data_bytes(layouts[l].f, n, k, layouts[l].g));
      size_t ns = qgemv_scale_count(layouts[l].f, n, k, layouts[l].g);
      float *scales = ns ? malloc(ns * sizeof *scales) : NULL;
      if (!wf || !data || (ns && !scales)) return 1;
      for (int64_t i = 0; i < n * k; i++) wf[i] = sample(0.02f);
      CHECK(qgemv_quantize(layouts[l].f, n, k, layouts[l].g, wf, data, scales));
      qgemv_weight_desc d = {.format = layouts[l].f, .n = n, .k = k, .group = layouts[l].g,
                             .data = data, .scales = scales};
      qgemv_weight *w;
      CHECK(qgemv_weight_upload(ctx, &d, &w));
      for (int xd = 0; xd < 2; xd++)
        for (int yd = 0; yd < 2; yd++)
          for (int norm = 0; norm < 3; norm++)
            for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
              run_case(ctx, w, n, k, (qgemv_dtype)xd, (qgemv_dtype)yd, norm, ms[mi], layouts[l].name);
      qgemv_weight_free(w);
      free(wf), free(data), free(scales);
    }
  qgemv_close(ctx);
  return 0;
}
