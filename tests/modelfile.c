#include "modelfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mf_put(mf_buf *b, const void *p, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    unsigned char *q = realloc(b->p, cap);
    if (!q) abort();
    b->p = q;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
}

void mf_u8(mf_buf *b, uint8_t v) { mf_put(b, &v, 1); }

void mf_u32(mf_buf *b, uint32_t v) {
  for (int i = 0; i < 4; i++) mf_u8(b, (uint8_t)(v >> (8 * i)));
}

void mf_u64(mf_buf *b, uint64_t v) {
  for (int i = 0; i < 8; i++) mf_u8(b, (uint8_t)(v >> (8 * i)));
}

void mf_f32(mf_buf *b, float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  mf_u32(b, u);
}

void mf_gstr(mf_buf *b, const char *s) {
  mf_u64(b, strlen(s));
  mf_put(b, s, strlen(s));
}

void mf_pad(mf_buf *b, size_t alignment) {
  while (b->len % alignment) mf_u8(b, 0);
}

void mf_free(mf_buf *b) {
  free(b->p);
  *b = (mf_buf){0};
}

mf_buf mf_gguf(const mf_tensor *t, int n, uint32_t alignment) {
  mf_buf b = {0};
  mf_put(&b, "GGUF", 4);
  mf_u32(&b, 3);
  mf_u64(&b, (uint64_t)n);
  mf_u64(&b, alignment != 32 ? 2 : 1);
  mf_gstr(&b, "general.architecture");
  mf_u32(&b, 8); /* string */
  mf_gstr(&b, "test");
  if (alignment != 32) {
    mf_gstr(&b, "general.alignment");
    mf_u32(&b, 4); /* uint32 */
    mf_u32(&b, alignment);
  }
  uint64_t offset = 0;
  for (int i = 0; i < n; i++) {
    mf_gstr(&b, t[i].name);
    mf_u32(&b, t[i].ndims);
    for (uint32_t d = 0; d < t[i].ndims; d++) mf_u64(&b, t[i].ne[d]);
    mf_u32(&b, t[i].type);
    mf_u64(&b, offset);
    offset += (t[i].bytes + alignment - 1) / alignment * alignment;
  }
  mf_pad(&b, alignment);
  for (int i = 0; i < n; i++) {
    mf_put(&b, t[i].data, t[i].bytes);
    mf_pad(&b, alignment);
  }
  return b;
}

mf_buf mf_safetensors_raw(const char *json, const void *data, size_t bytes) {
  mf_buf b = {0};
  mf_u64(&b, strlen(json));
  mf_put(&b, json, strlen(json));
  mf_put(&b, data, bytes);
  return b;
}

mf_buf mf_safetensors(const mf_entry *e, int n, const char *meta) {
  mf_buf json = {0}, data = {0};
  char item[1024];
  mf_put(&json, "{", 1);
  if (meta) {
    snprintf(item, sizeof item, "\"__metadata__\":%s", meta);
    mf_put(&json, item, strlen(item));
  }
  for (int i = 0; i < n; i++) {
    int len = snprintf(item, sizeof item, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i || meta ? "," : "", e[i].name,
                       e[i].dtype);
    for (int d = 0; d < e[i].ndims; d++)
      len += snprintf(item + len, sizeof item - (size_t)len, "%s%lld", d ? "," : "", (long long)e[i].shape[d]);
    snprintf(item + len, sizeof item - (size_t)len, "],\"data_offsets\":[%zu,%zu]}", data.len, data.len + e[i].bytes);
    mf_put(&json, item, strlen(item));
    mf_put(&data, e[i].data, e[i].bytes);
  }
  mf_put(&json, "}", 2); /* with its NUL */
  mf_buf b = mf_safetensors_raw((const char *)json.p, data.p, data.len);
  mf_free(&json);
  mf_free(&data);
  return b;
}

const char *mf_fixture(void) {
  static char path[4096];
  const char *dir = getenv("QGEMV_TEST_DATA");
  if (!dir || !*dir) {
    printf("QGEMV_TEST_DATA is not set: run through make check, or point it at tests/data\n");
    return NULL;
  }
  snprintf(path, sizeof path, "%s/ggml-q2_0.gguf", dir);
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("fixture %s is missing\n", path);
    return NULL;
  }
  fclose(f);
  return path;
}

unsigned char *mf_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *p = n > 0 ? malloc((size_t)n) : NULL;
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  if (p) *size = (size_t)n;
  return p;
}
