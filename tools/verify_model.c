/* qgemv verify --model FILE: each weight a model file holds, as qgemv
 * loads it, on every target against the oracle (f32 and bf16 x and y,
 * m = 1 and 4), and, where the file also holds the weight's f32 source
 * (NAME.f32), qgemv_quantize of that source against the file's bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "targets.h"
#include "verify.h"

typedef struct mweight {
  qgemv_model_tensor t;
  char source[512]; /* "identical", "differs: ...", "" when no source */
  bool source_ok;
  char skipped[256]; /* why it is not verified; "" when it is */
} mweight;

typedef struct mresult {
  double worst;
  char error[256];
} mresult;

/* The file's bytes against qgemv_quantize of NAME.f32. */
static void check_source(qgemv_model *m, mweight *w, const qgemv_weight_desc *d) {
  char name[600];
  snprintf(name, sizeof name, "%s.f32", w->t.name);
  w->source_ok = true;
  int64_t i = qgemv_model_find(m, name);
  qgemv_model_tensor src;
  if (i < 0 || qgemv_model_tensor_info(m, i, &src) != QGEMV_OK || src.use != QGEMV_USE_FLOAT) return;
  size_t count = (size_t)(d->n * d->k), bytes = qgemv_data_bytes(d->format, d->n, d->k, d->group),
         nscales = qgemv_scale_count(d->format, d->n, d->k, d->group);
  float *f = malloc(count * sizeof *f), *scales = nscales ? malloc(nscales * sizeof *scales) : NULL;
  unsigned char *mine = malloc(bytes);
  qgemv_status s = !f || !mine || (nscales && !scales) ? QGEMV_ERR_NO_MEMORY : QGEMV_OK;
  if (s == QGEMV_OK && (s = qgemv_model_read_f32(m, name, f, count)) == QGEMV_OK)
    s = qgemv_quantize(d->format, d->n, d->k, d->group, f, mine, scales);
  w->source_ok = false;
  if (s != QGEMV_OK) {
    snprintf(w->source, sizeof w->source, "%.200s could not be quantized: %.200s", name, qgemv_last_error());
  } else {
    const unsigned char *file = d->data;
    size_t diff = 0, first = 0;
    for (size_t b = bytes; b-- > 0;)
      if (file[b] != mine[b]) diff++, first = b;
    for (size_t j = 0; j < nscales && diff == 0; j++)
      if (memcmp(&scales[j], &d->scales[j], sizeof *scales) != 0) diff++;
    w->source_ok = diff == 0;
    if (diff == 0)
      snprintf(w->source, sizeof w->source, "identical to qgemv_quantize of %.200s", name);
    else
      snprintf(w->source, sizeof w->source, "%zu bytes differ from qgemv_quantize of %.200s (first: byte %zu, row %zu)",
               diff, name, first, first / (bytes / (size_t)d->n));
  }
  free(f);
  free(scales);
  free(mine);
}

static const qgemv_dtype dts[2] = {QGEMV_F32, QGEMV_BF16};
static const int64_t ms[2] = {1, 4};

