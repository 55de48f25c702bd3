/* bitsandbytes NF4 weights (from a safetensors checkpoint) into qgemv NF4.
 *
 * What bitsandbytes writes, read in its source (bitsandbytes-foundation/
 * bitsandbytes, main of 2026-08):
 * - nn/modules.py, Linear4bit._save_to_state_dict: the packed weight under
 *   NAME, then every item of quant_state.as_dict(packed=True) under
 *   NAME + "." + key.
 * - functional.py, QuantState.as_dict(packed=True): the tensors absmax and
 *   quant_map (and, when nested, nested_absmax and nested_quant_map), and
 *   the rest (quant_type, blocksize, dtype, shape, nested_blocksize,
 *   nested_dtype, nested_offset) packed under
 *   "quant_state.bitsandbytes__" + quant_type by utils.py,
 *   pack_dict_to_tensor: json.dumps, UTF-8, a uint8 tensor.
 * - functional.py, quantize_4bit: the input flattened, blocks of blocksize
 *   consecutive values, absmax per block; with compress_statistics (the
 *   Params4bit default) offset = absmax.mean() and absmax - offset is
 *   quantized again by quantize_blockwise(..., blocksize=256) with the
 *   dynamic 8-bit map. dequantize_4bit undoes that as
 *   dequantize_blockwise(absmax, state2) + offset, in f32.
 * - backends/default/ops.py, the dequantize_blockwise kernel: value =
 *   code[byte] * absmax[i / blocksize] (f32); the quantize_4bit kernel packs
 *   ((q[2j] << 4) | q[2j + 1]), as csrc/kernels.cu kQuantizeBlockwise does
 *   (dQuantizeNF4(vals[2 * j]) << 4): element 2j in the HIGH nibble, where
 *   qgemv keeps it in the LOW one, so bytes are swapped.
 * - functional.py, get_4bit_type("nf4"): the 16 NormalFloat values, which
 *   are qgemv's table (DESIGN.md section 4).
 * qgemv's NF4 block is 64, bitsandbytes' default blocksize (Params4bit,
 * quantize_4bit); other blocksizes are refused with a message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "model.h"

/* A part of a weight, checked: dtype (NULL: any) and element count. */
static bool part_ok(const qgemv_model *m, int64_t i, const char *dtype, uint64_t count) {
  return i >= 0 && (!dtype || strcmp(m->t[i].type_name, dtype) == 0) && m->t[i].nelem == count;
}

/* Why the parts do not make an NF4 weight of n x k; NULL when they do. */
static const char *parts_problem(const qgemv_model *m, const qg_bnb *b, uint64_t blocks, char *why, size_t size) {
  if (!part_ok(m, b->quant_map, "F32", 16)) return "its quant_map is not 16 f32 values";
  const uint8_t *map = m->base + m->t[b->quant_map].offset;
  const float *lut = qgemv_nf4_table();
  for (int c = 0; c < 16; c++) {
    float v = qg_le_f32(map + 4 * c);
    if (memcmp(&v, &lut[c], sizeof v) != 0) {
      snprintf(why, size, "its quant_map[%d] = %.9g is not the NF4 table's %.9g", c, (double)v, (double)lut[c]);
      return why;
    }
  }
  if (!b->nested) return part_ok(m, b->absmax, "F32", blocks) ? NULL : "its absmax is not one f32 per block of 64";
  if (!part_ok(m, b->absmax, "U8", blocks)) return "its double-quantized absmax is not one uint8 per block of 64";
  if (!part_ok(m, b->nested_quant_map, "F32", 256)) return "its nested_quant_map is not 256 f32 values";
  uint64_t groups = blocks / (uint64_t)b->nested_blocksize + (blocks % (uint64_t)b->nested_blocksize != 0);
  if (!part_ok(m, b->nested_absmax, "F32", groups)) {
    snprintf(why, size, "its nested_absmax is not %llu f32 values (one per %lld absmax)", (unsigned long long)groups,
             (long long)b->nested_blocksize);
    return why;
  }
  return NULL;
}

