/* The public scalar conversions: thin wrappers of convert.h. */
#include "convert.h"

#include "qgemv.h"

uint16_t qgemv_f32_to_bf16(float f) { return qg_f32_to_bf16(f); }
float qgemv_bf16_to_f32(uint16_t h) { return qg_bf16_to_f32(h); }
uint16_t qgemv_f32_to_f16(float f) { return qg_f32_to_f16(f); }
float qgemv_f16_to_f32(uint16_t h) { return qg_f16_to_f32(h); }
