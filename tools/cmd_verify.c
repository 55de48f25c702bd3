/* qgemv verify: every operation combination on a backend against the
 * oracle (qgemv_reference_matvec), under the accuracy contract. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

typedef struct combo {
  qgemv_format format;
  int32_t group;
  qgemv_dtype x, y;
  int norm; /* 0 none, 1 rmsnorm */
} combo;

typedef struct shape { int64_t n, k; } shape;

static const shape shapes[] = {{257, 1152}, {33, 4224}};
static const int64_t ms[] = {1, 5, 17};

/* Worst |y - ref| / allowed over one call; < 0 on an API failure. NaN or an
 * unwritten (still poisoned) element counts as infinitely wrong. */
static double run_one(qgemv_ctx *ctx, const combo *c, shape sh, int64_t m, rng *r, dist_kind dist) {
  host_weight hw;
  if (host_weight_make(r, dist, c->format, c->group, sh.n, sh.k, &hw) != 0) {
    fprintf(stderr, "qgemv verify: cannot make a random weight: %s\n", qgemv_last_error());
    return -1;
  }
  size_t xc = (size_t)(m * sh.k), yc = (size_t)(m * sh.n);
  float *xf = malloc(xc * sizeof(float)), *gf = malloc((size_t)sh.k * sizeof(float));
  double *ref = malloc(yc * sizeof(double)), *bound = malloc(yc * sizeof(double));
  size_t ysz = c->y == QGEMV_F32 ? 4 : 2;
  unsigned char *yh = malloc(yc * ysz);
  double worst = -1;
  qgemv_weight *w = NULL;
  qgemv_tensor *x = NULL, *y = NULL, *g = NULL;
  void *xh = NULL, *gh = NULL;
  if (!xf || !gf || !ref || !bound || !yh) goto done;
  fill_random(r, dist, xf, xc);
  for (int64_t j = 0; j < sh.k; j++) gf[j] = (float)(0.5 + rng_uniform(r));
  qgemv_dtype gt = c->x; /* gamma takes the activations' dtype */
  xh = to_dtype(xf, xc, c->x);
  gh = to_dtype(gf, (size_t)sh.k, gt);
  qgemv_status s;
  if ((s = qgemv_weight_upload(ctx, &hw.desc, &w)) || (s = qgemv_tensor_new(ctx, c->x, m, sh.k, &x)) ||
      (s = qgemv_tensor_new(ctx, c->y, m, sh.n, &y)) || (s = qgemv_tensor_new(ctx, gt, 1, sh.k, &g)) ||
      (s = qgemv_tensor_write(x, xh, xc * (c->x == QGEMV_F32 ? 4 : 2))) ||
      (s = qgemv_tensor_write(g, gh, (size_t)sh.k * (gt == QGEMV_F32 ? 4 : 2)))) {
    report_failure("verify setup", s);
    goto done;
  }
  memset(yh, 0xff, yc * ysz); /* NaN in both dtypes: an unwritten element fails */
  if ((s = qgemv_tensor_write(y, yh, yc * ysz))) goto fail;
  qgemv_rmsnorm norm = {.gamma = g, .eps = 1e-5f};
  if ((s = qgemv_matvec(ctx, w, x, y, c->norm ? &norm : NULL)) || (s = qgemv_sync(ctx)) ||
      (s = qgemv_tensor_read(y, yh, yc * ysz)))
    goto fail;
  if ((s = qgemv_reference_matvec(&hw.desc, m, c->x, xh, gt, c->norm ? gh : NULL, 1e-5f, ref, bound))) goto fail;
  worst = 0;
  for (size_t i = 0; i < yc; i++) {
    double v = c->y == QGEMV_F32 ? ((float *)yh)[i] : qgemv_bf16_to_f32(((uint16_t *)yh)[i]);
    double allowed = 1e-3 * bound[i] + (c->y == QGEMV_BF16 ? ldexp(fabs(ref[i]), -8) : 0.0);
    double err = fabs(v - ref[i]);
    double ratio = isnan(ref[i]) ? (isnan(v) ? 0 : INFINITY) : isnan(err) ? INFINITY
                   : allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0);
    if (ratio > worst) worst = ratio;
  }
  goto done;
fail:
  report_failure("verify", s);
  worst = -1;
done:
  qgemv_tensor_free(x);
  qgemv_tensor_free(y);
  qgemv_tensor_free(g);
  qgemv_weight_free(w);
  host_weight_free(&hw);
  free(xf);
  free(gf);
  free(ref);
  free(bound);
  free(yh);
  free(xh);
  free(gh);
  return worst;
}

static void usage(FILE *f) {
  fprintf(f, "usage: qgemv verify [--backend SPEC] [--seed N]\n\n"
             "Runs every combination of format (NF4, Q2_0 g64, Q2_0 g128), x and y dtype\n"
             "(f32, bf16) and RMSNorm (off, on) for m = 1, 5, 17 on two shapes, on random\n"
             "data of several distributions, and checks each output element against the\n"
             "oracle: |y - ref| <= 1e-3 R (+ 2^-8 |ref| for bf16 y). Prints the worst\n"
             "error as a fraction of the allowed bound; exits 1 if any combination fails.\n\n"
             "  --backend SPEC  auto, cpu, cuda, cuda:N (default: QGEMV_BACKEND, else auto)\n"
             "  --seed N        random seed (default 1)\n");
}

int cmd_verify(int argc, char **argv) {
  const char *spec = NULL;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
      spec = argv[++i];
    } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else {
      fprintf(stderr, "qgemv verify: unknown option or missing value '%s' (qgemv verify --help)\n", argv[i]);
      return 2;
    }
  }
  qgemv_ctx *ctx;
  qgemv_status s = qgemv_open(spec, &ctx);
  if (s != QGEMV_OK) {
    report_failure("verify: open", s);
    return 1;
  }
  qgemv_device_info info;
  qgemv_ctx_info(ctx, &info);
  printf("verifying backend %s:%d (%s%s%s) against the oracle\n", info.backend, info.index, info.name,
         info.isa[0] ? ", ISA " : "", info.isa);
  printf("%-10s %-5s %-5s %-8s %14s  %s\n", "format", "x", "y", "rmsnorm", "worst/bound", "result");
  static const struct { qgemv_format f; int32_t g; } formats[] = {{QGEMV_NF4, 64}, {QGEMV_Q2_0, 64}, {QGEMV_Q2_0, 128}};
  rng r = {seed};
  int failures = 0, total = 0;
  for (size_t fi = 0; fi < 3; fi++)
    for (int xt = 0; xt < 2; xt++)
      for (int yt = 0; yt < 2; yt++)
        for (int norm = 0; norm < 2; norm++) {
          combo c = {formats[fi].f, formats[fi].g, (qgemv_dtype)xt, (qgemv_dtype)yt, norm};
          double worst = 0;
          int dist = 0;
          for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
              double v = run_one(ctx, &c, shapes[si], ms[mi], &r, (dist_kind)(dist++ % DIST_COUNT));
              if (v < 0 || isnan(v)) v = INFINITY;
              if (v > worst) worst = v;
            }
          int ok = worst <= 1.0;
          failures += !ok;
          total++;
          printf("%-10s %-5s %-5s %-8s %14.4g  %s\n", format_label(c.format, c.group), dtype_label(c.x),
                 dtype_label(c.y), norm ? "on" : "off", worst, ok ? "pass" : "FAIL");
        }
  qgemv_close(ctx);
  printf("%d passed, %d failed\n", total - failures, failures);
  return failures ? 1 : 0;
}
