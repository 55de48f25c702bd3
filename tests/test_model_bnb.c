/*
 * bitsandbytes NF4 checkpoints, built here from bitsandbytes' documented
 * layout (no bitsandbytes package on this machine), loaded as qgemv NF4.
 * Each fixture encodes facts read in the bitsandbytes source:
 * - nn/modules.py Linear4bit._save_to_state_dict: NAME holds the packed
 *   weight; NAME.absmax, NAME.quant_map (and nested_absmax,
 *   nested_quant_map) and NAME.quant_state.bitsandbytes__nf4 hold
 *   QuantState.as_dict(packed=True) (functional.py);
 * - utils.py pack_dict_to_tensor: the non-tensor items (quant_type,
 *   blocksize, dtype, shape, nested_*) as json.dumps text in a uint8
 *   tensor;
 * - backends/default/ops.py quantize_4bit: blocks of blocksize over the
 *   flattened weight, absmax per block, code = bucketize against the
 *   midpoints of the table (a tie goes to the lower code), packed
 *   (q[2j] << 4) | q[2j+1]: element 2j in the HIGH nibble; the packed
 *   tensor has shape [(n*k+1)/2, 1];
 * - functional.py quantize_4bit with compress_statistics: offset =
 *   absmax.mean(), absmax - offset quantized blockwise in blocks of 256
 *   with an 8-bit code (nested_quant_map), nested_absmax per block; and
 *   dequantize_4bit: absmax = code[q] * nested_absmax + offset, in f32;
 * - functional.py get_4bit_type("nf4"): the 16 NormalFloat values.
 * The expected values are computed here from those rules, not by the
 * library. Needs jansson (safetensors headers): SKIP (77) without it.
 */
#include <config.h>

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "modelfile.h"
#include "testutil.h"

#ifdef QG_HAVE_JANSSON

/* get_4bit_type("nf4"), transcribed */
static const float NF4[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f, -0.28444138169288635f,
    -0.18477343022823334f, -0.09105003625154495f, 0.0f, 0.07958029955625534f, 0.16093020141124725f,
    0.24611230194568634f, 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f,
    1.0f};

enum { N = 96, K = 1024, BLOCKS = N * K / 64, NESTED = 256, GROUPS = (BLOCKS + NESTED - 1) / NESTED };

/* bucketize(v, midpoints), right=False: the first code whose upper
 * midpoint is >= v, so a tie goes to the lower code. */
static int nearest(const float *code, int count, float v) {
  int c = 0;
  while (c < count - 1 && v > (code[c] + code[c + 1]) / 2) c++;
  return c;
}

typedef struct bnb_file {
  float w[N * K];
  uint8_t packed[N * K / 2];
  float absmax[BLOCKS];
  /* double quantization */
  uint8_t qabsmax[BLOCKS];
  float nested_map[256], nested_absmax[GROUPS], offset;
  float scale[BLOCKS]; /* the scale bitsandbytes dequantizes with */
} bnb_file;

static void make_weights(bnb_file *f, bool nested) {
  rng r = {11};
  fill_random(&r, DIST_NORMAL, f->w, N * K);
  for (int b = 0; b < BLOCKS; b++) {
    float amax = 0;
    for (int j = 0; j < 64; j++) amax = fmaxf(amax, fabsf(f->w[b * 64 + j]));
    f->absmax[b] = amax;
    for (int j = 0; j < 64; j += 2) {
      int hi = nearest(NF4, 16, f->w[b * 64 + j] * (1.0f / amax));
      int lo = nearest(NF4, 16, f->w[b * 64 + j + 1] * (1.0f / amax));
      f->packed[(b * 64 + j) / 2] = (uint8_t)(hi << 4 | lo);
    }
    f->scale[b] = amax;
  }
  if (!nested) return;
  /* any ascending 8-bit code does: the loader reads the stored map */
  for (int i = 0; i < 256; i++) f->nested_map[i] = -1.0f + (float)i * (2.0f / 255.0f);
  double sum = 0;
  for (int b = 0; b < BLOCKS; b++) sum += f->absmax[b];
  f->offset = (float)(sum / BLOCKS);
  for (int g = 0; g < GROUPS; g++) {
    float amax = 0;
    for (int b = g * NESTED; b < BLOCKS && b < (g + 1) * NESTED; b++) amax = fmaxf(amax, fabsf(f->absmax[b] - f->offset));
    f->nested_absmax[g] = amax;
  }
  for (int b = 0; b < BLOCKS; b++) {
    float amax = f->nested_absmax[b / NESTED];
    f->qabsmax[b] = (uint8_t)nearest(f->nested_map, 256, (f->absmax[b] - f->offset) / amax);
    f->scale[b] = f->nested_map[f->qabsmax[b]] * amax + f->offset;
  }
}

/* Options that spoil one fact each. */
typedef struct spoil {
  const char *quant_type;
  int blocksize;
  bool bad_quant_map, no_absmax, short_nested_absmax, bad_json, extra_packed;
} spoil;

