/* qgemv_model: opening (mmap), the tensor and metadata tables, reading
 * floats, and weight descriptors (dispatched to the file kind's reader). */
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"

/* ---- the arena: every string and table of a model, freed at once ---- */

struct qg_chunk {
  qg_chunk *next;
  max_align_t data[];
};

void *qg_model_alloc(qgemv_model *m, size_t bytes) {
  if (bytes > SIZE_MAX - sizeof(qg_chunk)) return NULL;
  qg_chunk *c = malloc(sizeof *c + (bytes ? bytes : 1));
  if (!c) return NULL;
  c->next = m->arena;
  m->arena = c;
  return c->data;
}

char *qg_model_strdup(qgemv_model *m, const void *p, size_t len) {
  if (len == SIZE_MAX) return NULL;
  char *s = qg_model_alloc(m, len + 1);
  if (!s) return NULL;
  memcpy(s, p, len);
  s[len] = '\0';
  return s;
}

/* ---- byte helpers ---- */

uint16_t qg_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
uint32_t qg_le32(const uint8_t *p) { return (uint32_t)qg_le16(p) | (uint32_t)qg_le16(p + 2) << 16; }
uint64_t qg_le64(const uint8_t *p) { return (uint64_t)qg_le32(p) | (uint64_t)qg_le32(p + 4) << 32; }

float qg_le_f32(const uint8_t *p) {
  uint32_t u = qg_le32(p);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF. */
bool qg_utf8_valid(const uint8_t *p, size_t len) {
  size_t i = 0;
  while (i < len) {
    uint8_t c = p[i];
    if (c == 0) return false;
    if (c < 0x80) {
      i++;
      continue;
    }
    int more;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0) more = 1, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) more = 2, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) more = 3, cp = c & 0x07, min = 0x10000;
    else return false;
    if (len - i <= (size_t)more) return false;
    for (int j = 1; j <= more; j++) {
      if ((p[i + j] & 0xc0) != 0x80) return false;
      cp = cp << 6 | (p[i + j] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += (size_t)more + 1;
  }
  return true;
}

/* ---- the name index ---- */

static int by_name_cmp(const void *a, const void *b) {
  return strcmp(((const qg_name_ix *)a)->name, ((const qg_name_ix *)b)->name);
}

static qgemv_status index_names(qgemv_model *m) {
  m->by_name = qg_model_alloc(m, (size_t)m->nt * sizeof *m->by_name);
  if (!m->by_name) return qg_fail(QGEMV_ERR_NO_MEMORY, "model file: out of memory for the name index");
  for (int64_t i = 0; i < m->nt; i++) m->by_name[i] = (qg_name_ix){m->t[i].name, i};
  qsort(m->by_name, (size_t)m->nt, sizeof *m->by_name, by_name_cmp);
  for (int64_t i = 1; i < m->nt; i++)
    if (strcmp(m->by_name[i - 1].name, m->by_name[i].name) == 0)
      return qg_fail(QGEMV_ERR_BAD_DATA, "model file: two tensors are named '%s'", m->by_name[i].name);
  return QGEMV_OK;
}

