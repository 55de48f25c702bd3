/* qgemv bench: the JSON record (every figure with the machine, library
 * version, commit and command, as DESIGN.md section 9 asks). */
#include <math.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include "bench.h"
#include "json.h"

/* The timing and size fields of a measurement, into the open object. */
static void measure_fields(json_w *j, const bench_measure *m) {
  bool timed = m->ok && m->t.samples > 0; /* a library baseline gives the median only */
  json_num(j, "median_s", m->ok ? m->t.median : NAN);
  json_num(j, "min_s", timed ? m->t.min : NAN);
  json_num(j, "max_s", timed ? m->t.max : NAN);
  json_int(j, "samples", m->t.samples);
  json_int(j, "calls", m->t.calls);
  json_num(j, "bytes", m->ok ? m->bytes : NAN);
  json_num(j, "gbs", measure_gbs(m));
  json_int(j, "copies", m->copies);
  json_int(j, "working_set_bytes", (long long)m->working_set);
}

static void write_row(json_w *j, const bench_run *run, const bench_row *r) {
  json_obj_begin(j, NULL);
  json_str(j, "preset", r->layer->preset);
  json_str(j, "layer", r->layer->name);
  json_int(j, "n", r->layer->n);
  json_int(j, "k", r->layer->k);
  json_str(j, "format", r->format.name);
  json_str(j, "format_label", r->format.label);
  json_int(j, "group", r->format.group);
  json_str(j, "dtype", dtype_label(r->dtype));
  json_int(j, "m", r->m);
  json_bool(j, "rmsnorm", run->o->rmsnorm);
  json_bool(j, "ok", r->q.ok);
  json_str(j, "error", r->q.ok ? NULL : r->q.error);
  json_str(j, "same_as", r->same_as >= 0 ? run->rows[r->same_as].layer->name : NULL);
  measure_fields(j, &r->q);
  json_num(j, "pct_read", row_pct_read(run, r));
  const bench_measure *b = row_baseline(run, r);
  if (b) {
    json_obj_begin(j, "baseline");
    json_str(j, "name", b->name);
    json_bool(j, "present", b->ok);
    json_str(j, "reason", b->ok ? NULL : b->error);
    measure_fields(j, b);
    json_obj_end(j);
  } else {
    json_null(j, "baseline");
  }
  json_num(j, "speedup", row_speedup(run, r));
  json_obj_end(j);
}

static void write_steps(json_w *j, const bench_run *run) {
  bench_step steps[BENCH_MAX_STEPS];
  int n = bench_steps(run, steps, BENCH_MAX_STEPS);
  json_arr_begin(j, "steps");
  for (int i = 0; i < n; i++) {
    const bench_step *s = &steps[i];
    json_obj_begin(j, NULL);
    json_str(j, "preset", s->preset);
    json_str(j, "format", s->format.name);
    json_str(j, "dtype", dtype_label(s->dtype));
    json_int(j, "m", s->m);
    json_int(j, "layers", s->layers);
    json_num(j, "seconds", s->complete ? s->seconds : NAN);
    json_num(j, "gbs", s->complete && s->seconds > 0 ? s->bytes / s->seconds / 1e9 : NAN);
    json_num(j, "dense_seconds", s->dense_complete ? s->dense_seconds : NAN);
    json_num(j, "speedup", s->complete && s->dense_complete && s->seconds > 0 ? s->dense_seconds / s->seconds : NAN);
    json_obj_end(j);
  }
  json_arr_end(j);
}

static void write_machine(json_w *j, const bench_run *run) {
  json_obj_begin(j, "machine");
  json_device_info(j, "device", &run->info);
  json_obj_begin(j, "host");
  struct utsname u;
  bool have = uname(&u) == 0;
  json_str(j, "os", have ? u.sysname : NULL);
  json_str(j, "release", have ? u.release : NULL);
  json_str(j, "arch", have ? u.machine : NULL);
  json_num(j, "load_average_1m", run->load_avg >= 0 ? run->load_avg : NAN);
  json_obj_end(j);
  json_obj_end(j);
}

void bench_write_json(FILE *f, const bench_run *run) {
  const bench_opts *o = run->o;
  json_w j;
  json_init(&j, f);
  json_obj_begin(&j, NULL);
  json_str(&j, "tool", "qgemv bench");
  json_int(&j, "schema", 1);
  json_str(&j, "version", qgemv_version());
  json_str(&j, "build", qgemv_build_config());
  const char *commit = getenv("QGEMV_BENCH_COMMIT");
  json_str(&j, "commit", commit && *commit ? commit : NULL);
  json_str(&j, "command", tool_command);
  json_str(&j, "started", run->started);
  write_machine(&j, run);
  json_obj_begin(&j, "environment");
  for (int i = 0; i < tool_env_var_count; i++) json_str(&j, tool_env_vars[i], getenv(tool_env_vars[i]));
  json_obj_end(&j);
  json_num(&j, "read_bandwidth_gbs", run->read_gbs);
  json_num(&j, "read_bandwidth_end_gbs", run->read_gbs_end); /* null until the rows are done */
  json_obj_begin(&j, "options");
  json_num(&j, "min_time_s", o->iters ? NAN : o->min_time);
  if (o->iters)
    json_int(&j, "iters", o->iters);
  else
    json_null(&j, "iters");
  json_int(&j, "working_set_bytes", (long long)run->working_set);
  json_bool(&j, "rmsnorm", o->rmsnorm);
  json_bool(&j, "baseline", o->baseline);
  json_bool(&j, "graph", o->graph);
  json_obj_end(&j);
  /* rewritten after every row: the rows so far, and whether that is all */
  json_bool(&j, "finished", run->done == run->nrows);
  json_arr_begin(&j, "rows");
  for (int i = 0; i < run->done; i++) write_row(&j, run, &run->rows[i]);
  json_arr_end(&j);
  write_steps(&j, run);
  json_obj_end(&j);
}
