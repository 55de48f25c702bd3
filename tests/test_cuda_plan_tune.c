/*
 * QGEMV_CUDA_PLAN, the CUDA plan's tuning override (plan_tune.c): what it
 * accepts, what it refuses and how the refusal reads. Plain C: it runs on
 * every machine, with or without CUDA. The plan's use of the override is
 * checked by test_cuda_layout (emulated) and test_cuda_backend (GPU).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../src/backend-cuda/plan_tune.h"

static qgc_plan_tune parsed(const char *text) {
  qgc_plan_tune t;
  char err[160] = "";
  ck_assert_msg(qgc_plan_tune_parse(text, &t, err, sizeof err), "'%s' refused: %s", text, err);
  return t;
}

START_TEST(test_accepts) {
  const qgc_plan_tune none = parsed(NULL), empty = parsed("");
  ck_assert(memcmp(&none, &(qgc_plan_tune){0}, sizeof none) == 0);
  ck_assert(memcmp(&empty, &(qgc_plan_tune){0}, sizeof empty) == 0);
  const qgc_plan_tune a = parsed("ks=8,t=1,b=cta,w=16,phases=3");
  ck_assert_int_eq(a.ks, 8);
  ck_assert_int_eq(a.t, 1);
  ck_assert_int_eq(a.b, QGC_B_CTA);
  ck_assert_int_eq(a.w, 16);
  ck_assert_int_eq(a.phases, 3);
  const qgc_plan_tune b = parsed("b=warp");
  ck_assert_int_eq(b.b, QGC_B_WARP);
  ck_assert_int_eq(b.ks + b.t + b.w + b.phases + b.x, 0);
  ck_assert_int_eq(parsed("x=int").x, QGC_X_INT);
  ck_assert_int_eq(parsed("x=direct,ks=2").x, QGC_X_DIRECT);
  ck_assert_int_eq(parsed("x=auto").x, QGC_X_AUTO);
  ck_assert_int_eq(parsed("w=14,ks=2").w, 14); /* W / KS = 7 row groups: 128 CTAs for 1792 tiles */
  ck_assert_int_eq(parsed("w=28,ks=2,t=1").w, 28); /* the wide kernel: 14 row groups of one tile */
  ck_assert_int_eq(parsed("ks=1,").ks, 1); /* a trailing comma is harmless */
  ck_assert_int_eq(parsed("st=256").st, 256);
  ck_assert_int_eq(parsed("st=512,ks=2").st, 512);
  ck_assert_int_eq(b.st, 0);
  ck_assert_int_eq(parsed("norm=b2").norm, QGC_NORM_B2);
  ck_assert_int_eq(parsed("ks=4,norm=dg").norm, QGC_NORM_DG);
  ck_assert_int_eq(b.norm, 0);
}
END_TEST

/* Each refusal names what is wrong. */
START_TEST(test_refuses) {
  static const struct {
    const char *text, *says;
  } bad[] = {
      {"ks=3", "power of two"},  {"ks=32", "ks=32"},      {"t=3", "t=3"},
      {"w=0", "w=0"},            {"b=block", "cta or warp"}, {"phases=0", "phases=0"},
      {"ks=8x", "ks=8x"},        {"k=8", "unknown key 'k'"}, {"ks", "not key=value"},
      {"=4", "not key=value"},   {"ks=", "not key=value"},  {"ks=4,,t=1", "not key=value"},
      {"w=4,ks=8", "fewer warps"}, {"w=29", "w=29"}, {"b=warp,phases=2", "needs b=cta"},
      {"ks=99999999999999999999", "ks="}, {"x=int8", "direct, int or auto"}, {"x=", "not key=value"},
      {"st=128", "st is 256 or 512"}, {"st=1024", "st=1024"}, {"st=-512", "st is 256 or 512"},
      {"st=512x", "st=512x"}, {"st=", "not key=value"},
      {"norm=b3", "dg (gamma in A) or b2"}, {"norm=", "not key=value"}, {"norms=b2", "unknown key 'norms'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    qgc_plan_tune t;
    char err[160] = "";
    ck_assert_msg(!qgc_plan_tune_parse(bad[i].text, &t, err, sizeof err), "'%s' accepted", bad[i].text);
    ck_assert_msg(strstr(err, bad[i].says) != NULL, "'%s': message '%s' does not say '%s'", bad[i].text, err,
                  bad[i].says);
  }
}
END_TEST

START_TEST(test_format_round_trip) {
  const char *texts[] = {"", "b=cta,ks=8", "b=warp,ks=16,t=2,w=16", "ks=4,t=1,w=8,phases=5", "b=cta,x=int,ks=8",
                         "x=direct", "x=auto,t=1", "st=512", "ks=2,st=256", "norm=b2",
                         "b=cta,ks=4,norm=dg"};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    char buf[96];
    const qgc_plan_tune t = parsed(texts[i]);
    qgc_plan_tune_format(&t, buf, sizeof buf);
    ck_assert_str_eq(buf, texts[i]);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("cuda_plan_tune");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, test_accepts);
  tcase_add_test(tc, test_refuses);
  tcase_add_test(tc, test_format_round_trip);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
