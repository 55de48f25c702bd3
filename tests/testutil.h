/* Helpers shared by the Check suites: seeded random data of several
 * distributions, quantized host weights, poisoned and guarded outputs, and
 * the accuracy contract (DESIGN.md s.5) against qgemv_reference_matvec. */
#ifndef QGEMV_TESTUTIL_H
#define QGEMV_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/random.h" /* rng, the distributions of test data */
#include "qgemv.h"

/* Exit status automake reads as SKIP. */
#define TU_SKIP 77

/* Format i of the library's list (0 .. qgemv_format_count() - 1): the
 * suites that cover "every format" take it from there. */
qgemv_format_info tu_format(int i);
/* k rounded up to whole blocks of format i, so that a suite's shapes suit
 * every format (unchanged for a k that already does). */
int64_t tu_whole_blocks(int i, int64_t k);

/* True when QGEMV_TEST_QUICK is set and not "0" (make check-valgrind and
 * the release check in CI): the suites trim their sizes and counts. */
bool tu_quick(void);

/* True when the list in environment variable var (words separated by
 * spaces or commas) names word (QGEMV_TEST_LEVELS, QGEMV_TEST_REQUIRE). */
bool tu_env_lists(const char *var, const char *word);
/* False, with a line on stderr for each, when QGEMV_TEST_LEVELS or
 * QGEMV_TEST_REQUIRE names something that is not a CPU level, or when a
 * required level is one QGEMV_TEST_LEVELS leaves out: a suite that took
 * such a list would run nothing and pass. */
bool tu_env_levels_valid(void);

/* A host weight quantized from random data with qgemv_quantize. */
typedef struct tu_weight {
  qgemv_weight_desc desc;
  void *data;
  float *scales;
} tu_weight;
/* Aborts the test (Check assertion) on failure. */
void tu_weight_make(rng *r, dist_kind d, qgemv_format f, int32_t group, int64_t n, int64_t k, tu_weight *out);
void tu_weight_free(tu_weight *w);

/* count f32 values converted to dtype t in a new malloc'ed buffer. */
void *tu_convert(const float *src, size_t count, qgemv_dtype t);
size_t tu_dtype_size(qgemv_dtype t);
/* Element i of a host array of dtype t. */
double tu_elem(qgemv_dtype t, const void *p, size_t i);

/* A host buffer of `bytes` followed by a guard region of known bytes. */
#define TU_GUARD_BYTES 256
typedef struct tu_guarded {
  unsigned char *mem;
  size_t bytes;
} tu_guarded;
tu_guarded tu_guarded_new(size_t bytes);
/* Fills the payload with 0xff (NaN in f32 and bf16) and the guard with a
 * pattern. */
void tu_poison(tu_guarded *g);
/* True when the guard still holds its pattern. */
bool tu_guard_intact(const tu_guarded *g);
void tu_guarded_free(tu_guarded *g);

/* One element y against the oracle's ref and bound (qgemv_reference_matvec's
 * R) under the accuracy contract, as a fraction of the allowed error (<= 1
 * passes; a bound of 0 asks for y exact): 1e-3 bound, plus 2^-8 |ref| for a
 * bf16 y; NaN only where the oracle has one, else infinity. */
double tu_contract_ratio(double y, double ref, double bound, bool y_bf16);
/* The error the contract allows that element: the ratio's denominator. */
double tu_contract_allowed(double ref, double bound, bool y_bf16);

/* Checks y ([m, n] of y_dtype) against the oracle for this weight, x and
 * optional gamma under the accuracy contract; every element must have been
 * written (no poison left) and be free of NaN unless the oracle has one.
 * Returns the worst error as a fraction of the allowed bound (<= 1 passes);
 * fills `where` with the worst element's description. */
double tu_check_contract(const qgemv_weight_desc *w, int64_t m, qgemv_dtype x_dtype, const void *x,
                         qgemv_dtype gamma_dtype, const void *gamma, float eps, qgemv_dtype y_dtype,
                         const void *y, char *where, size_t where_size);

#endif
