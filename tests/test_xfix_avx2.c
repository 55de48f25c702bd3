/*
 * The avx2 level's term of the activation quantizer (xfix_avx2.c) against
 * the portable one (cpu_xfix.c), on internals, both compiled in here:
 * cpu_xfix.h requires the same digits, scale and digit sums, the same
 * residuals, and the P share up to rounding, for every input. The suites
 * that run the level through the API would only see a wrong digit as an
 * error within or beyond the contract; this sees it at once. Inputs: every
 * f32 bit pattern, values over the whole exponent range (subnormals
 * included), sparse and signed zeros, bf16 values, non-finite elements;
 * four terms each, so residuals feed the next term as in the quantizer
 * (term 0 with 22 bits, the others with 6: one digit, which the test
 * checks, since the avx2 kernel computes only that plane for them).
 * Skipped (a note) off x86-64 and on a CPU without AVX2, FMA and F16C.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

static unsigned long long state = 88172645463325252ull;
static unsigned rnd(void) { /* xorshift64: reproducible */
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return (unsigned)state;
}

static float finite_or(float f, float other) { return isfinite(f) ? f : other; }

static float value(int mode) {
  unsigned u = rnd();
  float f;
  switch (mode) {
  case 0: /* uniform in [-1, 1] */
    return ((float)(int)(rnd() % 2000001u) - 1e6f) / 1e6f;
  case 1: /* any bits */
    memcpy(&f, &u, sizeof f);
    return finite_or(f, 1.0f);
  case 2: { /* 2^-150 .. 2^150, either sign */
    float v = ldexpf((float)(rnd() % 1000u) / 999.0f, (int)(rnd() % 300u) - 150);
    return rnd() & 1u ? -v : v;
  }
  case 3: /* mostly zeros of either sign, and powers of two */
    return rnd() % 4u ? (rnd() & 1u ? -0.0f : 0.0f) : ldexpf(1.0f, (int)(rnd() % 277u) - 149);
  default: { /* bf16 */
    unsigned b = u & 0xffff0000u;
    memcpy(&f, &b, sizeof f);
    return finite_or(f, 0.5f);
  }
  }
}

/* Whether the avx2 term can run here; else why not (the test then
 * reports SKIP, 77). */
static const char *why_not_here(void) {
#if !defined(__x86_64__)
  return "not x86-64";
#else
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")))
    return "no AVX2, FMA and F16C on this CPU";
  return NULL;
#endif
}

START_TEST(test_same_terms) {
#if defined(__x86_64__)
  /* valgrind runs (QGEMV_TEST_QUICK=1): a tenth of the inputs */
  const int inputs = getenv("QGEMV_TEST_QUICK") ? 2000 : 20000;
  long terms = 0;
  for (int it = 0; it < inputs; it++) {
    const int g = it & 1 ? 128 : 64, mode = it % 5;
    float x[QG_XFIX_BLOCK_MAX], r1[QG_XFIX_BLOCK_MAX], r2[QG_XFIX_BLOCK_MAX];
    for (int j = 0; j < g; j++) x[j] = value(mode);
    if (it % 97 == 0) x[rnd() % (unsigned)g] = it & 2 ? INFINITY : NAN;
    memcpy(r1, x, sizeof x);
    memcpy(r2, x, sizeof x);
    for (int t = 0; t < 4; t++, terms++) {
      int8_t o1[4 * QG_XFIX_BLOCK_MAX], o2[4 * QG_XFIX_BLOCK_MAX];
      qg_xfix_term t1, t2;
      memset(o1, 0x55, sizeof o1);
      memset(o2, 0x55, sizeof o2);
      const int bits = t ? QG_XFIX_BITS_MORE : QG_XFIX_BITS0; /* as the quantizer takes them */
      double p1 = qg_xfix_term_portable(x, r1, g, bits, o1, &t1), p2 = qg_q2_avx2_xfix(x, r2, g, bits, o2, &t2);
      ck_assert_msg((p1 < 0.0) == (p2 < 0.0), "input %d term %d: non-finite seen by one term only", it, t);
      if (p1 < 0.0) break;
      ck_assert_msg(t1.scale == t2.scale, "input %d term %d: scale %g, portable %g", it, t, t2.scale, t1.scale);
      ck_assert_msg(memcmp(t1.dsum, t2.dsum, sizeof t1.dsum) == 0, "input %d term %d: digit sums differ", it, t);
      ck_assert_msg(memcmp(o1, o2, 4u * (size_t)g) == 0, "input %d term %d: digits differ", it, t);
      /* a further term has one digit: the avx2 kernel computes plane 0 only */
      int nz = 0;
      for (int j = 0; t && j < g; j++) nz |= o2[16 * (j / 4) + 4 + j % 4] | o2[16 * (j / 4) + 8 + j % 4];
      ck_assert_msg(nz == 0 && (t == 0 || (t2.dsum[1] == 0 && t2.dsum[2] == 0)),
                    "input %d term %d: a further term with digits past the first", it, t);
      int j = 0; /* the first residual that differs (one assertion per term: each costs a write to check's pipe) */
      while (j < g && r1[j] == r2[j]) j++;
      ck_assert_msg(j == g, "input %d term %d: residual %d is %a, portable %a", it, t, j, r2[j], r1[j]);
      /* the sums of g squares in another order: far under 1e-12 relative */
      ck_assert_msg(fabs(p1 - p2) <= 1e-12 * p1, "input %d term %d: P share %.17g, portable %.17g", it, t, p2, p1);
    }
  }
  ck_assert_int_gt(terms, 2L * inputs);
#endif
}
END_TEST

int main(void) {
  const char *why = why_not_here();
  if (why) {
    fprintf(stderr, "test_xfix_avx2: %s: skipped\n", why);
    return 77;
  }
  Suite *s = suite_create("xfix_avx2");
  TCase *tc = tcase_create("terms");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_same_terms);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
