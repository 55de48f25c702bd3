/* qgemv bench: matvec time on decode-sized shapes against the device's
 * streaming read bandwidth measured in the same run (DESIGN.md s.9). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

typedef struct bench_shape { int64_t n, k; const char *name; } bench_shape;

/* One decode step of Llama-3-8B: q, k, v, o, gate, up, down. */
static const bench_shape llama3_8b[] = {
    {4096, 4096, "q"}, {1024, 4096, "k"}, {1024, 4096, "v"}, {4096, 4096, "o"},
    {14336, 4096, "gate"}, {14336, 4096, "up"}, {4096, 14336, "down"},
};

typedef struct bench_opts {
  const char *spec;
  bench_shape shapes[32];
  int nshapes;
  int formats; /* bit 0 NF4, bit 1 Q2_0 g128, bit 2 Q2_0 g64 */
  qgemv_dtype dtype;
  int64_t m;
  double min_time;
  size_t working_set;
} bench_opts;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median seconds per matvec over rounds of back-to-back calls that rotate
 * through `copies` weights (so that the working set exceeds the caches). */
static int time_matvec(qgemv_ctx *ctx, qgemv_weight **ws, int copies, qgemv_tensor *x, qgemv_tensor *y,
                       double min_time, double *median) {
  double samples[256];
  int count = 0;
  double start = seconds_now();
  for (int round = -1; count < 256; round++) {
    double t0 = seconds_now();
    for (int c = 0; c < copies; c++) {
      qgemv_status s = qgemv_matvec(ctx, ws[c], x, y, NULL);
      if (s != QGEMV_OK) return report_failure("bench: matvec", s), -1;
    }
    qgemv_status s = qgemv_sync(ctx);
    if (s != QGEMV_OK) return report_failure("bench: sync", s), -1;
    double dt = (seconds_now() - t0) / copies;
    if (round >= 0) samples[count++] = dt; /* round -1 warms up */
    if (count >= 5 && seconds_now() - start > min_time) break;
  }
  qsort(samples, (size_t)count, sizeof(double), cmp_double);
  *median = samples[count / 2];
  return 0;
}

static int bench_one(qgemv_ctx *ctx, const bench_opts *o, const bench_shape *sh, qgemv_format f, int32_t group,
                     double read_gbs) {
  rng r = {42};
  host_weight hw;
  if (host_weight_make(&r, DIST_NORMAL, f, group, sh->n, sh->k, &hw) != 0) {
    fprintf(stderr, "qgemv bench: cannot make a %lldx%lld weight: %s\n", (long long)sh->n, (long long)sh->k,
            qgemv_last_error());
    return -1;
  }
  int copies = (int)((o->working_set + hw.bytes - 1) / hw.bytes);
  if (copies < 1) copies = 1;
  if (copies > 4096) copies = 4096;
  qgemv_weight **ws = calloc((size_t)copies, sizeof *ws);
  qgemv_tensor *x = NULL, *y = NULL;
  int rc = -1;
  size_t xc = (size_t)(o->m * sh->k), es = o->dtype == QGEMV_F32 ? 4 : 2;
  float *xf = malloc(xc * sizeof(float));
  void *xh = NULL;
  if (!ws || !xf) goto out;
  fill_random(&r, DIST_NORMAL, xf, xc);
  xh = to_dtype(xf, xc, o->dtype);
  qgemv_status s;
  for (int c = 0; c < copies; c++)
    if ((s = qgemv_weight_upload(ctx, &hw.desc, &ws[c])) != QGEMV_OK) {
      report_failure("bench: upload", s);
      goto out;
    }
  if ((s = qgemv_tensor_new(ctx, o->dtype, o->m, sh->k, &x)) || (s = qgemv_tensor_new(ctx, o->dtype, o->m, sh->n, &y)) ||
      (s = qgemv_tensor_write(x, xh, xc * es))) {
    report_failure("bench: tensors", s);
    goto out;
  }
  double t;
  if (time_matvec(ctx, ws, copies, x, y, o->min_time, &t) != 0) goto out;
  double bytes = (double)qgemv_weight_resident_bytes(ws[0]) + (double)xc * es + (double)(o->m * sh->n) * es;
  double gbs = bytes / t / 1e9;
  printf("%-6s %6lldx%-6lld %-10s %-5s %3lld %10.1f %9.1f %7.1f%%\n", sh->name, (long long)sh->n, (long long)sh->k,
         format_label(f, group), dtype_label(o->dtype), (long long)o->m, t * 1e6, gbs, 100.0 * gbs / read_gbs);
  fflush(stdout);
  rc = 0;
out:
  for (int c = 0; ws && c < copies; c++) qgemv_weight_free(ws[c]);
  free(ws);
  qgemv_tensor_free(x);
  qgemv_tensor_free(y);
  free(xf);
  free(xh);
  host_weight_free(&hw);
  return rc;
}

