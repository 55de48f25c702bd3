/* qgemv verify: every operation combination on one backend, or on every
 * usable backend device and CPU ISA level (--backend all), against the
 * oracle; a table, optional JSON, and a non-zero exit on any failure. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "opts.h"
#include "targets.h"
#include "verify.h"

typedef struct target_run {
  target t;
  bool ran;           /* false: skipped (t.reason says why) */
  qgemv_device_info info;
  combo_result *results; /* one per combination */
  int failed;
} target_run;

static combo *combos;
static int ncombos;
/* The table goes to stdout, or to stderr when JSON takes stdout. */
static FILE *table;

static bool passed(const combo_result *r) { return r->worst <= 1.0; }

static void print_row(const char *label, const combo *c, const combo_result *r) {
  fprintf(table, "%-12s %-10s %-5s %-5s %-8s %12.4g  %s\n", label, c->format.label, dtype_label(c->x),
         dtype_label(c->y), c->norm ? "on" : "off", r->worst, passed(r) ? "pass" : "FAIL");
  if (r->error[0]) fprintf(table, "%-12s   error: %s\n", "", r->error);
}

/* Runs every combination on one target; same seed on every target, so
 * they all see identical data. */
static void run_target(target_run *tr, uint64_t seed) {
  qgemv_ctx *ctx;
  if (target_open(&tr->t, &ctx) != QGEMV_OK) {
    tr->t.usable = false;
    snprintf(tr->t.reason, sizeof tr->t.reason, "%s", qgemv_last_error());
    return;
  }
  qgemv_ctx_info(ctx, &tr->info);
  tr->ran = true;
  rng r = {seed};
  for (int i = 0; i < ncombos; i++) {
    verify_combo(ctx, &combos[i], &r, &tr->results[i]);
    tr->failed += !passed(&tr->results[i]);
    print_row(tr->t.label, &combos[i], &tr->results[i]);
    fflush(table);
  }
  qgemv_close(ctx);
}

