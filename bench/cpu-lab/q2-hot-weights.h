/* Random Q2_0 weights in the interleaved layout of the integer levels
 * (qg_interleave_q2_block) with every scale 1.0 (fp16 0x3c00, so that
 * nothing is a NaN): per 16-row group and block, 16 scales, then codes.
 * The same bytes for the same n, k and g (srand(1)), so that y hashes
 * compare across programs and runs. Included by q2-hot.c and q2-amx-hot.c
 * after the level source that defines qg_interleave_q2_block. */
#ifndef Q2_HOT_WEIGHTS_H
#define Q2_HOT_WEIGHTS_H

#include <stdint.h>
#include <stdlib.h>

static uint8_t *q2hot_weights(int64_t n, int64_t k, int g) {
  const int64_t nb = k / g;
  const size_t wbytes = (size_t)n * (size_t)nb * qg_interleave_q2_block(g);
  uint8_t *w = aligned_alloc(64, (wbytes + 63) / 64 * 64);
  if (w == NULL) return NULL;
  srand(1);
  for (size_t i = 0; i < wbytes; i++) w[i] = (uint8_t)rand();
  for (int64_t grp = 0; grp < n / 16; grp++)
    for (int64_t b = 0; b < nb; b++) {
      uint8_t *p = w + ((size_t)grp * (size_t)nb + (size_t)b) * 16u * qg_interleave_q2_block(g);
      for (int r = 0; r < 16; r++) p[2 * r] = 0x00, p[2 * r + 1] = 0x3c;
    }
  return w;
}

#endif
