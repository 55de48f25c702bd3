/* Shared by the fuzz targets: reading typed values from the fuzzer's bytes
 * (past the end everything reads as zero, so every input is usable), and a
 * check that aborts with a message, which libFuzzer reports as a crash
 * with the input that caused it. */
#ifndef QGEMV_FUZZ_COMMON_H
#define QGEMV_FUZZ_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qgemv.h"

typedef struct fz {
  const uint8_t *p;
  size_t n;
} fz;

static inline uint8_t fz_u8(fz *f) {
  if (f->n == 0) return 0;
  f->n--;
  return *f->p++;
}

static inline uint16_t fz_u16(fz *f) {
  uint16_t lo = fz_u8(f);
  return (uint16_t)(lo | (uint16_t)fz_u8(f) << 8);
}

static inline uint32_t fz_u32(fz *f) {
  uint32_t lo = fz_u16(f);
  return lo | (uint32_t)fz_u16(f) << 16;
}

static inline uint64_t fz_u64(fz *f) {
  uint64_t lo = fz_u32(f);
  return lo | (uint64_t)fz_u32(f) << 32;
}

/* n bytes into dst, zeros once the input is used up */
static inline void fz_bytes(fz *f, void *dst, size_t n) {
  size_t take = n < f->n ? n : f->n;
  memcpy(dst, f->p, take);
  memset((uint8_t *)dst + take, 0, n - take);
  f->p += take;
  f->n -= take;
}

static inline float fz_bits_f32(uint32_t u) {
  float v;
  memcpy(&v, &u, sizeof v);
  return v;
}

static inline uint32_t fz_f32_bits(float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static void fz_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz check failed: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n  qgemv_last_error: %s\n", qgemv_last_error());
  va_end(ap);
  abort();
}

#define FZ_CHECK(cond, ...) \
  do {                      \
    if (!(cond)) fz_fail(__VA_ARGS__); \
  } while (0)

/* A malloc of exactly `bytes` (at least 1), so that ASan sees any access
 * past the end of what the library was given. */
static inline void *fz_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (p == NULL) abort();
  return p;
}

#endif
