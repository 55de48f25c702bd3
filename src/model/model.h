/* Model files (GGUF, safetensors): the struct behind qgemv_model and the
 * helpers its readers share. model.c holds the public calls; gguf.c,
 * safetensors.c and bnb.c fill and interpret the tables. */
#ifndef QG_MODEL_H
#define QG_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qgemv.h"

enum { QG_MAGIC_MODEL = 0x51474d44 };

/* Element types qgemv_model_read_f32 reads. */
typedef enum { QG_ELEM_NONE = 0, QG_ELEM_F32, QG_ELEM_F16, QG_ELEM_BF16 } qg_elem;

/* A bitsandbytes 4-bit weight: its quant_state (parsed from the JSON that
 * bitsandbytes stores as uint8 under NAME.quant_state.bitsandbytes__nf4)
 * and the indices of its companion tensors (-1 where absent). */
typedef struct qg_bnb {
  char quant_type[8]; /* "nf4", "fp4" */
  char dtype[16];     /* the dtype it was quantized from */
  int64_t blocksize;
  int32_t ndims;
  int64_t shape[2];   /* [out, in] */
  bool nested;        /* double quantization: absmax is uint8 */
  int64_t nested_blocksize;
  float nested_offset;
  int64_t absmax, quant_map, nested_absmax, nested_quant_map, state;
} qg_bnb;

typedef struct qg_mtensor {
  const char *name; /* NUL-terminated, in the model's arena */
  const char *type_name;
  int32_t ggml_type;
  int32_t ndims;
  int64_t shape[QGEMV_MODEL_MAX_DIMS]; /* outermost first */
  uint64_t nelem;
  uint64_t offset; /* from the start of the file */
  uint64_t span;   /* bytes to the next tensor's data, or to the end */
  uint64_t bytes;
  qg_elem elem;
  qgemv_model_use use;
  qgemv_format format;
  int32_t group;
  char note[160];
  qg_bnb *bnb;        /* a bitsandbytes weight's state, else NULL */
  void *conv_data;    /* its conversion, made on first use */
  float *conv_scales;
} qg_mtensor;

typedef struct qg_chunk qg_chunk;
typedef struct qg_name_ix {
  const char *name;
  int64_t index;
} qg_name_ix;

struct qgemv_model {
  uint32_t magic;
  qgemv_model_kind kind;
  const uint8_t *base;
  size_t size;
  bool mapped;
  qg_mtensor *t;
  int64_t nt;
  qgemv_model_kv *kv;
  int64_t nkv;
  qg_name_ix *by_name; /* sorted by name */
  qg_chunk *arena;
};

/* Memory freed with the model (NULL when out of memory). */
void *qg_model_alloc(qgemv_model *m, size_t bytes);
/* A NUL-terminated copy of len bytes. */
char *qg_model_strdup(qgemv_model *m, const void *p, size_t len);

/* True when p[0 .. len) is well-formed UTF-8 without NUL. */
bool qg_utf8_valid(const uint8_t *p, size_t len);

/* The index of tensor `name`, or -1 (no message). */
int64_t qg_model_lookup(const qgemv_model *m, const char *name);

/* Little-endian loads from the mapping (any alignment). */
uint16_t qg_le16(const uint8_t *p);
uint32_t qg_le32(const uint8_t *p);
uint64_t qg_le64(const uint8_t *p);
float qg_le_f32(const uint8_t *p);

/* The readers: fill m->t and m->kv from m->base / m->size, or fail with a
 * message. GGUF also classifies its tensors; safetensors classifies after
 * the model's name index is built (bitsandbytes parts are found by name). */
qgemv_status qg_gguf_parse(qgemv_model *m);
qgemv_status qg_st_parse(qgemv_model *m);
qgemv_status qg_st_classify(qgemv_model *m);

/* A GGUF Q2_0 tensor's descriptor, pointing into the mapping. */
qgemv_status qg_gguf_weight(qgemv_model *m, qg_mtensor *t, int32_t group, qgemv_weight_desc *out);
/* bitsandbytes: checks a weight's parts (sets use and note), and converts
 * it into qgemv NF4 on first use. */
void qg_bnb_classify(qgemv_model *m, qg_mtensor *t);
qgemv_status qg_bnb_weight(qgemv_model *m, qg_mtensor *t, qgemv_weight_desc *out);

#endif
