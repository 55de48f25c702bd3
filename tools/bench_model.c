/* qgemv bench --model FILE: the file's layers at their real shapes, timed
 * on the file's own data (weights as stored, or float matrices quantized
 * with qgemv_quantize), grouped by transformer block for the step sums. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "opts.h"

/* The block a tensor belongs to: "blk.N" (GGUF) or "...layers.N" (Hugging
 * Face); its length in name, 0 when none. */
static size_t block_prefix(const char *name) {
  static const char *const marks[] = {"blk.", "layers."};
  for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
    const char *p = strstr(name, marks[i]);
    if (!p || (p != name && p[-1] != '.')) continue;
    const char *d = p + strlen(marks[i]);
    const char *e = d;
    while (isdigit((unsigned char)*e)) e++;
    if (e > d && *e == '.') return (size_t)(e - name);
  }
  return 0;
}

static bool suits_every_format(const bench_opts *o, int64_t n, int64_t k) {
  for (int f = 0; f < o->nformats; f++)
    if (qgemv_data_bytes(o->formats[f].format, n, k, o->formats[f].group) == 0) return false;
  return true;
}

static int add_layer(bench_opts *o, const qgemv_model_tensor *t, bool own) {
  if (o->nlayers >= BENCH_MAX_LAYERS) {
    fprintf(stderr, "qgemv bench: %s has more than %d layers to time\n", o->model_path, BENCH_MAX_LAYERS);
    return EXIT_USAGE;
  }
  size_t block = block_prefix(t->name);
  bench_source *src = &o->sources[o->nlayers];
  bench_layer *l = &o->layers[o->nlayers++];
  *src = (bench_source){.tensor = strdup(t->name), .own = own};
  format_info_of(t->format, t->group, &src->format);
  *l = (bench_layer){.preset = block ? strndup(t->name, block) : NULL, .name = strdup(t->name + (block ? block + 1 : 0)),
                     .n = t->shape[0], .k = t->shape[1]};
  if (!src->tensor || !l->name || (block && !l->preset)) {
    fprintf(stderr, "qgemv bench: out of memory\n");
    return 1;
  }
  return -1;
}

int bench_model_layers(bench_opts *o) {
  qgemv_status s = qgemv_model_open(o->model_path, &o->model);
  if (s != QGEMV_OK) return report_failure("bench: --model", s), 1;
  int added = 0, rc = -1;
  for (int64_t i = 0; rc < 0 && i < qgemv_model_tensor_count(o->model); i++) {
    qgemv_model_tensor t;
    qgemv_model_tensor_info(o->model, i, &t);
    if (t.ndims != 2) continue;
    if (t.use == QGEMV_USE_WEIGHT && t.group == 0) {
      fprintf(stderr, "qgemv bench: skipped %s: %s\n", t.name, t.note);
    } else if (t.use == QGEMV_USE_WEIGHT) {
      rc = add_layer(o, &t, true), added++;
    } else if (t.use == QGEMV_USE_FLOAT && o->formats_given) {
      if (suits_every_format(o, t.shape[0], t.shape[1]))
        rc = add_layer(o, &t, false), added++;
      else
        fprintf(stderr, "qgemv bench: skipped %s (%lldx%lld): not every --format takes k = %lld\n", t.name,
                (long long)t.shape[0], (long long)t.shape[1], (long long)t.shape[1]);
    }
  }
  if (rc < 0 && added == 0) {
    fprintf(stderr, "qgemv bench: %s holds no 2-D weight qgemv runs as stored%s (qgemv inspect lists it)\n",
            o->model_path, o->formats_given ? " and no float matrix for --format" : "; --format quantizes float ones");
    rc = 1;
  }
  return rc;
}

int bench_model_weight(qgemv_ctx *ctx, const bench_opts *o, uint64_t working_set, const bench_layer *l,
                       qgemv_format_info f, bench_weight *out) {
  const bench_source *src = layer_source(o, l);
  qgemv_weight_desc d;
  qgemv_status s;
  if (src->own) {
    if ((s = qgemv_model_weight(o->model, src->tensor, f.group, &d)) == QGEMV_OK)
      return bench_weight_upload_desc(ctx, working_set, bench_max_m(o), &d, out);
  } else { /* a float matrix: read, quantize, upload */
    size_t count = (size_t)l->n * (size_t)l->k, nscales = qgemv_scale_count(f.format, l->n, l->k, f.group);
    float *w = malloc(count * sizeof *w), *scales = nscales ? malloc(nscales * sizeof *scales) : NULL;
    void *data = malloc(qgemv_data_bytes(f.format, l->n, l->k, f.group));
    s = !w || !data || (nscales && !scales) ? QGEMV_ERR_NO_MEMORY : QGEMV_OK;
    if (s == QGEMV_OK && (s = qgemv_model_read_f32(o->model, src->tensor, w, count)) == QGEMV_OK &&
        (s = qgemv_quantize(f.format, l->n, l->k, f.group, w, data, scales)) == QGEMV_OK) {
      d = (qgemv_weight_desc){f.format, l->n, l->k, f.group, data, scales};
      bench_weight_upload_desc(ctx, working_set, bench_max_m(o), &d, out);
    }
    free(w);
    free(scales);
    free(data);
    if (s == QGEMV_OK) return out->ws ? 0 : -1;
  }
  *out = (bench_weight){.n = l->n, .k = l->k, .format = f};
  snprintf(out->error, sizeof out->error, "%s: %s: %s", src->tensor, qgemv_status_str(s),
           s == QGEMV_ERR_NO_MEMORY ? "out of host memory" : qgemv_last_error());
  return -1;
}

void bench_model_close(bench_opts *o) {
  for (int i = 0; i < o->nlayers; i++) {
    if (!o->sources[i].tensor) continue;
    free((char *)o->sources[i].tensor);
    free((char *)o->layers[i].preset);
    free((char *)o->layers[i].name);
    o->sources[i].tensor = NULL;
  }
  qgemv_model_close(o->model);
  o->model = NULL;
}
