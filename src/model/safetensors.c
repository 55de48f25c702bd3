/* safetensors reader: an 8-byte little-endian header length N, N bytes of
 * JSON ({"NAME": {"dtype": "F16", "shape": [..], "data_offsets": [b, e]},
 * "__metadata__": {"key": "string"}}, offsets relative to the byte after
 * the header), then the data. The JSON is parsed by jansson (Debian's
 * libjansson-dev): it reads a length-delimited buffer, rejects duplicate
 * keys (JSON_REJECT_DUPLICATES) and malformed UTF-8, keeps integers in 64
 * bits (offsets beyond 2^53 stay exact, unlike a double-based parser) and
 * reports the line and column of an error. Without jansson the build keeps
 * GGUF and refuses safetensors with a message saying so. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "model.h"

#ifdef QG_HAVE_JANSSON
#include <jansson.h>

/* safetensors' own reader refuses larger headers, so real files have none */
#define MAX_HEADER (100u << 20)

static const struct {
  const char *name;
  unsigned size;
  qg_elem elem;
} dtypes[] = {{"F32", 4, QG_ELEM_F32}, {"F16", 2, QG_ELEM_F16}, {"BF16", 2, QG_ELEM_BF16}, {"F64", 8, 0},
              {"U8", 1, 0},  {"I8", 1, 0},  {"BOOL", 1, 0}, {"I16", 2, 0}, {"U16", 2, 0}, {"I32", 4, 0},
              {"U32", 4, 0}, {"I64", 8, 0}, {"U64", 8, 0},  {"F8_E4M3", 1, 0}, {"F8_E5M2", 1, 0},
              {"F8_E8M0", 1, 0}};

static qgemv_status oom(void) { return qg_fail(QGEMV_ERR_NO_MEMORY, "safetensors: out of memory"); }

/* A JSON integer in [0, max], into *v. */
static bool json_u64(const json_t *j, uint64_t max, uint64_t *v) {
  if (!json_is_integer(j) || json_integer_value(j) < 0 || (uint64_t)json_integer_value(j) > max) return false;
  *v = (uint64_t)json_integer_value(j);
  return true;
}

static qgemv_status bad_entry(const char *name, const char *what) {
  return qg_fail(QGEMV_ERR_BAD_DATA, "safetensors tensor '%s': %s", name, what);
}

static qgemv_status read_entry(qgemv_model *m, const char *name, const json_t *e, uint64_t data_start, qg_mtensor *t) {
  if (name[0] == '\0') return qg_fail(QGEMV_ERR_BAD_DATA, "safetensors: a tensor has an empty name");
  if (!(t->name = qg_model_strdup(m, name, strlen(name)))) return oom();
  const json_t *dtype = json_object_get(e, "dtype"), *shape = json_object_get(e, "shape"),
               *offs = json_object_get(e, "data_offsets");
  if (!json_is_object(e) || !json_is_string(dtype) || !json_is_array(shape) || !json_is_array(offs))
    return bad_entry(name, "needs \"dtype\" (a string), \"shape\" and \"data_offsets\" (arrays)");
  size_t ndims = json_array_size(shape);
  if (ndims > QGEMV_MODEL_MAX_DIMS) return bad_entry(name, "has more than 8 dimensions");
  t->ndims = (int32_t)ndims;
  t->nelem = 1;
  for (size_t j = 0; j < ndims; j++) {
    uint64_t d;
    if (!json_u64(json_array_get(shape, j), INT64_MAX, &d) || __builtin_mul_overflow(t->nelem, d, &t->nelem) ||
        t->nelem > INT64_MAX)
      return bad_entry(name, "its shape is not a list of non-negative integers with a 64-bit element count");
    t->shape[j] = (int64_t)d;
  }
  uint64_t b, end, data_size = m->size - data_start;
  if (json_array_size(offs) != 2 || !json_u64(json_array_get(offs, 0), data_size, &b) ||
      !json_u64(json_array_get(offs, 1), data_size, &end) || b > end) {
    char why[160];
    snprintf(why, sizeof why, "its data_offsets are not [begin, end] within the %llu data bytes of the file",
             (unsigned long long)data_size);
    return bad_entry(name, why);
  }
  t->ggml_type = -1;
  t->offset = data_start + b;
  t->span = t->bytes = end - b;
  const char *dt = json_string_value(dtype);
  size_t d = 0, nd = sizeof dtypes / sizeof dtypes[0];
  while (d < nd && strcmp(dtypes[d].name, dt) != 0) d++;
  if (d == nd) {
    if (!(t->type_name = qg_model_strdup(m, dt, strlen(dt)))) return oom();
    snprintf(t->note, sizeof t->note, "dtype %.40s is not read by qgemv", dt);
    return QGEMV_OK;
  }
  t->type_name = dtypes[d].name;
  uint64_t need;
  if (__builtin_mul_overflow(t->nelem, (uint64_t)dtypes[d].size, &need) || need != t->bytes) {
    char why[160];
    snprintf(why, sizeof why, "its data_offsets span %llu bytes, but %llu %s values need %llu",
             (unsigned long long)t->bytes, (unsigned long long)t->nelem, dt, (unsigned long long)need);
    return bad_entry(name, why);
  }
  t->elem = dtypes[d].elem;
  if (t->elem != QG_ELEM_NONE) {
    t->use = QGEMV_USE_FLOAT;
    snprintf(t->note, sizeof t->note, "%s values", dt);
  } else {
    snprintf(t->note, sizeof t->note, "dtype %s is not a qgemv format", dt);
  }
  return QGEMV_OK;
}

