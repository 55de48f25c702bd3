/* GGUF v2/v3 reader, written from the format's public description (ggml's
 * docs/gguf.md): a header (magic "GGUF", version, tensor count, metadata
 * count), typed key-value metadata, tensor infos (name, dimensions with
 * ne0 = elements per row first, ggml type, offset relative to the data
 * section), padding to general.alignment (default 32), then the data.
 * Everything read from the file is bounds-checked against what is left of
 * it before use; counts are bounded by the bytes that could hold them, so
 * no allocation exceeds the file's size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "model.h"

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGML_TYPE_F32 0
#define GGML_TYPE_F16 1
#define GGML_TYPE_BF16 30
#define GGML_TYPE_Q2_0 42
/* Nested arrays deeper than this are refused (ggml writes none). */
#define MAX_ARRAY_DEPTH 8

/* ggml's type ids as docs/gguf.md and ggml.h list them; ids whose support
 * ggml removed keep their old names so a message can still say what the
 * file holds. */
static const char *const ggml_type_names[] = {
    "F32",     "F16",     "Q4_0",    "Q4_1",     "Q4_2",     "Q4_3",       "Q5_0",       "Q5_1",       "Q8_0",
    "Q8_1",    "Q2_K",    "Q3_K",    "Q4_K",     "Q5_K",     "Q6_K",       "Q8_K",       "IQ2_XXS",    "IQ2_XS",
    "IQ3_XXS", "IQ1_S",   "IQ4_NL",  "IQ3_S",    "IQ2_S",    "IQ4_XS",     "I8",         "I16",        "I32",
    "I64",     "F64",     "IQ1_M",   "BF16",     "Q4_0_4_4", "Q4_0_4_8",   "Q4_0_8_8",   "TQ1_0",      "TQ2_0",
    "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4", "NVFP4", "Q1_0", "Q2_0",
};
#define GGML_TYPE_NAMES (sizeof ggml_type_names / sizeof ggml_type_names[0])

/* Block elements and bytes of the types whose layout is plain, so that
 * their byte extent is checked against the file too (ggml stores whole
 * blocks per row); {0, 0}: not known here, the extent is taken as is. */
static const struct {
  uint16_t elems, bytes;
} ggml_blocks[GGML_TYPE_NAMES] = {
    [0] = {1, 4},       [1] = {1, 2},       [2] = {32, 18},     [3] = {32, 20},   [6] = {32, 22},   [7] = {32, 24},
    [8] = {32, 34},     [9] = {32, 36},     [10] = {256, 84},   [11] = {256, 110}, [12] = {256, 144},
    [13] = {256, 176},  [14] = {256, 210},  [15] = {256, 292},  [24] = {1, 1},    [25] = {1, 2},    [26] = {1, 4},
    [27] = {1, 8},      [28] = {1, 8},      [30] = {1, 2},
};

/* Metadata value types: name and size (0: variable). */
enum { V_UINT8, V_INT8, V_UINT16, V_INT16, V_UINT32, V_INT32, V_FLOAT32, V_BOOL, V_STRING, V_ARRAY, V_UINT64,
       V_INT64, V_FLOAT64, V_COUNT };
static const struct {
  const char *name;
  size_t size;
} vtypes[V_COUNT] = {{"uint8", 1}, {"int8", 1},   {"uint16", 2}, {"int16", 2}, {"uint32", 4},
                     {"int32", 4}, {"float32", 4}, {"bool", 1},   {"string", 0}, {"array", 0},
                     {"uint64", 8}, {"int64", 8}, {"float64", 8}};

typedef struct rd {
  const uint8_t *p;
  size_t size, pos;
} rd;

static size_t left(const rd *r) { return r->size - r->pos; }

static qgemv_status truncated(const rd *r, const char *what) {
  return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF file of %zu bytes is truncated: it ends inside %s (at byte %zu)", r->size,
                 what, r->pos);
}

/* n bytes at the cursor, or NULL when fewer remain. */
static const uint8_t *take(rd *r, size_t n) {
  if (left(r) < n) return NULL;
  const uint8_t *p = r->p + r->pos;
  r->pos += n;
  return p;
}

