/* CPU kernel lab: shared declarations (not part of the library). */
#ifndef LAB_H
#define LAB_H

#include <omp.h>
#include <stddef.h>
#include <stdint.h>

#include "qgemv.h"
#include "xq.h"
#include "../../src/backend-cpu/cpu_xfix.h"

double lab_now(void);
uint64_t lab_rng(uint64_t *s);
double lab_normal(uint64_t *s);

/* Q2_0 integer path (q2v.c), AVX-512 VNNI; n a multiple of 16. */
size_t q2v_bytes(int64_t n, int64_t k, int g);
void q2v_repack(const uint8_t *packed, int64_t n, int64_t k, int g, uint8_t *out);
/* xr: m rows quantized by qg_xfix_quantize; x: the same rows in f32 (for blocks
 * left to the exact path). */
void q2v_matvec(const uint8_t *w, int64_t n, int64_t k, int g, const qg_xfix_row *xr, const float *x, int64_t m,
                float *y, int threads);

/* Q2_0 by f32 pair tables (q2t.c), AVX-512; n a multiple of 16. */
size_t q2t_bytes(int64_t n, int64_t k, int g);
void q2t_repack(const uint8_t *packed, int64_t n, int64_t k, int g, uint8_t *out);
void q2t_tables(const float *x, int64_t k, float *tables); /* [k/2][16] per row */
void q2t_matvec(const uint8_t *w, int64_t n, int64_t k, int g, const float *tables, int64_t m, float *y, int threads);

/* NF4 f32 path, 16-row interleaved (nf4i.c), AVX-512; n a multiple of 16. */
size_t nf4i_bytes(int64_t n, int64_t k);
void nf4i_repack(const uint8_t *packed, const float *scales, int64_t n, int64_t k, uint8_t *out);
void nf4i_matvec(const uint8_t *w, int64_t n, int64_t k, const float *x, int64_t m, float *y, int threads);

#endif
