/* bf16 and IEEE fp16 <-> f32, round to nearest even, NaN kept a NaN: the
 * library's one implementation. Backends and the core use these; the
 * public qgemv_* conversions (convert.c) wrap them, so that no backend
 * calls back into the API. Plain C, usable from C++. */
#ifndef QG_CONVERT_H
#define QG_CONVERT_H

#include <stdint.h>
#include <string.h>

static inline uint32_t qg_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float qg_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint16_t qg_f32_to_bf16(float f) {
  uint32_t u = qg_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static inline float qg_bf16_to_f32(uint16_t h) { return qg_bits_f32((uint32_t)h << 16); }

/* fp16 subnormal or zero from |f| below 2^-14: |f| / 2^-24, to nearest even. */
static inline uint16_t qg_f32_to_f16_small(uint32_t sign, uint32_t abs) {
  if (abs < 0x33000000u) return (uint16_t)sign; /* below half the smallest subnormal */
  uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
  int shift = 126 - (int)(abs >> 23); /* 14 .. 24 */
  uint32_t q = mant >> shift;
  uint32_t rem = mant & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) q++;
  return (uint16_t)(sign | q);
}

static inline uint16_t qg_f32_to_f16(float f) {
  uint32_t u = qg_f32_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
  if (abs < 0x38800000u) return qg_f32_to_f16_small(sign, abs);
  uint32_t r = abs + 0xfffu + ((abs >> 13) & 1u); /* round the 13 dropped bits */
  return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

static inline float qg_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) return qg_bits_f32(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return qg_bits_f32(sign);
    float v = (float)mant * (1.0f / 16777216.0f); /* mant * 2^-24, exact */
    return sign ? -v : v;
  }
  return qg_bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

#endif