static void write_json(FILE *out, const target_run *runs, int n, uint64_t seed) {
  json_w j;
  json_init(&j, out);
  json_obj_begin(&j, NULL);
  json_str(&j, "version", qgemv_version());
  json_str(&j, "build", qgemv_build_config());
  json_str(&j, "command", tool_command);
  json_int(&j, "seed", (long long)seed);
  int failed = 0, skipped = 0;
  json_arr_begin(&j, "targets");
  for (int t = 0; t < n; t++) {
    const target_run *tr = &runs[t];
    failed += tr->failed;
    skipped += !tr->ran;
    json_obj_begin(&j, NULL);
    json_str(&j, "label", tr->t.label);
    json_str(&j, "backend", tr->t.backend);
    json_str(&j, "isa", tr->t.isa[0] ? tr->t.isa : NULL);
    json_str(&j, "status", !tr->ran ? "skipped" : tr->failed ? "failed" : "passed");
    json_str(&j, "reason", tr->ran ? NULL : tr->t.reason);
    if (tr->ran) json_device_info(&j, "device", &tr->info);
    json_arr_begin(&j, "results");
    for (int i = 0; tr->ran && i < ncombos; i++) {
      const combo *c = &combos[i];
      const combo_result *r = &tr->results[i];
      json_obj_begin(&j, NULL);
      json_str(&j, "format", c->format.name);
      json_int(&j, "group", c->format.group);
      json_str(&j, "x", dtype_label(c->x));
      json_str(&j, "y", dtype_label(c->y));
      json_bool(&j, "rmsnorm", c->norm);
      json_num(&j, "worst_over_bound", r->worst); /* null when infinite */
      json_bool(&j, "pass", passed(r));
      json_obj_begin(&j, "worst_case");
      json_int(&j, "n", r->n);
      json_int(&j, "k", r->k);
      json_int(&j, "m", r->m);
      json_str(&j, "distribution", dist_name(r->dist));
      json_obj_end(&j);
      json_str(&j, "error", r->error[0] ? r->error : NULL);
      json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_int(&j, "failed", failed);
  json_int(&j, "skipped_targets", skipped);
  json_bool(&j, "ok", failed == 0);
  json_obj_end(&j);
}

static void usage(FILE *f) {
  char formats[256], levels[128];
  fprintf(f, "usage: qgemv verify [--backend SPEC|all] [--seed N] [--json FILE] [--model FILE]\n\n"
             "Runs every combination of format (%s), x and y dtype\n"
             "(f32, bf16) and RMSNorm (off, on) for m = 1, 5, 17 on three shapes, on random\n"
             "data of several distributions, and checks each output element against the\n"
             "oracle: |y - ref| <= 1e-3 R (+ 2^-8 |ref| for bf16 y). Prints the worst\n"
             "error as a fraction of the allowed bound; exits 1 if any combination fails.\n"
             "Each weight is uploaded for its m (qgemv_weight_upload_for_m);\n"
             "QGEMV_CUDA_LAYOUT=lut or share checks that CUDA form where a shape fits it.\n\n"
             "  --backend SPEC  auto, cpu, cuda, cuda:N (default: QGEMV_BACKEND, else auto),\n"
             "                  or all: every device of every usable backend and every CPU\n"
             "                  ISA level (%s); those not\n"
             "                  usable here are listed as skipped, with the reason\n"
             "  --seed N        random seed, 0 .. 2^64-1 (default 1)\n"
             "  --model FILE    instead, every weight a GGUF or safetensors file holds, as\n"
             "                  qgemv loads it (f32 and bf16 x and y, m = 1 and 4), and,\n"
             "                  where the file holds its f32 source (NAME.f32), whether\n"
             "                  qgemv_quantize of that source gives the file's bytes\n"
             "  --json FILE     also write the results as JSON to FILE ('-': standard\n"
             "                  output, instead of the table)\n"
             "  -h, --help      this help\n",
          format_names(formats, sizeof formats, true), cpu_level_names(levels, sizeof levels));
}

/* The one target of --backend SPEC (or the default backend). */
static int single_target(const char *spec, target *t) {
  memset(t, 0, sizeof *t);
  qgemv_ctx *ctx;
  qgemv_status s = qgemv_open(spec, &ctx);
  if (s != QGEMV_OK) {
    report_failure("verify: open", s);
    return -1;
  }
  qgemv_device_info info;
  qgemv_ctx_info(ctx, &info);
  snprintf(t->backend, sizeof t->backend, "%s", info.backend);
  snprintf(t->spec, sizeof t->spec, "%s:%d", info.backend, info.index);
  if (info.isa[0])
    snprintf(t->label, sizeof t->label, "%s/%s", info.backend, info.isa);
  else
    snprintf(t->label, sizeof t->label, "%s:%d", info.backend, info.index);
  t->device = info.index;
  t->usable = true;
  qgemv_close(ctx);
  return 0;
}

int cmd_verify(int argc, char **argv) {
  const char *spec = NULL, *json_path = NULL, *model_path = NULL, *v;
  uint64_t seed = 1;
  opt_iter it;
  opt_init(&it, "verify", argc, argv);
  while (opt_next(&it)) {
    if (opt_is(&it, "--help") || opt_is(&it, "-h")) {
      usage(stdout);
      return 0;
    } else if (opt_is(&it, "--backend")) {
      if (!(spec = opt_value(&it))) return EXIT_USAGE;
    } else if (opt_is(&it, "--seed")) {
      if (!(v = opt_value(&it))) return EXIT_USAGE;
      if (!parse_u64(v, 0, UINT64_MAX, &seed)) return opt_bad_value(&it, v, "use an integer from 0 to 2^64-1");
    } else if (opt_is(&it, "--json")) {
      if (!(json_path = opt_value(&it))) return EXIT_USAGE;
    } else if (opt_is(&it, "--model")) {
      if (!(model_path = opt_value(&it))) return EXIT_USAGE;
    } else {
      return opt_unknown(&it);
    }
  }
  target *ts = NULL;
  int n;
  if (spec && strcmp(spec, "all") == 0) {
    n = targets_all(&ts);
  } else {
    ts = malloc(sizeof *ts);
    n = ts && single_target(spec, ts) == 0 ? 1 : -1;
  }
  if (model_path) {
    int rc = n > 0 ? verify_model(ts, n, model_path, json_path, seed) : 1;
    free(ts);
    return rc;
  }
  FILE *json = json_path ? out_open("verify", json_path) : NULL;
  if (json_path && !json) {
    free(ts);
    return 1;
  }
  table = json == stdout ? stderr : stdout;

  combos = combos_all(&ncombos);
  target_run *runs = n > 0 ? calloc((size_t)n, sizeof *runs) : NULL;
  combo_result *results = n > 0 ? calloc((size_t)n * (size_t)ncombos, sizeof *results) : NULL;
  if (!runs || !results || !combos) {
    free(runs);
    free(results);
    free(combos);
    free(ts);
    if (json) out_close("verify", json, json_path);
    return 1;
  }
  fprintf(table, "%-12s %-10s %-5s %-5s %-8s %12s  %s\n", "target", "format", "x", "y", "rmsnorm", "worst/bound", "result");
  int failed = 0, skipped = 0, ran = 0;
  for (int i = 0; i < n; i++) {
    runs[i].t = ts[i];
    runs[i].results = results + (size_t)i * (size_t)ncombos;
    if (ts[i].usable) run_target(&runs[i], seed);
    if (!runs[i].ran) fprintf(table, "%-12s skipped: %s\n", ts[i].label, runs[i].t.reason);
    failed += runs[i].failed;
    skipped += !runs[i].ran;
    ran += runs[i].ran;
  }
  fprintf(table, "%d target%s verified, %d skipped: %d of %d combinations failed\n", ran, ran == 1 ? "" : "s", skipped, failed,
         ran * ncombos);
  int rc = failed || ran == 0 ? 1 : 0;
  if (json) {
    write_json(json, runs, n, seed);
    if (out_close("verify", json, json_path) != 0) rc = 1;
  }
  free(runs);
  free(results);
  free(combos);
  free(ts);
  return rc;
}
