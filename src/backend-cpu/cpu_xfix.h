/* Activations in block fixed point, for the integer dot products of the
 * Q2_0 kernels (DESIGN.md section 5, "the integer path").
 *
 * A row x[k] (f32: the values the float kernels would use) is cut into the
 * weight's blocks of g. Block b holds x_j = sum_t q_tj 2^e_tb + delta_j,
 * t = 0 .. terms-1, each q an integer kept as four signed base-256 digits
 * (q = d0 + 2^8 d1 + 2^16 d2 + 2^24 d3, d in [-128, 127]). Term 0 has
 * |q| <= 2^22, so d3 is always 0 and the kernels skip that plane (22 bits
 * rather than 30 take a quarter fewer dot products; v7,
 * bench/NOTES-cpu.md). Further terms, for the blocks that need them, have
 * |q| <= 2^6: one digit, d1 = d2 = d3 = 0, so a kernel may compute only
 * plane 0 for them (a kernel that computes all three gets the same sums).
 * A further term is what an f32 x needs for its smallest elements (a
 * Gaussian row of 8192 gives about one block in nine one, 28672 one in
 * three): one digit gives them 6 more bits for a third of a full term's
 * dot products (v29).
 * Term 0 scales the block by its largest element; term t + 1 represents
 * what term t left. For every weight row w, by Cauchy-Schwarz,
 *   |sum_j w_j delta_j| <= sqrt(sum_j (w_j x_j)^2) sqrt(P),
 *   P = sum_j (delta_j / x_j)^2        (delta_j = 0 where x_j = 0),
 * so the error the representation adds is at most sqrt(P) R whatever the
 * weights. Blocks get further terms, largest share of P first, until
 * P <= QG_XFIX_TAU^2; a block whose turn comes when the row's room for
 * extra terms is used up, or that holds a non-finite value, is left to
 * the exact path (terms = 0: its products are summed in double from the f32
 * x, IEEE semantics included), which adds nothing to P. */
#ifndef QG_CPU_XFIX_H
#define QG_CPU_XFIX_H

#include <stddef.h>
#include <stdint.h>

/* The bound on the relative error from x (DESIGN.md section 5). */
#define QG_XFIX_TAU 5e-4

/* One term of one block: its scale and the sums of its digit planes (the
 * correction for the codes' offset: sum_j (c_j - 1) d_j = sum_j c_j d_j -
 * sum_j d_j). */
typedef struct qg_xfix_term {
  int32_t dsum[4];
  double scale; /* 2^e, a power of two */
} qg_xfix_term;

typedef struct qg_xfix_block {
  qg_xfix_term t0;
  int32_t terms; /* 0: exact path; 1: term 0 only; more: extra terms */
  int32_t first; /* the block's first extra term (terms > 1) */
} qg_xfix_block;

/* One activation row as the kernels read it, inside the workspace. Digit p
 * of element j at digits[16 (j / 4) + 4 p + j % 4]: the four digits of four
 * consecutive elements in one plane form a dword (one broadcast operand of
 * a 4-way byte dot product) and the four planes of those elements 16
 * bytes. (The term function writes the digits, and one, avx512amx's, puts
 * them plane-major instead: digits[256 (j / 64) + 64 p + j % 64], each
 * plane of 64 elements a tile row; q2_vnni_sums.h's xq4.) Extra term i
 * covers block extra[i].. with extra_digits + 4 g i in
 * the same layout. */
typedef struct qg_xfix_row {
  const int8_t *digits;
  const qg_xfix_block *blocks;
  const qg_xfix_term *extra;
  const int8_t *extra_digits;
  int nextra;
} qg_xfix_row;

/* Bytes of workspace one row of k takes (64-byte aligned pieces). */
size_t qg_xfix_row_bytes(int64_t k, int g);

/* Widest block the quantizer takes. */
#define QG_XFIX_BLOCK_MAX 128

/* Bits of q: term 0's (three digits) and the further terms' (one). */
#define QG_XFIX_BITS0 22
#define QG_XFIX_BITS_MORE 6

/* One term of one block: from the residuals res[0..g) (x itself for term
 * 0; always f32 values, see below) the digits (layout above, at out), the
 * term's scale and digit sums, res replaced by what the term leaves, and
 * the block's share of P after it, sum_j (res_j / x_j)^2, with a relative
 * error under QG_XFIX_MARGIN; < 0 when some res_j is not finite (the block
 * then goes to the exact path). bits: QG_XFIX_BITS0 or QG_XFIX_BITS_MORE.
 * Every step is exact in f32: with e chosen so that max |res| <
 * 2^(e+bits), res_j 2^-e rounds to an integer q, |q| <= 2^bits, and res_j
 * - q 2^e is a multiple of the smaller of ulp(res_j) and 2^e no larger
 * than |res_j|, so an f32 again. A bf16 x (8-bit mantissas)
 * is held exactly by term 0; an f32 x leaves each element a relative
 * error under 2^-22 times the block's largest over the element, which P
 * counts. The hot part of the quantizer: a level may bring its
 * own, which must give the same digits, scales and sums and differ in the
 * P share only by rounding. */
typedef double (*qg_xfix_term_fn)(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t);
double qg_xfix_term_portable(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t);
#define QG_XFIX_MARGIN 1e-6

/* Quantizes x[k] into ws (qg_xfix_row_bytes of 64-byte aligned memory)
 * with the given term function and returns the row's view. A function of
 * x alone: batched rows and any thread count see the same representation.
 * It is qg_xfix_first over all blocks, then qg_xfix_finish. */
qg_xfix_row qg_xfix_quantize(const float *x, int64_t k, int g, void *ws, qg_xfix_term_fn term);

/* The two phases, for callers that spread the first over threads: term 0
 * of blocks [b0, b1) (each block alone: any split gives the same bytes),
 * then, once every block of the row has its term 0, the further terms and
 * the view (serial: the row's P decides which blocks get them). */
void qg_xfix_first(const float *x, int64_t k, int g, void *ws, qg_xfix_term_fn term, int64_t b0, int64_t b1);
qg_xfix_row qg_xfix_finish(const float *x, int64_t k, int g, void *ws, qg_xfix_term_fn term);

#endif
