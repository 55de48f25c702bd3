/* Model files made in the tests: a byte buffer with little-endian writers,
 * a GGUF writer and a safetensors writer, written from the formats'
 * descriptions (ggml's docs/gguf.md; safetensors' 8-byte header length,
 * JSON header, data), for well-formed inputs and hand-made corruptions;
 * and where the shared fixture is (QGEMV_TEST_DATA). */
#ifndef QGEMV_TEST_MODELFILE_H
#define QGEMV_TEST_MODELFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct mf_buf {
  unsigned char *p;
  size_t len, cap;
} mf_buf;

void mf_put(mf_buf *b, const void *p, size_t n);
void mf_u8(mf_buf *b, uint8_t v);
void mf_u32(mf_buf *b, uint32_t v);
void mf_u64(mf_buf *b, uint64_t v);
void mf_f32(mf_buf *b, float v);
/* A GGUF string: u64 length, then the bytes (no NUL). */
void mf_gstr(mf_buf *b, const char *s);
void mf_pad(mf_buf *b, size_t alignment);
void mf_free(mf_buf *b);

/* A GGUF tensor: ne[0] is the number of elements per row. */
typedef struct mf_tensor {
  const char *name;
  uint32_t type;
  uint32_t ndims;
  uint64_t ne[4];
  const void *data;
  size_t bytes;
} mf_tensor;

/* A GGUF v3 file: metadata general.architecture = "test" (and
 * general.alignment when alignment != 32), the tensors, data aligned. */
mf_buf mf_gguf(const mf_tensor *t, int n, uint32_t alignment);

/* A safetensors entry; dtype as safetensors names it ("F32", "U8"). */
typedef struct mf_entry {
  const char *name;
  const char *dtype;
  int ndims;
  int64_t shape[4];
  const void *data;
  size_t bytes;
} mf_entry;

/* A safetensors file of these entries, data in order; meta (may be NULL)
 * is the JSON text of "__metadata__". */
mf_buf mf_safetensors(const mf_entry *e, int n, const char *meta);
/* A safetensors file of a header given as JSON text and raw data. */
mf_buf mf_safetensors_raw(const char *json, const void *data, size_t bytes);

/* The fixture written by ggml (tests/data/ggml-q2_0.gguf): its path, from
 * QGEMV_TEST_DATA, or NULL with a line saying why on stdout. */
const char *mf_fixture(void);
/* The whole file in a malloc'ed buffer; NULL on failure. */
unsigned char *mf_read_file(const char *path, size_t *size);

#endif