/* One weight on one context: the worst of its combinations. */
static void run_weight(qgemv_ctx *ctx, const qgemv_weight_desc *d, uint64_t seed, mresult *out) {
  out->worst = 0;
  out->error[0] = '\0';
  qgemv_weight *w = NULL;
  qgemv_status s = qgemv_weight_upload(ctx, d, &w);
  for (int c = 0; c < 8 && s == QGEMV_OK; c++) {
    qgemv_dtype xt = dts[c & 1], yt = dts[(c >> 1) & 1];
    int64_t m = ms[c >> 2];
    size_t xc = (size_t)(m * d->k), yc = (size_t)(m * d->n), ys = yt == QGEMV_F32 ? 4 : 2;
    rng r = {seed + (uint64_t)c};
    float *xf = malloc(xc * sizeof *xf);
    double *ref = malloc(yc * sizeof *ref), *bound = malloc(yc * sizeof *bound);
    unsigned char *yh = malloc(yc * ys);
    void *xh = NULL;
    qgemv_tensor *x = NULL, *y = NULL;
    if (xf && ref && bound && yh) {
      fill_random(&r, DIST_NORMAL, xf, xc);
      xh = to_dtype(xf, xc, xt);
    }
    if (!xh) {
      s = QGEMV_ERR_NO_MEMORY;
      snprintf(out->error, sizeof out->error, "out of host memory");
    } else {
      memset(yh, 0xff, yc * ys); /* NaN: an unwritten element fails */
      if ((s = qgemv_tensor_new(ctx, xt, m, d->k, &x)) || (s = qgemv_tensor_new(ctx, yt, m, d->n, &y)) ||
          (s = qgemv_tensor_write(x, xh, xc * (xt == QGEMV_F32 ? 4 : 2))) || (s = qgemv_tensor_write(y, yh, yc * ys)) ||
          (s = qgemv_matvec(ctx, w, x, y, NULL)) || (s = qgemv_sync(ctx)) || (s = qgemv_tensor_read(y, yh, yc * ys)) ||
          (s = qgemv_reference_matvec(d, m, xt, xh, xt, NULL, 0.0f, ref, bound)))
        snprintf(out->error, sizeof out->error, "x %s, y %s, m=%lld: %s: %s", dtype_label(xt), dtype_label(yt),
                 (long long)m, qgemv_status_str(s), qgemv_last_error());
      else
        out->worst = fmax(out->worst, verify_worst_ratio(yt, yh, ref, bound, yc));
    }
    qgemv_tensor_free(x);
    qgemv_tensor_free(y);
    free(xf);
    free(xh);
    free(ref);
    free(bound);
    free(yh);
  }
  if (s != QGEMV_OK) {
    out->worst = INFINITY;
    if (!out->error[0]) snprintf(out->error, sizeof out->error, "upload: %s: %s", qgemv_status_str(s), qgemv_last_error());
  }
  qgemv_weight_free(w);
}