static bool u32(rd *r, uint32_t *v) {
  const uint8_t *p = take(r, 4);
  return p && (*v = qg_le32(p), true);
}

static bool u64(rd *r, uint64_t *v) {
  const uint8_t *p = take(r, 8);
  return p && (*v = qg_le64(p), true);
}

/* A GGUF string: u64 length, then the bytes. */
static bool str(rd *r, const uint8_t **s, uint64_t *len) {
  return u64(r, len) && *len <= left(r) && (*s = take(r, (size_t)*len)) != NULL;
}

static qgemv_status skip_value(rd *r, uint32_t type, int depth);

static qgemv_status skip_array(rd *r, int depth, uint32_t *elem, uint64_t *count) {
  if (!u32(r, elem) || !u64(r, count)) return truncated(r, "an array header");
  if (*elem >= V_COUNT)
    return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF array at byte %zu has element type %u, which is not a GGUF type",
                   r->pos, *elem);
  if (*elem == V_ARRAY && depth + 2 > MAX_ARRAY_DEPTH) /* its elements would nest one level deeper */
    return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF arrays nested deeper than %d levels at byte %zu", MAX_ARRAY_DEPTH,
                   r->pos);
  size_t size = vtypes[*elem].size;
  /* the smallest an element can be: so a huge count fails at once */
  size_t least = size ? size : *elem == V_STRING ? 8 : 12;
  if (*count > left(r) / least) return truncated(r, "an array's elements");
  if (size) {
    take(r, (size_t)*count * size);
    return QGEMV_OK;
  }
  for (uint64_t i = 0; i < *count; i++) {
    qgemv_status s = skip_value(r, *elem, depth + 1);
    if (s != QGEMV_OK) return s;
  }
  return QGEMV_OK;
}

static qgemv_status skip_value(rd *r, uint32_t type, int depth) {
  const uint8_t *s;
  uint64_t len, count;
  uint32_t elem;
  if (type == V_STRING) return str(r, &s, &len) ? QGEMV_OK : truncated(r, "a string");
  if (type == V_ARRAY) return skip_array(r, depth, &elem, &count);
  return take(r, vtypes[type].size) ? QGEMV_OK : truncated(r, "a value");
}

