/* NF4 blocks (DESIGN.md s.4): the NormalFloat table, quantize, decode. */
#include <math.h>

#include "layouts.h"

const float qg_nf4_lut[16] = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

const float *qgemv_nf4_table(void) { return qg_nf4_lut; }

/* Nearest NormalFloat code to v in [-1, 1]; a tie goes to the lower code. */
static uint8_t nearest(float v) {
  uint8_t best = 0;
  double best_dist = fabs((double)v - (double)qg_nf4_lut[0]);
  for (uint8_t c = 1; c < 16; c++) {
    double dist = fabs((double)v - (double)qg_nf4_lut[c]);
    if (dist < best_dist) {
      best_dist = dist;
      best = c;
    }
  }
  return best;
}

/* The code of w for a block whose scale has reciprocal inv. */
static uint8_t code_of(float w, float inv) {
  float v = w * inv;
  /* |w| <= amax puts v in [-1, 1] up to rounding; the clamp also covers
   * a subnormal amax whose reciprocal overflows. */
  if (w == 0.0f) v = 0.0f;
  return nearest(fminf(1.0f, fmaxf(-1.0f, v)));
}

void qg_nf4_quantize(const float *w, int32_t group, uint8_t *block, float *scale) {
  float amax = 0.0f;
  for (int j = 0; j < group; j++) amax = fmaxf(amax, fabsf(w[j]));
  *scale = amax;
  float inv = amax > 0.0f ? 1.0f / amax : 0.0f;
  for (int j = 0; j < group / 2; j++) block[j] = (uint8_t)(code_of(w[2 * j], inv) | (code_of(w[2 * j + 1], inv) << 4));
}

void qg_nf4_decode(const uint8_t *codes, int32_t group, float *values) {
  for (int j = 0; j < group / 2; j++) {
    values[2 * j] = qg_nf4_lut[codes[j] & 0xf];
    values[2 * j + 1] = qg_nf4_lut[codes[j] >> 4];
  }
}
