/* Host side of the lab: weights in the packed formats of DESIGN.md section 4,
 * their repack into the lab's device layout (layout.h), activations
 * (normal and adversarial), the double-precision reference on sampled rows
 * and the accuracy contract check. */
#ifndef LAB_HOST_DATA_H
#define LAB_HOST_DATA_H

#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "layout.h"

namespace lab {

/* A weight in its packed (DESIGN.md) form. */
struct Weight {
  int fmt;
  int64_t n, k;
  int group;                  /* Q2_0: 64 or 128; NF4: 64 */
  std::vector<uint8_t> data;  /* NF4 n*k/2 code bytes; Q2_0 n*(k/g) blocks [fp16 d][g/4 bytes] */
  std::vector<float> scales;  /* NF4 n*k/64 */

  int code(int64_t r, int64_t kk) const;
  double scale(int64_t r, int64_t kk) const;
  double value(int64_t r, int64_t kk) const;
  size_t packed_bytes() const;
};

/* The k position of the one large activation of 64-block b in the
 * adversarial patterns; rows r % 4 == 3 get the zero code there (NF4 7,
 * Q2_0 1), so that their R_i is made of the tiny elements alone. */
inline int adv_pos(int64_t b) { return (int)((b * 37 + 11) % 64); }

/* Random codes and scales (a few zero NF4 scales), forced zeros as above. */
Weight make_weight(int fmt, int64_t n, int64_t k, uint64_t seed);
/* The correlated-error weight of the contract check: rows r < n / 2 hold
 * one code repeated over all of k (NF4 code r % 16, Q2_0 code r % 4),
 * the other rows random codes; all scales positive. */
Weight make_weight_corr(int fmt, int64_t n, int64_t k, uint64_t seed);
/* layout.h stream: tiles * (k / KC) chunks. */
std::vector<uint8_t> repack(const Weight &w);
/* One Q2_0 word of layout.h: the lane-t codes of (row, 64-block). */
uint32_t q2_lane_word(const Weight &w, int64_t row, int64_t blk, int t);

/* kPositive: uniform in [0.5, 1.5) (all-positive activations, as after
 * SiLU-gated layers): rounding errors of one sign add up over k. */
enum XPattern { kNormal = 0, kAdversarial = 1, kExtreme = 2, kPositive = 3 };
/* m rows of k activations (values exactly as uploaded: bf16-rounded when
 * bf16), and gamma; bits[] holds the upload bytes. */
struct Acts {
  int64_t m, k;
  bool bf16;
  std::vector<float> x, gamma; /* values */
  std::vector<uint8_t> xbits, gbits;
};
Acts make_acts(int64_t m, int64_t k, bool bf16, int pattern, uint64_t seed);

/* Reference for rows[] and activation rows 0..m-1: ref[a * rows + i], R. */
struct Ref {
  std::vector<int64_t> rows;
  std::vector<double> ref, R;
};
Ref reference(const Weight &w, const Acts &x, int64_t m, bool norm, float eps, const std::vector<int64_t> &rows);
std::vector<int64_t> sample_rows(int64_t n, int count);

/* Contract check of y ([m][n], f32 or bf16) on the reference rows. */
struct Check {
  bool pass = true;
  int64_t fails = 0, nan = 0, unwritten = 0;
  double worst = 0.0; /* max |y - ref| / tolerance */
};
Check check(const Ref &r, const void *y, int64_t m, int64_t n, bool y_bf16);
/* Poison pattern left anywhere in y (0xff bytes: NaN in f32 and bf16). */
int64_t count_unwritten(const void *y, int64_t elems, bool y_bf16);

uint64_t fnv1a(const void *p, size_t n);
float bf16_round(float f);
uint16_t f32_to_bf16_bits(float f);

/* Runs f(i) for i in [0, n) on the machine's cores. */
void parallel_for(int64_t n, const std::function<void(int64_t)> &f);

}  // namespace lab

#endif