/* One metadata pair into *kv; the alignment when it is general.alignment. */
static qgemv_status read_kv(qgemv_model *m, rd *r, qgemv_model_kv *kv, uint32_t *alignment) {
  const uint8_t *key, *p;
  uint64_t len;
  uint32_t type;
  if (!str(r, &key, &len)) return truncated(r, "a metadata key");
  if (len == 0 || len > 65535 || !qg_utf8_valid(key, (size_t)len))
    return qg_fail(QGEMV_ERR_BAD_DATA,
                   "GGUF metadata key ending at byte %zu is %s: keys are 1 to 65535 bytes of UTF-8 without NUL",
                   r->pos, len == 0 ? "empty" : len > 65535 ? "too long" : "not UTF-8");
  if (!(kv->key = qg_model_strdup(m, key, (size_t)len))) return qg_fail(QGEMV_ERR_NO_MEMORY, "GGUF: out of memory");
  if (!u32(r, &type)) return truncated(r, "a metadata value type");
  if (type >= V_COUNT)
    return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF metadata '%s' has value type %u, which is not a GGUF type", kv->key,
                   type);
  kv->type_name = vtypes[type].name;
  size_t start = r->pos;
  qgemv_status s = skip_value(r, type, 0);
  if (s != QGEMV_OK) return s;
  p = r->p + start;
  switch (type) {
  case V_UINT8: kv->type = QGEMV_VALUE_UINT, kv->u = p[0]; break;
  case V_BOOL:
    if (p[0] > 1)
      return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF metadata '%s' is a bool of value %u (0 or 1 only)", kv->key, p[0]);
    kv->type = QGEMV_VALUE_UINT, kv->u = p[0];
    break;
  case V_INT8: kv->type = QGEMV_VALUE_INT, kv->i = (int8_t)p[0]; break;
  case V_UINT16: kv->type = QGEMV_VALUE_UINT, kv->u = qg_le16(p); break;
  case V_INT16: kv->type = QGEMV_VALUE_INT, kv->i = (int16_t)qg_le16(p); break;
  case V_UINT32: kv->type = QGEMV_VALUE_UINT, kv->u = qg_le32(p); break;
  case V_INT32: kv->type = QGEMV_VALUE_INT, kv->i = (int32_t)qg_le32(p); break;
  case V_UINT64: kv->type = QGEMV_VALUE_UINT, kv->u = qg_le64(p); break;
  case V_INT64: kv->type = QGEMV_VALUE_INT, kv->i = (int64_t)qg_le64(p); break;
  case V_FLOAT32: kv->type = QGEMV_VALUE_FLOAT, kv->f = qg_le_f32(p); break;
  case V_FLOAT64: {
    uint64_t u = qg_le64(p);
    memcpy(&kv->f, &u, sizeof kv->f);
    kv->type = QGEMV_VALUE_FLOAT;
    break;
  }
  case V_STRING:
    kv->type = QGEMV_VALUE_STRING;
    kv->len = (size_t)qg_le64(p);
    if (!(kv->str = qg_model_strdup(m, p + 8, kv->len))) return qg_fail(QGEMV_ERR_NO_MEMORY, "GGUF: out of memory");
    break;
  default: /* V_ARRAY */
    kv->type = QGEMV_VALUE_ARRAY;
    kv->elem_type_name = vtypes[qg_le32(p)].name;
    kv->count = qg_le64(p + 4);
    break;
  }
  if (strcmp(kv->key, "general.alignment") == 0) {
    /* ggml itself accepts only a power of two */
    if (type != V_UINT32)
      return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF general.alignment is a %s, not a uint32", kv->type_name);
    if (kv->u == 0 || (kv->u & (kv->u - 1)) != 0)
      return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF general.alignment is %llu: it must be a power of two",
                     (unsigned long long)kv->u);
    *alignment = (uint32_t)kv->u;
  }
  return QGEMV_OK;
}

static int str_ptr_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static qgemv_status no_duplicate_keys(const qgemv_model *m) {
  if (m->nkv < 2) return QGEMV_OK;
  const char **keys = malloc((size_t)m->nkv * sizeof *keys);
  if (!keys) return qg_fail(QGEMV_ERR_NO_MEMORY, "GGUF: out of memory");
  for (int64_t i = 0; i < m->nkv; i++) keys[i] = m->kv[i].key;
  qsort(keys, (size_t)m->nkv, sizeof *keys, str_ptr_cmp);
  qgemv_status s = QGEMV_OK;
  for (int64_t i = 1; i < m->nkv && s == QGEMV_OK; i++)
    if (strcmp(keys[i - 1], keys[i]) == 0)
      s = qg_fail(QGEMV_ERR_BAD_DATA, "GGUF metadata key '%s' appears twice", keys[i]);
  free(keys);
  return s;
}

