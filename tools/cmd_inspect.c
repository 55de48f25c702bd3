/* qgemv inspect FILE: what a model file holds (metadata, tensors) and what
 * qgemv can use of it: weights it runs as they are, float matrices it can
 * quantize, and the rest with the reason; as text or JSON. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "opts.h"
#include "tool.h"

static void usage(FILE *f) {
  fprintf(f, "usage: qgemv inspect FILE [--json FILE]\n\n"
             "Lists what a model file (GGUF, or safetensors with plain or bitsandbytes NF4\n"
             "weights) holds: its metadata and every tensor with type, shape, bytes and\n"
             "what qgemv can do with it: 'weight' (runs as stored: GGUF Q2_0, bitsandbytes\n"
             "NF4), 'floats' (f32/f16/bf16: read, and quantize a matrix with bench/verify\n"
             "--format), 'part' (of a bitsandbytes weight) or 'no', with the reason.\n\n"
             "  --json FILE  also write it as JSON to FILE ('-': standard output, instead)\n"
             "  -h, --help   this help\n");
}

static const char *use_word(qgemv_model_use u) {
  static const char *const words[] = {"no", "weight", "floats", "part"};
  return (unsigned)u < 4 ? words[u] : "?";
}

/* The shape as "96x1024", outermost first. */
static void shape_text(const qgemv_model_tensor *t, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (int d = 0; d < t->ndims && len < size; d++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
}

/* A metadata value as one short line. */
static void value_text(const qgemv_model_kv *kv, char *buf, size_t size) {
  switch (kv->type) {
  case QGEMV_VALUE_UINT: snprintf(buf, size, "%llu", (unsigned long long)kv->u); break;
  case QGEMV_VALUE_INT: snprintf(buf, size, "%lld", (long long)kv->i); break;
  case QGEMV_VALUE_FLOAT: snprintf(buf, size, "%.9g", kv->f); break;
  case QGEMV_VALUE_STRING: {
    size_t n = 0;
    for (size_t i = 0; i < kv->len && n + 5 < size; i++) { /* control bytes escaped, long text cut */
      unsigned char c = (unsigned char)kv->str[i];
      n += (size_t)(c < 0x20 ? snprintf(buf + n, size - n, "\\x%02x", c) : snprintf(buf + n, size - n, "%c", c));
    }
    if (n + 5 >= size) snprintf(buf + n, size - n, "...");
    break;
  }
  default: snprintf(buf, size, "[%llu x %s]", (unsigned long long)kv->count, kv->elem_type_name);
  }
}

static void write_json(FILE *out, const char *path, const qgemv_model *m) {
  json_w j;
  json_init(&j, out);
  json_obj_begin(&j, NULL);
  json_str(&j, "file", path);
  json_str(&j, "kind", qgemv_model_file_kind(m) == QGEMV_MODEL_GGUF ? "gguf" : "safetensors");
  json_obj_begin(&j, "metadata");
  for (int64_t i = 0; i < qgemv_model_metadata_count(m); i++) {
    qgemv_model_kv kv;
    char v[256];
    qgemv_model_metadata(m, i, &kv);
    value_text(&kv, v, sizeof v);
    if (kv.type == QGEMV_VALUE_STRING)
      json_str(&j, kv.key, kv.str);
    else if (kv.type == QGEMV_VALUE_INT)
      json_int(&j, kv.key, kv.i);
    else if (kv.type == QGEMV_VALUE_UINT && kv.u <= INT64_MAX)
      json_int(&j, kv.key, (long long)kv.u);
    else if (kv.type == QGEMV_VALUE_FLOAT)
      json_num(&j, kv.key, kv.f);
    else /* arrays (as "[N x type]") and uint64 beyond int64 */
      json_str(&j, kv.key, v);
  }
  json_obj_end(&j);
  json_arr_begin(&j, "tensors");
  for (int64_t i = 0; i < qgemv_model_tensor_count(m); i++) {
    qgemv_model_tensor t;
    qgemv_model_tensor_info(m, i, &t);
    json_obj_begin(&j, NULL);
    json_str(&j, "name", t.name);
    json_str(&j, "type", t.type_name);
    if (t.ggml_type >= 0) json_int(&j, "ggml_type", t.ggml_type);
    json_arr_begin(&j, "shape");
    for (int d = 0; d < t.ndims; d++) json_int(&j, NULL, t.shape[d]);
    json_arr_end(&j);
    json_int(&j, "offset", (long long)t.offset);
    json_int(&j, "bytes", (long long)t.bytes);
    json_str(&j, "use", use_word(t.use));
    json_str(&j, "format", t.use == QGEMV_USE_WEIGHT ? format_label(t.format, t.group) : NULL);
    if (t.use == QGEMV_USE_WEIGHT) json_int(&j, "group", t.group);
    json_str(&j, "note", t.note);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_obj_end(&j);
}

static void print_text(FILE *f, const char *path, const qgemv_model *m) {
  fprintf(f, "%s: %s, %lld tensors, %lld metadata entries\n", path,
          qgemv_model_file_kind(m) == QGEMV_MODEL_GGUF ? "GGUF" : "safetensors", (long long)qgemv_model_tensor_count(m),
          (long long)qgemv_model_metadata_count(m));
  for (int64_t i = 0; i < qgemv_model_metadata_count(m); i++) {
    qgemv_model_kv kv;
    char v[96];
    qgemv_model_metadata(m, i, &kv);
    value_text(&kv, v, sizeof v);
    fprintf(f, "  %-40s %-8s %s\n", kv.key, kv.type_name, v);
  }
  fprintf(f, "\n%-44s %-6s %-14s %12s  %-7s %s\n", "tensor", "type", "shape", "bytes", "use", "what qgemv makes of it");
  int64_t counts[4] = {0};
  double weight_bytes = 0;
  for (int64_t i = 0; i < qgemv_model_tensor_count(m); i++) {
    qgemv_model_tensor t;
    char shape[64];
    qgemv_model_tensor_info(m, i, &t);
    shape_text(&t, shape, sizeof shape);
    fprintf(f, "%-44s %-6s %-14s %12llu  %-7s %s\n", t.name, t.type_name, shape, (unsigned long long)t.bytes,
            use_word(t.use), t.note);
    counts[t.use]++;
    if (t.use == QGEMV_USE_WEIGHT) weight_bytes += (double)t.bytes;
  }
  fprintf(f, "\n%lld weights qgemv runs as stored (%.1f MB), %lld float tensors (a matrix can be quantized:\n"
             "--format), %lld parts of weights, %lld tensors qgemv cannot use\n",
          (long long)counts[QGEMV_USE_WEIGHT], weight_bytes / 1e6, (long long)counts[QGEMV_USE_FLOAT],
          (long long)counts[QGEMV_USE_PART], (long long)counts[QGEMV_USE_NONE]);
}

int cmd_inspect(int argc, char **argv) {
  const char *path = NULL, *json_path = NULL;
  opt_iter it;
  opt_init(&it, "inspect", argc, argv);
  while (opt_next(&it)) {
    if (opt_is(&it, "--help") || opt_is(&it, "-h")) {
      usage(stdout);
      return 0;
    } else if (opt_is(&it, "--json")) {
      if (!(json_path = opt_value(&it))) return EXIT_USAGE;
    } else if (it.argv[it.i][0] != '-' && !path) {
      path = it.argv[it.i];
    } else {
      return opt_unknown(&it);
    }
  }
  if (!path) {
    fprintf(stderr, "qgemv inspect: name a model file (qgemv inspect FILE)\n");
    return EXIT_USAGE;
  }
  qgemv_model *m;
  qgemv_status s = qgemv_model_open(path, &m);
  if (s != QGEMV_OK) return report_failure("inspect", s), 1;
  FILE *json = json_path ? out_open("inspect", json_path) : NULL;
  int rc = json_path && !json ? 1 : 0;
  if (!json || json != stdout) print_text(stdout, path, m);
  if (json) {
    write_json(json, path, m);
    if (out_close("inspect", json, json_path) != 0) rc = 1;
  }
  qgemv_model_close(m);
  return rc;
}
