/*
 * fuzz_model: the model-file readers (GGUF, safetensors with bitsandbytes
 * NF4) on any bytes, through qgemv_model_open_memory over an allocation of
 * exactly the input's size. An input is refused with a status and a
 * message, or opens; then every tensor's extent lies inside the input,
 * every weight descriptor (group 0, 64, 128) covers bytes inside the input
 * or the model's own conversion and dequantizes, every float tensor reads,
 * and every metadata pair has a key. Seeds: fuzz/corpus/fuzz_model (small
 * files written by gen_corpus.py) and tests/data (the ggml-written GGUF
 * fixture; libFuzzer keeps the first -max_len bytes of it).
 */
#include "fuzz_common.h"

/* Tensors larger than this are listed and checked but not expanded, to
 * keep executions fast. */
#define EXPAND_LIMIT (1u << 16)

static void use_tensor(qgemv_model *m, const uint8_t *base, size_t size, int64_t i) {
  qgemv_model_tensor t;
  FZ_CHECK(qgemv_model_tensor_info(m, i, &t) == QGEMV_OK, "tensor_info %lld", (long long)i);
  FZ_CHECK(t.name && t.name[0] && t.type_name, "tensor %lld without a name or type", (long long)i);
  FZ_CHECK(t.offset <= size && t.bytes <= size - t.offset, "%s: [%llu, +%llu) outside %zu bytes", t.name,
           (unsigned long long)t.offset, (unsigned long long)t.bytes, size);
  FZ_CHECK(qgemv_model_find(m, t.name) == i, "%s: find gives another index", t.name);
  if (t.use == QGEMV_USE_WEIGHT) {
    static const int32_t groups[] = {0, 64, 128};
    for (int g = 0; g < 3; g++) {
      qgemv_weight_desc d;
      if (qgemv_model_weight(m, t.name, groups[g], &d) != QGEMV_OK) {
        FZ_CHECK(qgemv_last_error()[0], "%s: a refusal without a message", t.name);
        continue;
      }
      size_t need = qgemv_data_bytes(d.format, d.n, d.k, d.group);
      FZ_CHECK(need > 0, "%s: descriptor of an invalid shape", t.name);
      const uint8_t *p = d.data;
      bool inside = p >= base && p <= base + size && need <= size - (size_t)(p - base);
      FZ_CHECK(inside || d.format == QGEMV_NF4, "%s: a Q2_0 descriptor outside the input", t.name);
      if (need > EXPAND_LIMIT) continue;
      float *w = fz_alloc((size_t)(d.n * d.k) * sizeof *w);
      qgemv_status s = qgemv_dequantize(&d, w);
      FZ_CHECK(s == QGEMV_OK || s == QGEMV_ERR_BAD_DATA, "%s: dequantize %s", t.name, qgemv_status_str(s));
      free(w);
    }
  }
  if (t.use == QGEMV_USE_FLOAT) {
    uint64_t count = 1;
    for (int j = 0; j < t.ndims; j++) count *= (uint64_t)t.shape[j];
    if (count * 4 > EXPAND_LIMIT) return;
    float *f = fz_alloc((size_t)count * sizeof *f);
    FZ_CHECK(qgemv_model_read_f32(m, t.name, f, (size_t)count) == QGEMV_OK, "%s: read_f32: %s", t.name,
             qgemv_last_error());
    free(f);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = fz_alloc(size);
  if (size) memcpy(copy, data, size);
  qgemv_model *m = NULL;
  qgemv_status s = qgemv_model_open_memory(copy, size, &m);
  if (s != QGEMV_OK) {
    FZ_CHECK(m == NULL && qgemv_last_error()[0], "a refused open must say why and leave *out NULL");
    FZ_CHECK(s == QGEMV_ERR_BAD_DATA || s == QGEMV_ERR_UNSUPPORTED || s == QGEMV_ERR_NO_MEMORY,
             "open: unexpected %s", qgemv_status_str(s));
    free(copy);
    return 0;
  }
  for (int64_t i = 0; i < qgemv_model_tensor_count(m); i++) use_tensor(m, copy, size, i);
  for (int64_t i = 0; i < qgemv_model_metadata_count(m); i++) {
    qgemv_model_kv kv;
    FZ_CHECK(qgemv_model_metadata(m, i, &kv) == QGEMV_OK && kv.key && kv.key[0], "metadata %lld", (long long)i);
    FZ_CHECK(kv.type != QGEMV_VALUE_STRING || (kv.str && strlen(kv.str) <= kv.len), "metadata %s: string", kv.key);
  }
  qgemv_model_close(m);
  free(copy);
  return 0;
}