/* One tensor info; offset still relative to the data section. */
static qgemv_status read_tensor_info(qgemv_model *m, rd *r, qg_mtensor *t) {
  const uint8_t *name;
  uint64_t len, ne;
  uint32_t ndims, type;
  if (!str(r, &name, &len)) return truncated(r, "a tensor name");
  if (len == 0 || !qg_utf8_valid(name, (size_t)len))
    return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF tensor name ending at byte %zu is %s: names are UTF-8 without NUL",
                   r->pos, len == 0 ? "empty" : "not UTF-8");
  if (!(t->name = qg_model_strdup(m, name, (size_t)len))) return qg_fail(QGEMV_ERR_NO_MEMORY, "GGUF: out of memory");
  if (!u32(r, &ndims)) return truncated(r, "a tensor's dimension count");
  if (ndims == 0 || ndims > QGEMV_MODEL_MAX_DIMS)
    return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF tensor %s has %u dimensions (1 to %d are read)", t->name, ndims,
                   QGEMV_MODEL_MAX_DIMS);
  t->ndims = (int32_t)ndims;
  t->nelem = 1;
  for (uint32_t j = 0; j < ndims; j++) {
    if (!u64(r, &ne)) return truncated(r, "a tensor's dimensions");
    if (ne > INT64_MAX || __builtin_mul_overflow(t->nelem, ne, &t->nelem) || t->nelem > INT64_MAX)
      return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF tensor %s: its dimensions overflow a 64-bit element count", t->name);
    t->shape[ndims - 1 - j] = (int64_t)ne; /* ne0 (elements per row) is last in row-major order */
  }
  if (!u32(r, &type) || !u64(r, &t->offset)) return truncated(r, "a tensor's type and offset");
  t->ggml_type = type > INT32_MAX ? -1 : (int32_t)type;
  if (type < GGML_TYPE_NAMES) {
    t->type_name = ggml_type_names[type];
  } else {
    char buf[24];
    snprintf(buf, sizeof buf, "type %u", type);
    if (!(t->type_name = qg_model_strdup(m, buf, strlen(buf)))) return qg_fail(QGEMV_ERR_NO_MEMORY, "GGUF: out of memory");
  }
  return QGEMV_OK;
}

/* ---- where each tensor's bytes are, and what qgemv makes of them ---- */

typedef struct by_offset {
  uint64_t offset;
  int64_t index;
} by_offset;

static int by_offset_cmp(const void *a, const void *b) {
  uint64_t x = ((const by_offset *)a)->offset, y = ((const by_offset *)b)->offset;
  return (x > y) - (x < y);
}

/* span: the bytes from each tensor to the next one's data (by offset), or
 * to the end of the file. */
static qgemv_status set_spans(qgemv_model *m) {
  by_offset *o = malloc((size_t)m->nt * sizeof *o);
  if (!o) return qg_fail(QGEMV_ERR_NO_MEMORY, "GGUF: out of memory");
  for (int64_t i = 0; i < m->nt; i++) o[i] = (by_offset){m->t[i].offset, i};
  qsort(o, (size_t)m->nt, sizeof *o, by_offset_cmp);
  for (int64_t i = 0, next = 0; i < m->nt; i++) {
    while (next < m->nt && o[next].offset <= o[i].offset) next++;
    uint64_t end = next < m->nt ? o[next].offset : m->size;
    m->t[o[i].index].span = end - o[i].offset;
  }
  free(o);
  return QGEMV_OK;
}

/* Bytes of a Q2_0 matrix of group g; false when k is not a multiple of g
 * or the size overflows. */
static bool q2_size(int64_t n, int64_t k, int32_t g, uint64_t *bytes) {
  return k % g == 0 && !__builtin_mul_overflow((uint64_t)n, (uint64_t)(k / g), bytes) &&
         !__builtin_mul_overflow(*bytes, (uint64_t)(2 + g / 4), bytes);
}

static qgemv_status past_extent(const qg_mtensor *t, uint64_t need) {
  return qg_fail(QGEMV_ERR_BAD_DATA,
                 "GGUF tensor %s (%s) needs %llu bytes at file offset %llu, but only %llu lie before the next "
                 "tensor or the end of the file",
                 t->name, t->type_name, (unsigned long long)need, (unsigned long long)t->offset,
                 (unsigned long long)t->span);
}

/* Q2_0 (type 42): ggml's blocks are qgemv's Q2_0 layout; g64 (18-byte
 * blocks, mainline ggml) or g128 (34-byte blocks, the PrismML files) is
 * told by the extent: a group whose size fits the span with less than one
 * alignment of padding left over. */