static qgemv_status read_metadata(qgemv_model *m, const json_t *meta) {
  if (!json_is_object(meta))
    return qg_fail(QGEMV_ERR_BAD_DATA, "safetensors: \"__metadata__\" is not an object of strings");
  m->kv = qg_model_alloc(m, json_object_size(meta) * sizeof *m->kv);
  if (!m->kv) return oom();
  const char *key;
  const json_t *v;
  json_object_foreach((json_t *)meta, key, v) {
    if (!json_is_string(v))
      return qg_fail(QGEMV_ERR_BAD_DATA, "safetensors: __metadata__ '%s' is not a string", key);
    qgemv_model_kv *kv = &m->kv[m->nkv++];
    *kv = (qgemv_model_kv){.type = QGEMV_VALUE_STRING, .type_name = "string", .len = json_string_length(v)};
    if (!(kv->key = qg_model_strdup(m, key, strlen(key))) || !(kv->str = qg_model_strdup(m, json_string_value(v), kv->len)))
      return oom();
  }
  return QGEMV_OK;
}

static int by_offset(const void *a, const void *b) {
  const qg_mtensor *x = a, *y = b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

static qgemv_status read_header(qgemv_model *m, const json_t *root, uint64_t data_start) {
  if (!json_is_object(root)) return qg_fail(QGEMV_ERR_BAD_DATA, "safetensors header is not a JSON object");
  size_t count = json_object_size(root);
  m->t = qg_model_alloc(m, count * sizeof *m->t);
  if (!m->t) return oom();
  memset(m->t, 0, count * sizeof *m->t);
  const char *key;
  const json_t *v;
  qgemv_status s;
  json_object_foreach((json_t *)root, key, v) {
    if (strcmp(key, "__metadata__") == 0)
      s = read_metadata(m, v);
    else
      s = read_entry(m, key, v, data_start, &m->t[m->nt++]);
    if (s != QGEMV_OK) return s;
  }
  /* file order; tensors must not share bytes */
  qsort(m->t, (size_t)m->nt, sizeof *m->t, by_offset);
  for (int64_t i = 1; i < m->nt; i++)
    if (m->t[i].offset < m->t[i - 1].offset + m->t[i - 1].bytes)
      return qg_fail(QGEMV_ERR_BAD_DATA, "safetensors tensors '%s' and '%s' overlap", m->t[i - 1].name,
                     m->t[i].name);
  return QGEMV_OK;
}

qgemv_status qg_st_parse(qgemv_model *m) {
  uint64_t hlen = qg_le64(m->base); /* the caller checked it fits the file */
  if (hlen > MAX_HEADER)
    return qg_fail(QGEMV_ERR_BAD_DATA, "safetensors header of %llu bytes is larger than the 100 MiB limit",
                   (unsigned long long)hlen);
  json_error_t err;
  json_t *root = json_loadb((const char *)m->base + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &err);
  if (!root)
    return qg_fail(QGEMV_ERR_BAD_DATA, "safetensors header (%llu bytes of JSON): %s (line %d, column %d)",
                   (unsigned long long)hlen, err.text, err.line, err.column);
  qgemv_status s = read_header(m, root, 8 + hlen);
  json_decref(root);
  return s;
}

/* ---- bitsandbytes quant_state (the JSON stored as a uint8 tensor) ---- */

static const char state_suffix[] = ".quant_state.bitsandbytes__";

static void part_index(const qgemv_model *m, const char *base, const char *part, int64_t *out) {
  char name[1024];
  *out = -1;
  if ((size_t)snprintf(name, sizeof name, "%s.%s", base, part) < sizeof name) *out = qg_model_lookup(m, name);
}

/* Fills b from the quant_state JSON; "" or why it cannot be read. */
static void read_state(const qg_mtensor *st, const uint8_t *bytes, qg_bnb *b, char *why, size_t size) {
  why[0] = '\0';
  if (strcmp(st->type_name, "U8") != 0) {
    snprintf(why, size, "its quant_state is %s, not the uint8 bytes of a JSON object", st->type_name);
    return;
  }
  json_error_t err;
  json_t *j = json_loadb((const char *)bytes, (size_t)st->bytes, JSON_REJECT_DUPLICATES, &err);
  if (!j) {
    snprintf(why, size, "its quant_state is not JSON: %.100s", err.text);
    return;
  }
  const json_t *qt = json_object_get(j, "quant_type"), *bs = json_object_get(j, "blocksize"),
               *dt = json_object_get(j, "dtype"), *shape = json_object_get(j, "shape"),
               *nbs = json_object_get(j, "nested_blocksize"), *noff = json_object_get(j, "nested_offset");
  uint64_t v;
  if (!json_is_string(qt) || !json_is_integer(bs) || !json_is_array(shape) || json_array_size(shape) > 2) {
    snprintf(why, size, "its quant_state lacks quant_type, blocksize or a shape of at most 2 dimensions");
  } else {
    snprintf(b->quant_type, sizeof b->quant_type, "%s", json_string_value(qt));
    snprintf(b->dtype, sizeof b->dtype, "%s", json_is_string(dt) ? json_string_value(dt) : "?");
    b->blocksize = json_integer_value(bs);
    b->ndims = (int32_t)json_array_size(shape);
    for (int32_t d = 0; d < b->ndims && !why[0]; d++) {
      if (!json_u64(json_array_get(shape, (size_t)d), INT64_MAX, &v))
        snprintf(why, size, "its quant_state shape is not a list of non-negative integers");
      b->shape[d] = (int64_t)v;
    }
    b->nested = noff != NULL;
    if (b->nested && (!json_is_number(noff) || !json_u64(nbs, INT64_MAX, &v) || v == 0))
      snprintf(why, size, "its quant_state has nested_offset without a number and a positive nested_blocksize");
    if (b->nested && !why[0]) {
      b->nested_blocksize = (int64_t)v;
      b->nested_offset = (float)json_number_value(noff);
    }
  }
  json_decref(j);
}

qgemv_status qg_st_classify(qgemv_model *m) {
  for (int64_t i = 0; i < m->nt; i++) {
    qg_mtensor *st = &m->t[i];
    const char *suffix = strstr(st->name, state_suffix);
    if (!suffix || strchr(suffix + sizeof state_suffix - 1, '.')) continue;
    st->use = QGEMV_USE_PART;
    char base[1024];
    size_t blen = (size_t)(suffix - st->name);
    int64_t w = blen < sizeof base ? (memcpy(base, st->name, blen), base[blen] = '\0', qg_model_lookup(m, base)) : -1;
    if (w < 0) {
      snprintf(st->note, sizeof st->note, "a bitsandbytes quant_state whose weight is missing");
      continue;
    }
    qg_mtensor *t = &m->t[w];
    qg_bnb *b = qg_model_alloc(m, sizeof *b);
    if (!b) return oom();
    memset(b, 0, sizeof *b);
    b->state = i;
    part_index(m, base, "absmax", &b->absmax);
    part_index(m, base, "quant_map", &b->quant_map);
    part_index(m, base, "nested_absmax", &b->nested_absmax);
    part_index(m, base, "nested_quant_map", &b->nested_quant_map);
    const int64_t parts[] = {b->absmax, b->quant_map, b->nested_absmax, b->nested_quant_map};
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
      if (parts[p] < 0) continue;
      m->t[parts[p]].use = QGEMV_USE_PART;
      snprintf(m->t[parts[p]].note, sizeof m->t[parts[p]].note, "part of bitsandbytes weight %.120s", base);
    }
    snprintf(st->note, sizeof st->note, "part of bitsandbytes weight %.120s", base);
    t->bnb = b;
    t->use = QGEMV_USE_NONE;
    read_state(st, m->base + st->offset, b, t->note, sizeof t->note);
    if (!t->note[0]) qg_bnb_classify(m, t);
  }
  return QGEMV_OK;
}

#else /* no jansson */

qgemv_status qg_st_parse(qgemv_model *m) {
  (void)m;
  return qg_fail(QGEMV_ERR_UNSUPPORTED,
                 "this qgemv was built without jansson, the JSON library that reads safetensors headers: install "
                 "libjansson-dev and configure again (GGUF files are read either way)");
}

qgemv_status qg_st_classify(qgemv_model *m) {
  (void)m;
  return QGEMV_OK;
}

#endif
