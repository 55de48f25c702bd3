#include "random.h"

#include <math.h>

uint64_t rng_next(rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

double rng_normal(rng *r) {
  double u1 = rng_uniform(r), u2 = rng_uniform(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

const char *dist_name(dist_kind d) {
  static const char *const names[] = {"normal", "heavy-tailed", "large", "tiny"};
  return d < DIST_COUNT ? names[d] : "?";
}

void fill_random(rng *r, dist_kind d, float *out, size_t count) {
  for (size_t i = 0; i < count; i++) {
    double v = rng_normal(r);
    switch (d) {
    case DIST_HEAVY: v = v / (fabs(rng_normal(r)) + 0.05); break; /* Cauchy-like tails */
    case DIST_LARGE: v *= 3.0e3; break;
    case DIST_TINY: v *= 1.0e-4; break;
    default: break;
    }
    if (v == 0.0) v = 1e-3;
    out[i] = (float)v;
  }
}