void qg_bnb_classify(qgemv_model *m, qg_mtensor *t) {
  const qg_bnb *b = t->bnb;
  char why[160];
  const char *problem = NULL;
  int64_t n = b->shape[0], k = b->shape[1];
  uint64_t elems = 0;
  if (strcmp(b->quant_type, "nf4") != 0) {
    snprintf(why, sizeof why, "bitsandbytes %.8s is not a qgemv format (NF4 is)", b->quant_type);
    problem = why;
  } else if (b->ndims != 2 || n <= 0 || k <= 0) {
    problem = "a bitsandbytes NF4 tensor that is not a matrix";
  } else if (b->blocksize != QGEMV_NF4_BLOCK) {
    snprintf(why, sizeof why,
             "bitsandbytes blocksize %lld: qgemv's NF4 block is 64 only (quantize with blocksize=64, the default)",
             (long long)b->blocksize);
    problem = why;
  } else if (k % QGEMV_NF4_BLOCK != 0) {
    problem = "its rows are not a multiple of 64 long, so bitsandbytes' blocks straddle rows";
  } else if (__builtin_mul_overflow((uint64_t)n, (uint64_t)k, &elems) || t->bytes != elems / 2) {
    snprintf(why, sizeof why, "its packed bytes (%llu) are not half of %lld x %lld", (unsigned long long)t->bytes,
             (long long)n, (long long)k);
    problem = why;
  } else {
    problem = parts_problem(m, b, elems / QGEMV_NF4_BLOCK, why, sizeof why);
  }
  if (problem) {
    snprintf(t->note, sizeof t->note, "%s", problem);
    return;
  }
  t->use = QGEMV_USE_WEIGHT;
  t->format = QGEMV_NF4;
  t->group = QGEMV_NF4_BLOCK;
  t->ndims = 2;
  memset(t->shape, 0, sizeof t->shape);
  t->shape[0] = n;
  t->shape[1] = k;
  snprintf(t->note, sizeof t->note, "bitsandbytes NF4 (from %.15s%s)", b->dtype,
           b->nested ? ", double-quantized statistics" : "");
}

/* The f32 scale of every block. */
static void scales(const qgemv_model *m, const qg_bnb *b, uint64_t blocks, float *out) {
  const uint8_t *absmax = m->base + m->t[b->absmax].offset;
  if (!b->nested) {
    for (uint64_t i = 0; i < blocks; i++) out[i] = qg_le_f32(absmax + 4 * i);
    return;
  }
  const uint8_t *code = m->base + m->t[b->nested_quant_map].offset;
  const uint8_t *nested = m->base + m->t[b->nested_absmax].offset;
  for (uint64_t i = 0; i < blocks; i++) {
    /* f32 product, then the f32 offset added: dequantize_4bit's order */
    float v = qg_le_f32(code + 4 * absmax[i]) * qg_le_f32(nested + 4 * (i / (uint64_t)b->nested_blocksize));
    out[i] = v + b->nested_offset;
  }
}

qgemv_status qg_bnb_weight(qgemv_model *m, qg_mtensor *t, qgemv_weight_desc *out) {
  int64_t n = t->shape[0], k = t->shape[1];
  size_t bytes = (size_t)t->bytes, blocks = bytes / (QGEMV_NF4_BLOCK / 2);
  if (!t->conv_data) {
    uint8_t *data = malloc(bytes ? bytes : 1);
    float *sc = malloc(blocks * sizeof *sc);
    if (!data || !sc) {
      free(data);
      free(sc);
      return qg_fail(QGEMV_ERR_NO_MEMORY, "tensor %s: out of memory converting it to qgemv NF4", t->name);
    }
    const uint8_t *src = m->base + t->offset;
    for (size_t j = 0; j < bytes; j++) data[j] = (uint8_t)(src[j] >> 4 | src[j] << 4);
    scales(m, t->bnb, blocks, sc);
    t->conv_data = data;
    t->conv_scales = sc;
  }
  *out = (qgemv_weight_desc){.format = QGEMV_NF4, .n = n, .k = k, .group = QGEMV_NF4_BLOCK,
                             .data = t->conv_data, .scales = t->conv_scales};
  return QGEMV_OK;
}
