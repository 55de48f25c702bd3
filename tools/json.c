/* A small streaming JSON writer (see json.h). */
#include <math.h>

#include "json.h"

void json_init(json_w *j, FILE *f) {
  j->f = f;
  j->depth = 0;
  j->has_items[0] = false;
}

static void put_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\t': fputs("\\t", f); break;
    case '\r': fputs("\\r", f); break;
    default:
      if (*p < 0x20)
        fprintf(f, "\\u%04x", *p);
      else
        fputc(*p, f);
    }
  }
  fputc('"', f);
}

/* The comma, newline, indentation and "key": that precede every item. */
static void item(json_w *j, const char *key) {
  if (j->depth > 0) {
    fputs(j->has_items[j->depth] ? ",\n" : "\n", j->f);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
  }
  j->has_items[j->depth] = true;
  if (key) {
    put_string(j->f, key);
    fputs(": ", j->f);
  }
}

static void open_scope(json_w *j, const char *key, char c) {
  item(j, key);
  fputc(c, j->f);
  j->has_items[++j->depth] = false; /* the tool nests far less than JSON_MAX_DEPTH */
}

static void close_scope(json_w *j, char c) {
  bool had = j->has_items[j->depth];
  if (j->depth > 0) j->depth--;
  if (had) {
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
  }
  fputc(c, j->f);
  if (j->depth == 0) fputc('\n', j->f);
}

void json_obj_begin(json_w *j, const char *key) { open_scope(j, key, '{'); }
void json_obj_end(json_w *j) { close_scope(j, '}'); }
void json_arr_begin(json_w *j, const char *key) { open_scope(j, key, '['); }
void json_arr_end(json_w *j) { close_scope(j, ']'); }

void json_str(json_w *j, const char *key, const char *v) {
  item(j, key);
  if (v)
    put_string(j->f, v);
  else
    fputs("null", j->f);
}

void json_num(json_w *j, const char *key, double v) {
  item(j, key);
  if (isfinite(v))
    fprintf(j->f, "%.10g", v);
  else
    fputs("null", j->f);
}

void json_int(json_w *j, const char *key, long long v) {
  item(j, key);
  fprintf(j->f, "%lld", v);
}

void json_bool(json_w *j, const char *key, bool v) {
  item(j, key);
  fputs(v ? "true" : "false", j->f);
}

void json_null(json_w *j, const char *key) {
  item(j, key);
  fputs("null", j->f);
}

void json_device_info(json_w *j, const char *key, const qgemv_device_info *d) {
  json_obj_begin(j, key);
  json_str(j, "backend", d->backend);
  json_int(j, "index", d->index);
  json_str(j, "name", d->name);
  if (d->compute_major) {
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->compute_major, d->compute_minor);
    json_str(j, "compute_capability", cc);
  } else {
    json_null(j, "compute_capability");
  }
  json_int(j, "units", d->units);
  json_int(j, "threads", d->threads);
  json_int(j, "memory_bytes", (long long)d->memory_bytes);
  if (d->peak_bandwidth_gbs > 0)
    json_num(j, "peak_bandwidth_gbs", d->peak_bandwidth_gbs);
  else
    json_null(j, "peak_bandwidth_gbs");
  json_int(j, "llc_bytes", (long long)d->llc_bytes);
  json_str(j, "isa", d->isa[0] ? d->isa : NULL);
  json_str(j, "locality", d->locality);
  json_obj_end(j);
}