static mf_buf make_file(bnb_file *f, bool nested, const spoil *sp) {
  static const spoil none = {0};
  if (!sp) sp = &none;
  char json[512];
  if (sp->bad_json)
    snprintf(json, sizeof json, "{\"quant_type\": \"nf4\", \"blocksize\": ");
  else
    snprintf(json, sizeof json, "{\"quant_type\": \"%s\", \"blocksize\": %d, \"dtype\": \"bfloat16\", \"shape\": [%d, %d]%s",
             sp->quant_type ? sp->quant_type : "nf4", sp->blocksize ? sp->blocksize : 64, N, K,
             nested ? ", \"nested_blocksize\": 256, \"nested_dtype\": \"float32\", \"nested_offset\": " : "}");
  if (nested && !sp->bad_json) {
    size_t len = strlen(json);
    snprintf(json + len, sizeof json - len, "%.9g}", (double)f->offset);
  }
  static float map[16];
  memcpy(map, NF4, sizeof map);
  if (sp->bad_quant_map) map[3] = -0.4f;
  const char *base = "model.layers.0.mlp.down_proj.weight";
  mf_entry e[7];
  int n = 0;
  e[n++] = (mf_entry){base, "U8", 2, {N * K / 2 + (sp->extra_packed ? 1 : 0), 1}, f->packed,
                      N * K / 2 + (sp->extra_packed ? 1 : 0)};
  if (!sp->no_absmax)
    e[n++] = nested ? (mf_entry){"model.layers.0.mlp.down_proj.weight.absmax", "U8", 1, {BLOCKS}, f->qabsmax, BLOCKS}
                    : (mf_entry){"model.layers.0.mlp.down_proj.weight.absmax", "F32", 1, {BLOCKS}, f->absmax,
                                 sizeof f->absmax};
  e[n++] = (mf_entry){"model.layers.0.mlp.down_proj.weight.quant_map", "F32", 1, {16}, map, sizeof map};
  if (nested) {
    int groups = GROUPS - (sp->short_nested_absmax ? 1 : 0);
    e[n++] = (mf_entry){"model.layers.0.mlp.down_proj.weight.nested_absmax", "F32", 1, {groups}, f->nested_absmax,
                        (size_t)groups * 4};
    e[n++] = (mf_entry){"model.layers.0.mlp.down_proj.weight.nested_quant_map", "F32", 1, {256}, f->nested_map,
                        sizeof f->nested_map};
  }
  e[n++] = (mf_entry){"model.layers.0.mlp.down_proj.weight.quant_state.bitsandbytes__nf4", "U8", 1,
                      {(int64_t)strlen(json)}, json, strlen(json)};
  return mf_safetensors(e, n, "{\"format\":\"pt\"}");
}

static const char *const WEIGHT = "model.layers.0.mlp.down_proj.weight";

static void check_loaded(bool nested) {
  bnb_file *f = calloc(1, sizeof *f);
  make_weights(f, nested);
  mf_buf b = make_file(f, nested, NULL);
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  qgemv_model_tensor info;
  EXPECT_OK(qgemv_model_tensor_info(m, qgemv_model_find(m, WEIGHT), &info));
  EXPECT(info.use == QGEMV_USE_WEIGHT && info.format == QGEMV_NF4 && info.group == 64 && info.ndims == 2 &&
             info.shape[0] == N && info.shape[1] == K,
         "listed as use %d format %d %lld x %lld: %s", info.use, info.format, (long long)info.shape[0],
         (long long)info.shape[1], info.note);
  for (int64_t i = 0; i < qgemv_model_tensor_count(m); i++) {
    qgemv_model_tensor t;
    EXPECT_OK(qgemv_model_tensor_info(m, i, &t));
    if (strcmp(t.name, WEIGHT) != 0)
      EXPECT(t.use == QGEMV_USE_PART && strstr(t.note, WEIGHT), "%s: use %d (%s)", t.name, t.use, t.note);
  }
  qgemv_weight_desc d;
  EXPECT_OK(qgemv_model_weight(m, WEIGHT, 0, &d));
  ck_assert(d.format == QGEMV_NF4 && d.n == N && d.k == K && d.group == 64);
  const uint8_t *data = d.data;
  for (int j = 0; j < N * K / 2; j++) /* element 2j moves to the low nibble */
    EXPECT(data[j] == (uint8_t)(f->packed[j] >> 4 | f->packed[j] << 4), "byte %d: 0x%02x from 0x%02x", j, data[j],
           f->packed[j]);
  for (int i = 0; i < BLOCKS; i++)
    EXPECT(memcmp(&d.scales[i], &f->scale[i], 4) == 0, "scale %d is %.9g, bitsandbytes dequantizes with %.9g", i,
           (double)d.scales[i], (double)f->scale[i]);
  /* the values bitsandbytes' dequantize_4bit gives: code[nibble] * scale */
  float *w = malloc(N * K * sizeof *w);
  EXPECT_OK(qgemv_dequantize(&d, w));
  for (int i = 0; i < N * K; i++) {
    int nib = i % 2 ? f->packed[i / 2] & 15 : f->packed[i / 2] >> 4;
    float want = NF4[nib] * f->scale[i / 64];
    EXPECT(w[i] == want, "value %d is %g, bitsandbytes gives %g", i, (double)w[i], (double)want);
  }
  /* a second call gives the same conversion */
  qgemv_weight_desc again;
  EXPECT_OK(qgemv_model_weight(m, WEIGHT, 64, &again));
  ck_assert_ptr_eq(again.data, d.data);
  /* and it runs: cpu against the oracle */
  qgemv_ctx *ctx;
  qgemv_weight *wt;
  qgemv_tensor *x, *y;
  float xh[K], yh[N];
  for (int j = 0; j < K; j++) xh[j] = cosf(0.7f * (float)j);
  EXPECT_OK(qgemv_open("cpu", &ctx));
  EXPECT_OK(qgemv_weight_upload(ctx, &d, &wt));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, K, &x));
  EXPECT_OK(qgemv_tensor_new(ctx, QGEMV_F32, 1, N, &y));
  EXPECT_OK(qgemv_tensor_write(x, xh, sizeof xh));
  EXPECT_OK(qgemv_matvec(ctx, wt, x, y, NULL));
  EXPECT_OK(qgemv_sync(ctx));
  EXPECT_OK(qgemv_tensor_read(y, yh, sizeof yh));
  char where[128];
  double worst = tu_check_contract(&d, 1, QGEMV_F32, xh, QGEMV_F32, NULL, 0, QGEMV_F32, yh, where, sizeof where);
  EXPECT(worst <= 1.0, "worst %.3g of the bound at %s", worst, where);
  qgemv_close(ctx);
  qgemv_model_close(m);
  free(w);
  free(f);
  mf_free(&b);
}