int64_t qg_model_lookup(const qgemv_model *m, const char *name) {
  int64_t lo = 0, hi = m->nt;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int c = strcmp(m->by_name[mid].name, name);
    if (c == 0) return m->by_name[mid].index;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

/* ---- opening and closing ---- */

static qgemv_status check_model(const qgemv_model *m, const char *what) {
  if (m == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: model is NULL", what);
  if (m->magic != QG_MAGIC_MODEL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: not a live qgemv_model", what);
  return QGEMV_OK;
}

static void model_free(qgemv_model *m) {
  for (int64_t i = 0; i < m->nt; i++) {
    free(m->t[i].conv_data);
    free(m->t[i].conv_scales);
  }
  while (m->arena) {
    qg_chunk *next = m->arena->next;
    free(m->arena);
    m->arena = next;
  }
  if (m->mapped) munmap((void *)m->base, m->size);
  m->magic = 0;
  free(m);
}

/* safetensors starts with an 8-byte header length and then the JSON
 * object's '{' (the header may be padded with spaces, never led by them). */
static bool looks_safetensors(const uint8_t *p, size_t size) {
  return size >= 9 && p[8] == '{' && qg_le64(p) <= size - 8;
}

static qgemv_status parse(qgemv_model *m) {
  qgemv_status s;
  if (m->size >= 4 && memcmp(m->base, "GGUF", 4) == 0) {
    m->kind = QGEMV_MODEL_GGUF;
    if ((s = qg_gguf_parse(m)) != QGEMV_OK) return s;
    return index_names(m);
  }
  if (looks_safetensors(m->base, m->size)) {
    m->kind = QGEMV_MODEL_SAFETENSORS;
    if ((s = qg_st_parse(m)) != QGEMV_OK || (s = index_names(m)) != QGEMV_OK) return s;
    return qg_st_classify(m);
  }
  return qg_fail(QGEMV_ERR_BAD_DATA,
                 "model file of %zu bytes is neither GGUF (starts with 'GGUF') nor safetensors (an 8-byte header "
                 "length, then '{')",
                 m->size);
}

static qgemv_status open_common(qgemv_model *m, qgemv_model **out) {
  qgemv_status s = parse(m);
  if (s != QGEMV_OK) {
    model_free(m);
    return s;
  }
  *out = m;
  return QGEMV_OK;
}

qgemv_status qgemv_model_open_memory(const void *bytes, size_t size, qgemv_model **out) {
  if (out == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_model_open_memory: out is NULL");
  *out = NULL;
  if (bytes == NULL && size > 0) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_model_open_memory: bytes is NULL");
  qgemv_model *m = calloc(1, sizeof *m);
  if (!m) return qg_fail(QGEMV_ERR_NO_MEMORY, "qgemv_model_open_memory: out of memory");
  m->magic = QG_MAGIC_MODEL;
  m->base = bytes;
  m->size = size;
  return open_common(m, out);
}

qgemv_status qgemv_model_open(const char *path, qgemv_model **out) {
  if (out == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_model_open: out is NULL");
  *out = NULL;
  if (path == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_model_open: path is NULL");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return qg_fail(QGEMV_ERR_INVALID_ARG, "cannot open model file '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int e = errno;
    close(fd);
    return qg_fail(QGEMV_ERR_INVALID_ARG, "model file '%s' is not a regular file%s%s", path, e ? ": " : "",
                   e ? strerror(e) : "");
  }
  if ((uint64_t)st.st_size > SIZE_MAX) {
    close(fd);
    return qg_fail(QGEMV_ERR_UNSUPPORTED, "model file '%s' is larger than this machine's address space", path);
  }
  qgemv_model *m = calloc(1, sizeof *m);
  if (!m) {
    close(fd);
    return qg_fail(QGEMV_ERR_NO_MEMORY, "qgemv_model_open: out of memory");
  }
  m->magic = QG_MAGIC_MODEL;
  m->size = (size_t)st.st_size;
  if (m->size > 0) { /* mmap refuses length 0; an empty file fails parsing below */
    void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      close(fd);
      free(m);
      return qg_fail(e == ENOMEM ? QGEMV_ERR_NO_MEMORY : QGEMV_ERR_INVALID_ARG, "cannot map model file '%s': %s",
                     path, strerror(e));
    }
    m->base = p;
    m->mapped = true;
  }
  close(fd); /* the mapping keeps the file */
  return open_common(m, out);
}

void qgemv_model_close(qgemv_model *m) {
  if (m == NULL || m->magic != QG_MAGIC_MODEL) return;
  model_free(m);
}

qgemv_model_kind qgemv_model_file_kind(const qgemv_model *m) {
  return check_model(m, "qgemv_model_file_kind") == QGEMV_OK ? m->kind : QGEMV_MODEL_GGUF;
}

/* ---- tensors ---- */

int64_t qgemv_model_tensor_count(const qgemv_model *m) {
  return check_model(m, "qgemv_model_tensor_count") == QGEMV_OK ? m->nt : 0;
}

/* The checks of a call that reads entry `index` of one of the tables. */
static qgemv_status check_entry(const qgemv_model *m, int64_t index, bool tensors, const void *out, const char *what) {
  qgemv_status s = check_model(m, what);
  if (s != QGEMV_OK) return s;
  if (out == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: out is NULL", what);
  int64_t count = tensors ? m->nt : m->nkv;
  if (index < 0 || index >= count)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: index %lld is outside 0 .. %lld", what, (long long)index,
                   (long long)count - 1);
  return QGEMV_OK;
}

qgemv_status qgemv_model_tensor_info(const qgemv_model *m, int64_t index, qgemv_model_tensor *out) {
  qgemv_status s = check_entry(m, index, true, out, "qgemv_model_tensor_info");
  if (s != QGEMV_OK) return s;
  const qg_mtensor *t = &m->t[index];
  memset(out, 0, sizeof *out);
  out->name = t->name;
  out->type_name = t->type_name;
  out->ggml_type = t->ggml_type;
  out->ndims = t->ndims;
  memcpy(out->shape, t->shape, sizeof out->shape);
  out->offset = t->offset;
  out->bytes = t->bytes;
  out->use = t->use;
  out->format = t->format;
  out->group = t->group;
  memcpy(out->note, t->note, sizeof out->note);
  return QGEMV_OK;
}

static qgemv_status find(const qgemv_model *m, const char *name, const char *what, qg_mtensor **out) {
  qgemv_status s = check_model(m, what);
  if (s != QGEMV_OK) return s;
  if (name == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "%s: name is NULL", what);
  int64_t i = qg_model_lookup(m, name);
  if (i < 0) return qg_fail(QGEMV_ERR_INVALID_ARG, "the model file has no tensor named '%s'", name);
  *out = &m->t[i];
  return QGEMV_OK;
}

int64_t qgemv_model_find(const qgemv_model *m, const char *name) {
  qg_mtensor *t = NULL;
  return find(m, name, "qgemv_model_find", &t) == QGEMV_OK ? t - m->t : -1;
}

qgemv_status qgemv_model_weight(qgemv_model *m, const char *name, int32_t group, qgemv_weight_desc *out) {
  if (out == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_model_weight: out is NULL");
  qg_mtensor *t;
  qgemv_status s = find(m, name, "qgemv_model_weight", &t);
  if (s != QGEMV_OK) return s;
  if (t->use != QGEMV_USE_WEIGHT) return qg_fail(QGEMV_ERR_UNSUPPORTED, "tensor %s: %s", t->name, t->note);
  if (t->bnb) {
    if (group != 0 && group != QGEMV_NF4_BLOCK)
      return qg_fail(QGEMV_ERR_INVALID_ARG, "tensor %s: an NF4 weight has group 64 (or pass 0), not %d", t->name,
                     (int)group);
    return qg_bnb_weight(m, t, out);
  }
  return qg_gguf_weight(m, t, group, out);
}

qgemv_status qgemv_model_read_f32(const qgemv_model *m, const char *name, float *out, size_t count) {
  qg_mtensor *t;
  qgemv_status s = find(m, name, "qgemv_model_read_f32", &t);
  if (s != QGEMV_OK) return s;
  if (t->elem == QG_ELEM_NONE)
    return qg_fail(QGEMV_ERR_UNSUPPORTED, "tensor %s is %s: only f32, f16 and bf16 tensors read as floats", t->name,
                   t->type_name);
  if (out == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_model_read_f32: out is NULL");
  if (count != t->nelem)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "tensor %s holds %llu values, not %zu", t->name,
                   (unsigned long long)t->nelem, count);
  const uint8_t *p = m->base + t->offset;
  for (size_t i = 0; i < count; i++) {
    switch (t->elem) {
    case QG_ELEM_F32: out[i] = qg_le_f32(p + 4 * i); break;
    case QG_ELEM_F16: out[i] = qgemv_f16_to_f32(qg_le16(p + 2 * i)); break;
    default: out[i] = qgemv_bf16_to_f32(qg_le16(p + 2 * i)); break;
    }
  }
  return QGEMV_OK;
}

/* ---- metadata ---- */

int64_t qgemv_model_metadata_count(const qgemv_model *m) {
  return check_model(m, "qgemv_model_metadata_count") == QGEMV_OK ? m->nkv : 0;
}

qgemv_status qgemv_model_metadata(const qgemv_model *m, int64_t index, qgemv_model_kv *out) {
  qgemv_status s = check_entry(m, index, false, out, "qgemv_model_metadata");
  if (s != QGEMV_OK) return s;
  *out = m->kv[index];
  return QGEMV_OK;
}
