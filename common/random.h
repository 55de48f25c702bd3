/* Deterministic random data for the qgemv tool and the test suites (not
 * part of the library): splitmix64, and the distributions every check
 * draws from, none of which yields a zero. */
#ifndef QGEMV_COMMON_RANDOM_H
#define QGEMV_COMMON_RANDOM_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng { uint64_t s; } rng;
uint64_t rng_next(rng *r);
double rng_uniform(rng *r); /* [0, 1) */
double rng_normal(rng *r);

typedef enum { DIST_NORMAL, DIST_HEAVY, DIST_LARGE, DIST_TINY, DIST_COUNT } dist_kind;
const char *dist_name(dist_kind d);
void fill_random(rng *r, dist_kind d, float *out, size_t count);

#endif