START_TEST(plain_absmax) { check_loaded(false); }
END_TEST

START_TEST(double_quantized_absmax) { check_loaded(true); }
END_TEST

static void expect_refused(bool nested, spoil sp, const char *needle, const char *what) {
  bnb_file *f = calloc(1, sizeof *f);
  make_weights(f, nested);
  mf_buf b = make_file(f, nested, &sp);
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  qgemv_model_tensor info;
  EXPECT_OK(qgemv_model_tensor_info(m, qgemv_model_find(m, WEIGHT), &info));
  qgemv_weight_desc d;
  qgemv_status s = qgemv_model_weight(m, WEIGHT, 0, &d);
  EXPECT(info.use == QGEMV_USE_NONE && s == QGEMV_ERR_UNSUPPORTED && strstr(qgemv_last_error(), needle),
         "%s: use %d, %s (%s), expected UNSUPPORTED mentioning '%s'", what, info.use, qgemv_status_str(s),
         qgemv_last_error(), needle);
  qgemv_model_close(m);
  free(f);
  mf_free(&b);
}

START_TEST(refusals) {
  expect_refused(false, (spoil){.blocksize = 128}, "blocksize 128", "blocksize 128");
  expect_refused(true, (spoil){.blocksize = 256}, "64 only", "blocksize 256");
  expect_refused(false, (spoil){.quant_type = "fp4"}, "fp4", "FP4");
  expect_refused(false, (spoil){.bad_quant_map = true}, "quant_map[3]", "a quant_map that is not NF4");
  expect_refused(false, (spoil){.no_absmax = true}, "absmax", "no absmax");
  expect_refused(true, (spoil){.no_absmax = true}, "absmax", "no absmax (nested)");
  expect_refused(true, (spoil){.short_nested_absmax = true}, "nested_absmax", "too few nested_absmax");
  expect_refused(false, (spoil){.bad_json = true}, "not JSON", "quant_state not JSON");
  expect_refused(false, (spoil){.extra_packed = true}, "packed bytes", "packed size wrong");
}
END_TEST

START_TEST(quant_state_without_weight) {
  const char *json = "{\"quant_type\": \"nf4\", \"blocksize\": 64, \"dtype\": \"float16\", \"shape\": [1, 64]}";
  mf_entry e = {"lonely.weight.quant_state.bitsandbytes__nf4", "U8", 1, {(int64_t)strlen(json)}, json, strlen(json)};
  mf_buf b = mf_safetensors(&e, 1, NULL);
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  qgemv_model_tensor info;
  EXPECT_OK(qgemv_model_tensor_info(m, 0, &info));
  EXPECT(info.use == QGEMV_USE_PART && strstr(info.note, "missing"), "use %d: %s", info.use, info.note);
  qgemv_model_close(m);
  mf_free(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("model_bnb");
  TCase *tc = tcase_create("bitsandbytes");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, plain_absmax);
  tcase_add_test(tc, double_quantized_absmax);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, quant_state_without_weight);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#else

int main(void) {
  printf("SKIP: this build has no jansson, so safetensors (and bitsandbytes) files are not read\n");
  return TU_SKIP;
}

#endif