static void usage(FILE *f) {
  fprintf(f, "usage: qgemv bench [--backend SPEC] [--shape NxK]... [--format nf4|q2_0|q2_0g64|all]\n"
             "                   [--dtype f32|bf16] [--m M] [--min-time SEC]\n\n"
             "Times matvec (median of rounds of back-to-back calls that rotate over enough\n"
             "weight copies to exceed the last-level cache) and reports GB/s = (weight +\n"
             "x + y bytes) / time, and that as a percentage of the streaming read bandwidth\n"
             "measured in the same run. Default: the Llama-3-8B decode layers, NF4 and\n"
             "Q2_0 g128, m = 1, bf16 activations.\n");
}

static int parse_shape(const char *s, bench_shape *out) {
  char *end;
  long long n = strtoll(s, &end, 10);
  if (*end != 'x' && *end != 'X') return -1;
  long long k = strtoll(end + 1, &end, 10);
  if (*end != '\0' || n <= 0 || k <= 0) return -1;
  out->n = n;
  out->k = k;
  out->name = "shape";
  return 0;
}

int cmd_bench(int argc, char **argv) {
  bench_opts o = {.formats = 3, .dtype = QGEMV_BF16, .m = 1, .min_time = 0.5};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--backend") && v) {
      o.spec = v, i++;
    } else if (!strcmp(a, "--shape") && v) {
      if (o.nshapes >= 32 || parse_shape(v, &o.shapes[o.nshapes]) != 0) {
        fprintf(stderr, "qgemv bench: --shape '%s': expected NxK with N, K > 0 (at most 32 shapes)\n", v);
        return 2;
      }
      o.nshapes++, i++;
    } else if (!strcmp(a, "--format") && v) {
      o.formats = !strcmp(v, "nf4") ? 1 : !strcmp(v, "q2_0") ? 2 : !strcmp(v, "q2_0g64") ? 4 : !strcmp(v, "all") ? 7 : 0;
      if (!o.formats) {
        fprintf(stderr, "qgemv bench: --format '%s': use nf4, q2_0, q2_0g64 or all\n", v);
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--dtype") && v) {
      if (strcmp(v, "f32") && strcmp(v, "bf16")) {
        fprintf(stderr, "qgemv bench: --dtype '%s': use f32 or bf16\n", v);
        return 2;
      }
      o.dtype = !strcmp(v, "f32") ? QGEMV_F32 : QGEMV_BF16, i++;
    } else if (!strcmp(a, "--m") && v) {
      o.m = strtoll(v, NULL, 10), i++;
      if (o.m < 1) {
        fprintf(stderr, "qgemv bench: --m '%s': use a row count >= 1\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--min-time") && v) {
      o.min_time = strtod(v, NULL), i++;
    } else {
      fprintf(stderr, "qgemv bench: unknown option or missing value '%s' (qgemv bench --help)\n", a);
      return 2;
    }
  }
  if (o.nshapes == 0) {
    o.nshapes = (int)(sizeof llama3_8b / sizeof llama3_8b[0]);
    memcpy(o.shapes, llama3_8b, sizeof llama3_8b);
  }
  qgemv_ctx *ctx;
  qgemv_status s = qgemv_open(o.spec, &ctx);
  if (s != QGEMV_OK) return report_failure("bench: open", s), 1;
  qgemv_device_info info;
  qgemv_ctx_info(ctx, &info);
  /* Rotate over at least 4x the last-level cache, and 1 GiB. */
  o.working_set = info.llc_bytes * 4 > (1u << 30) ? info.llc_bytes * 4 : (1u << 30);
  double read_gbs;
  if ((s = qgemv_measure_read_bandwidth(ctx, 0, &read_gbs)) != QGEMV_OK) {
    report_failure("bench: read bandwidth", s);
    qgemv_close(ctx);
    return 1;
  }
  printf("backend %s:%d  %s%s%s  streaming read %.1f GB/s  working set %.0f MB per shape\n", info.backend, info.index,
         info.name, info.isa[0] ? "  ISA " : "", info.isa, read_gbs, (double)o.working_set / 1e6);
  printf("%-6s %-13s %-10s %-5s %3s %10s %9s %8s\n", "layer", "NxK", "format", "x/y", "m", "time(us)", "GB/s", "%read");
  int rc = 0;
  for (int i = 0; i < o.nshapes; i++) {
    if (o.formats & 1) rc |= bench_one(ctx, &o, &o.shapes[i], QGEMV_NF4, 64, read_gbs);
    if (o.formats & 2) rc |= bench_one(ctx, &o, &o.shapes[i], QGEMV_Q2_0, 128, read_gbs);
    if (o.formats & 4) rc |= bench_one(ctx, &o, &o.shapes[i], QGEMV_Q2_0, 64, read_gbs);
  }
  qgemv_close(ctx);
  return rc ? 1 : 0;
}
