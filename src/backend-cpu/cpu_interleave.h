/* Resident layouts with rows interleaved in groups, for kernels whose
 * vector lanes are weight rows (the integer Q2_0 and the NF4 AVX-512
 * kernels). Same bytes as the packed format, in the same places per group
 * of rows: the rows [r0, r1) of a group sit where the packed format puts
 * them, so a thread that repacks its rows first-touches the pages it will
 * stream (cpu_backend.c). The last group may be narrower (n % lanes rows):
 * it is laid out the same way with fewer lanes.
 *
 * Q2_0 (group g), per group of L rows and block b: the L rows' fp16
 * scales (2L bytes), then g/16 vectors of 4L bytes. In vector v the dword
 * of lane r holds 16 codes of row r: byte t, bits 2f and 2f+1, is the
 * code of element b g + 16 v + 4 f + t. So (vector >> 2f) & 3 per byte
 * gives, in every lane, the codes of 4 consecutive elements: one 4-way
 * byte dot product with 4 consecutive activations.
 *
 * NF4 (block 64), per group of L rows and block b: the L rows' f32 scales
 * (4L bytes), then 8 vectors of 4L bytes; in vector v the dword of lane r
 * holds 8 codes of row r, nibble t = element b 64 + 8 v + t. A 16-entry
 * table lookup that reads index bits 3:0 (vpermps) looks up element 8v + t
 * of all L rows after a shift by 4t. */
#ifndef QG_CPU_INTERLEAVE_H
#define QG_CPU_INTERLEAVE_H

#include <stddef.h>
#include <stdint.h>

#include "qgemv.h"

/* Bytes per row and block of the interleaved layouts (= the packed
 * format's, scales included). */
static inline size_t qg_interleave_q2_block(int g) { return 2u + (size_t)g / 4u; }
#define QG_INTERLEAVE_NF4_BLOCK 36u

/* Rows [r0, r1) of d (r0 a multiple of lanes; r1 too, or d->n) into out,
 * which is the layout's base + r0 * (k / g) * bytes per row and block. */
void qg_interleave_q2(const qgemv_weight_desc *d, int lanes, int64_t r0, int64_t r1, uint8_t *out);
void qg_interleave_nf4(const qgemv_weight_desc *d, int lanes, int64_t r0, int64_t r1, uint8_t *out);

#endif