static void write_json(FILE *out, const char *path, const mweight *ws, int nw, const target *ts, int nt,
                       const bool *ran, mresult *const *res, uint64_t seed, int failed) {
  json_w j;
  json_init(&j, out);
  json_obj_begin(&j, NULL);
  json_str(&j, "version", qgemv_version());
  json_str(&j, "command", tool_command);
  json_str(&j, "model", path);
  json_int(&j, "seed", (long long)seed);
  json_arr_begin(&j, "weights");
  for (int i = 0; i < nw; i++) {
    json_obj_begin(&j, NULL);
    json_str(&j, "name", ws[i].t.name);
    json_int(&j, "n", ws[i].t.shape[0]);
    json_int(&j, "k", ws[i].t.shape[1]);
    json_str(&j, "format", format_label(ws[i].t.format, ws[i].t.group));
    json_str(&j, "skipped", ws[i].skipped[0] ? ws[i].skipped : NULL);
    json_str(&j, "source", ws[i].source[0] ? (ws[i].source_ok ? "identical" : "differs") : NULL);
    json_str(&j, "source_detail", ws[i].source[0] ? ws[i].source : NULL);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_arr_begin(&j, "targets");
  for (int t = 0; t < nt; t++) {
    json_obj_begin(&j, NULL);
    json_str(&j, "label", ts[t].label);
    json_str(&j, "status", ran[t] ? "ran" : "skipped");
    json_str(&j, "reason", ran[t] ? NULL : ts[t].reason);
    json_arr_begin(&j, "results");
    for (int i = 0; ran[t] && i < nw; i++) {
      if (ws[i].skipped[0]) continue;
      json_obj_begin(&j, NULL);
      json_str(&j, "weight", ws[i].t.name);
      json_num(&j, "worst_over_bound", res[t][i].worst);
      json_bool(&j, "pass", res[t][i].worst <= 1.0);
      json_str(&j, "error", res[t][i].error[0] ? res[t][i].error : NULL);
      json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_int(&j, "failed", failed);
  json_bool(&j, "ok", failed == 0);
  json_obj_end(&j);
}

int verify_model(target *ts, int nt, const char *path, const char *json_path, uint64_t seed) {
  qgemv_model *m;
  qgemv_status s = qgemv_model_open(path, &m);
  if (s != QGEMV_OK) return report_failure("verify: --model", s), 1;
  FILE *json = json_path ? out_open("verify", json_path) : NULL;
  FILE *table = json == stdout ? stderr : stdout;
  int nw = 0, failed = 0, ran_targets = 0;
  mweight *ws = calloc((size_t)qgemv_model_tensor_count(m) + 1, sizeof *ws);
  bool *ran = calloc((size_t)nt + 1, sizeof *ran);
  mresult **res = calloc((size_t)nt + 1, sizeof *res);
  if (!ws || !ran || !res || (json_path && !json)) {
    failed = 1;
    goto done;
  }
  for (int64_t i = 0; i < qgemv_model_tensor_count(m); i++) {
    mweight *w = &ws[nw];
    qgemv_model_tensor_info(m, i, &w->t);
    if (w->t.use != QGEMV_USE_WEIGHT) continue;
    nw++;
    qgemv_weight_desc d;
    if (qgemv_model_weight(m, w->t.name, 0, &d) != QGEMV_OK) {
      snprintf(w->skipped, sizeof w->skipped, "%s", qgemv_last_error());
      continue;
    }
    check_source(m, w, &d);
    failed += !w->source_ok;
  }
  fprintf(table, "%s: %d weight%s\n", path, nw, nw == 1 ? "" : "s");
  for (int i = 0; i < nw; i++)
    fprintf(table, "  %-40s %-9s %6lldx%-6lld %s\n", ws[i].t.name, format_label(ws[i].t.format, ws[i].t.group),
            (long long)ws[i].t.shape[0], (long long)ws[i].t.shape[1],
            ws[i].skipped[0] ? ws[i].skipped : ws[i].source[0] ? ws[i].source : "(no f32 source in the file)");
  fprintf(table, "\n%-12s %-40s %12s  %s\n", "target", "weight", "worst/bound", "result (x, y f32/bf16; m = 1, 4)");
  for (int t = 0; t < nt; t++) {
    qgemv_ctx *ctx;
    if (!ts[t].usable || target_open(&ts[t], &ctx) != QGEMV_OK) {
      if (ts[t].usable) snprintf(ts[t].reason, sizeof ts[t].reason, "%s", qgemv_last_error());
      fprintf(table, "%-12s skipped: %s\n", ts[t].label, ts[t].reason);
      continue;
    }
    ran[t] = true;
    ran_targets++;
    if (!(res[t] = calloc((size_t)nw + 1, sizeof **res))) {
      failed++;
      qgemv_close(ctx);
      continue;
    }
    for (int i = 0; i < nw; i++) {
      qgemv_weight_desc d;
      if (ws[i].skipped[0] || qgemv_model_weight(m, ws[i].t.name, 0, &d) != QGEMV_OK) continue;
      run_weight(ctx, &d, seed, &res[t][i]);
      bool pass = res[t][i].worst <= 1.0;
      failed += !pass;
      fprintf(table, "%-12s %-40s %12.4g  %s\n", ts[t].label, ws[i].t.name, res[t][i].worst, pass ? "pass" : "FAIL");
      if (res[t][i].error[0]) fprintf(table, "%-12s   error: %s\n", "", res[t][i].error);
      fflush(table);
    }
    qgemv_close(ctx);
  }
  fprintf(table, "%d target%s, %d weight%s: %d failure%s\n", ran_targets, ran_targets == 1 ? "" : "s", nw,
          nw == 1 ? "" : "s", failed, failed == 1 ? "" : "s");
  if (nw == 0) fprintf(table, "qgemv verify: %s holds no weight qgemv runs as stored (qgemv inspect lists it)\n", path);
  if (json) write_json(json, path, ws, nw, ts, nt, ran, res, seed, failed);
done:
  if (json && out_close("verify", json, json_path) != 0) failed++;
  for (int t = 0; res && t < nt; t++) free(res[t]);
  free(res);
  free(ran);
  free(ws);
  qgemv_model_close(m);
  return failed || nw == 0 || ran_targets == 0 ? 1 : 0;
}
