/* Q2_0 blocks (DESIGN.md s.4): [fp16 d][group/4 bytes of 2-bit codes],
 * quantized byte-identically to ggml's reference quantizer. */
#include <math.h>
#include <string.h>

#include "convert.h"
#include "layouts.h"

void qg_q2_quantize(const float *w, int32_t group, uint8_t *block, float *scale) {
  (void)scale; /* the scale is inline */
  float amax = 0.0f;
  for (int j = 0; j < group; j++) amax = fmaxf(amax, fabsf(w[j]));
  float id = amax > 0.0f ? 1.0f / amax : 0.0f;
  uint16_t d = qg_f32_to_f16(amax);
  block[0] = (uint8_t)(d & 0xff);
  block[1] = (uint8_t)(d >> 8);
  memset(block + 2, 0, (size_t)group / 4);
  for (int j = 0; j < group; j++) {
    float v = w[j] * id;
    if (v != v) v = 0.0f; /* 0 * inf when amax is subnormal */
    float q = roundf(v) + 1.0f;
    q = fminf(3.0f, fmaxf(0.0f, q));
    block[2 + j / 4] |= (uint8_t)((int)q << (2 * (j % 4)));
  }
}

void qg_q2_decode(const uint8_t *codes, int32_t group, float *values) {
  for (int j = 0; j < group; j++) values[j] = (float)(((codes[j / 4] >> (2 * (j % 4))) & 3) - 1);
}