static qgemv_status classify_q2(qg_mtensor *t, uint32_t alignment) {
  t->format = QGEMV_Q2_0;
  if (t->ndims != 2) {
    snprintf(t->note, sizeof t->note, "a Q2_0 tensor of %d dimensions: qgemv weights are matrices", t->ndims);
    return QGEMV_OK;
  }
  int64_t n = t->shape[0], k = t->shape[1];
  uint64_t size[2];
  bool fits[2], exact[2];
  static const int32_t groups[2] = {64, 128};
  for (int i = 0; i < 2; i++) {
    fits[i] = n > 0 && k > 0 && q2_size(n, k, groups[i], &size[i]) && size[i] <= t->span;
    exact[i] = fits[i] && t->span - size[i] < alignment;
  }
  if (!fits[0] && !fits[1]) {
    uint64_t need;
    if (n > 0 && k > 0 && k % 64 == 0 && q2_size(n, k, k % 128 == 0 ? 128 : 64, &need)) return past_extent(t, need);
    snprintf(t->note, sizeof t->note, "a Q2_0 tensor of %lld x %lld: n must be positive and k a positive multiple of 64",
             (long long)n, (long long)k);
    return QGEMV_OK;
  }
  t->use = QGEMV_USE_WEIGHT;
  t->group = fits[0] != fits[1] ? (fits[0] ? 64 : 128) : exact[0] != exact[1] ? (exact[0] ? 64 : 128) : 0;
  t->bytes = t->group ? size[t->group == 128] : t->span;
  snprintf(t->note, sizeof t->note, t->group ? "Q2_0 g%d (told by its byte extent)"
                                              : "Q2_0 whose byte extent fits g64 and g128 alike: name the group",
           (int)t->group);
  return QGEMV_OK;
}

/* Every other type: listed with what qgemv makes of it, and its extent
 * checked where its block layout is known. */
static qgemv_status classify(qg_mtensor *t, uint32_t alignment) {
  if (t->ggml_type == GGML_TYPE_Q2_0) return classify_q2(t, alignment);
  t->bytes = t->span;
  if (t->ggml_type < 0 || (size_t)t->ggml_type >= GGML_TYPE_NAMES) {
    snprintf(t->note, sizeof t->note, "ggml %s is unknown here and not a qgemv format", t->type_name);
    return QGEMV_OK;
  }
  unsigned elems = ggml_blocks[t->ggml_type].elems, bytes = ggml_blocks[t->ggml_type].bytes;
  if (elems != 0) {
    if (t->shape[t->ndims - 1] % elems != 0)
      return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF tensor %s (%s): rows of %lld values are not whole blocks of %u",
                     t->name, t->type_name, (long long)t->shape[t->ndims - 1], elems);
    uint64_t need = t->nelem / elems;
    if (__builtin_mul_overflow(need, (uint64_t)bytes, &need)) need = UINT64_MAX;
    if (need > t->span) return past_extent(t, need);
    t->bytes = need;
  }
  t->elem = t->ggml_type == GGML_TYPE_F32 ? QG_ELEM_F32 : t->ggml_type == GGML_TYPE_F16 ? QG_ELEM_F16
            : t->ggml_type == GGML_TYPE_BF16 ? QG_ELEM_BF16 : QG_ELEM_NONE;
  t->use = t->elem != QG_ELEM_NONE ? QGEMV_USE_FLOAT : QGEMV_USE_NONE;
  if (t->use == QGEMV_USE_FLOAT)
    snprintf(t->note, sizeof t->note, "%s values", t->type_name);
  else
    snprintf(t->note, sizeof t->note, "ggml type %s (%d) is not a qgemv format", t->type_name, (int)t->ggml_type);
  return QGEMV_OK;
}

qgemv_status qg_gguf_parse(qgemv_model *m) {
  rd r = {m->base, m->size, 4}; /* past the magic, checked by the caller */
  uint32_t version, alignment = GGUF_DEFAULT_ALIGNMENT;
  uint64_t nt, nkv;
  if (!u32(&r, &version)) return truncated(&r, "the header");
  if (version == 1)
    return qg_fail(QGEMV_ERR_UNSUPPORTED, "GGUF version 1 (32-bit counts) is not read: convert the file with a "
                                          "current llama.cpp (versions 2 and 3 are read)");
  if ((version == 0x02000000u || version == 0x03000000u))
    return qg_fail(QGEMV_ERR_UNSUPPORTED, "big-endian GGUF files are not read (this reader is little-endian)");
  if (version != 2 && version != 3)
    return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF version %u is unknown (versions 2 and 3 are read)", version);
  if (!u64(&r, &nt) || !u64(&r, &nkv)) return truncated(&r, "the header");
  /* a pair takes at least 13 bytes, a tensor info 24 */
  if (nkv > left(&r) / 13)
    return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF header claims %llu metadata pairs, more than its %zu bytes can hold",
                   (unsigned long long)nkv, m->size);
  if (nt > left(&r) / 24)
    return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF header claims %llu tensors, more than its %zu bytes can hold",
                   (unsigned long long)nt, m->size);
  m->kv = qg_model_alloc(m, (size_t)nkv * sizeof *m->kv);
  m->t = qg_model_alloc(m, (size_t)nt * sizeof *m->t);
  if (!m->kv || !m->t) return qg_fail(QGEMV_ERR_NO_MEMORY, "GGUF: out of memory for the tables");
  memset(m->kv, 0, (size_t)nkv * sizeof *m->kv);
  memset(m->t, 0, (size_t)nt * sizeof *m->t);
  qgemv_status s;
  for (uint64_t i = 0; i < nkv; i++, m->nkv++)
    if ((s = read_kv(m, &r, &m->kv[i], &alignment)) != QGEMV_OK) return s;
  if ((s = no_duplicate_keys(m)) != QGEMV_OK) return s;
  for (uint64_t i = 0; i < nt; i++, m->nt++)
    if ((s = read_tensor_info(m, &r, &m->t[i])) != QGEMV_OK) return s;
  uint64_t data = r.pos + (alignment - r.pos % alignment) % alignment;
  for (int64_t i = 0; i < m->nt; i++) {
    qg_mtensor *t = &m->t[i];
    if (t->offset % alignment != 0)
      return qg_fail(QGEMV_ERR_BAD_DATA, "GGUF tensor %s: offset %llu is not a multiple of the alignment %u",
                     t->name, (unsigned long long)t->offset, alignment);
    if (data > m->size || t->offset > m->size - data)
      return qg_fail(QGEMV_ERR_BAD_DATA,
                     "GGUF tensor %s: its data at offset %llu of the data section (from byte %llu) lies past the "
                     "end of the %zu-byte file",
                     t->name, (unsigned long long)t->offset, (unsigned long long)data, m->size);
    t->offset += data;
  }
  if ((s = set_spans(m)) != QGEMV_OK) return s;
  for (int64_t i = 0; i < m->nt; i++)
    if ((s = classify(&m->t[i], alignment)) != QGEMV_OK) return s;
  return QGEMV_OK;
}

qgemv_status qg_gguf_weight(qgemv_model *m, qg_mtensor *t, int32_t group, qgemv_weight_desc *out) {
  int64_t n = t->shape[0], k = t->shape[1];
  uint64_t size;
  if (group != 0 && group != 64 && group != 128)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "tensor %s: a Q2_0 group is 64 or 128 (or 0: as the file tells), not %d",
                   t->name, (int)group);
  if (group == 0 && t->group == 0)
    return qg_fail(QGEMV_ERR_INVALID_ARG,
                   "tensor %s: its byte extent (%llu) fits Q2_0 g64 and g128 alike: pass the group (64 for "
                   "mainline ggml files, 128 for PrismML/Bonsai files)",
                   t->name, (unsigned long long)t->span);
  if (group == 0) group = t->group;
  if (t->group != 0 && group != t->group)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "tensor %s: its byte extent (%llu) is Q2_0 g%d, not g%d", t->name,
                   (unsigned long long)t->span, (int)t->group, (int)group);
  if (!q2_size(n, k, group, &size) || size > t->span)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "tensor %s: Q2_0 g%d of %lld x %lld does not fit its byte extent (%llu)",
                   t->name, (int)group, (long long)n, (long long)k, (unsigned long long)t->span);
  *out = (qgemv_weight_desc){.format = QGEMV_Q2_0, .n = n, .k = k, .group = group,
                             .data = m->base + t->offset, .scales = NULL};
  return QGEMV_OK;
}
