/*
 * Bad model files are refused with a clear status and message, never a
 * crash: the ggml-written fixture truncated at many points and with every
 * header byte flipped, and GGUF files made here with one fault each
 * (magic, version, counts, dimensions and offsets that overflow or point
 * past the end, misalignment, duplicate names and keys, names that are not
 * UTF-8, bad alignment, arrays nested too deep). Every input is a malloc
 * of exactly its size, so ASan (the sanitizer build) and valgrind (make
 * check-valgrind) see any read past it. Q2_0's g64/g128 rule is checked on
 * files whose extents fit one group, the other, or both.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "modelfile.h"
#include "testutil.h"

static const char *fixture;

/* Opens a copy of exactly `size` bytes; with an opened model, every call
 * is exercised and its bounds checked. Returns the status of the open. */
static qgemv_status open_and_use(const unsigned char *bytes, size_t size) {
  unsigned char *copy = malloc(size ? size : 1);
  ck_assert_ptr_nonnull(copy);
  memcpy(copy, bytes, size);
  qgemv_model *m = (qgemv_model *)0x1;
  qgemv_status s = qgemv_model_open_memory(copy, size, &m);
  if (s != QGEMV_OK) {
    EXPECT(m == NULL && qgemv_last_error()[0], "a refused open must leave *out NULL and say why");
    free(copy);
    return s;
  }
  for (int64_t i = 0; i < qgemv_model_tensor_count(m); i++) {
    qgemv_model_tensor t;
    EXPECT_OK(qgemv_model_tensor_info(m, i, &t));
    EXPECT(t.offset <= size && t.bytes <= size - t.offset, "%s: [%llu, +%llu) lies outside the %zu bytes", t.name,
           (unsigned long long)t.offset, (unsigned long long)t.bytes, size);
    qgemv_weight_desc d;
    static const int32_t groups[] = {0, 64, 128};
    for (int g = 0; g < 3 && t.use == QGEMV_USE_WEIGHT; g++)
      if (qgemv_model_weight(m, t.name, groups[g], &d) == QGEMV_OK) {
        size_t need = qgemv_data_bytes(d.format, d.n, d.k, d.group);
        EXPECT(need > 0 && (const unsigned char *)d.data >= copy &&
                   need <= size - (size_t)((const unsigned char *)d.data - copy),
               "%s: descriptor runs past the file", t.name);
      }
    if (t.use == QGEMV_USE_FLOAT) {
      size_t count = 1;
      for (int j = 0; j < t.ndims; j++) count *= (size_t)t.shape[j];
      float *f = malloc(count ? count * sizeof *f : 1);
      ck_assert_ptr_nonnull(f);
      EXPECT_OK(qgemv_model_read_f32(m, t.name, f, count));
      free(f);
    }
  }
  for (int64_t i = 0; i < qgemv_model_metadata_count(m); i++) {
    qgemv_model_kv kv;
    EXPECT_OK(qgemv_model_metadata(m, i, &kv));
    EXPECT(kv.key && kv.key[0], "metadata %lld has no key", (long long)i);
  }
  qgemv_model_close(m);
  free(copy);
  return QGEMV_OK;
}

/* The fixture cut short anywhere: refused as bad data. */
START_TEST(fixture_truncated) {
  size_t size;
  unsigned char *b = mf_read_file(fixture, &size);
  ck_assert_ptr_nonnull(b);
  size_t step = tu_quick() ? 37 : 1, cuts = 0;
  for (size_t cut = 0; cut < 700; cut += step, cuts++) {
    qgemv_status s = open_and_use(b, cut);
    EXPECT(s == QGEMV_ERR_BAD_DATA, "cut at %zu: %s (%s)", cut, qgemv_status_str(s), qgemv_last_error());
  }
  /* inside each tensor's data, and one byte short */
  int points = tu_quick() ? 8 : 64;
  for (int i = 1; i <= points; i++, cuts++) {
    size_t cut = i == points ? size - 1 : 700 + (size - 700) / (size_t)points * (size_t)i;
    qgemv_status s = open_and_use(b, cut);
    EXPECT(s == QGEMV_ERR_BAD_DATA, "cut at %zu of %zu: %s (%s)", cut, size, qgemv_status_str(s), qgemv_last_error());
  }
  EXPECT(open_and_use(b, size) == QGEMV_OK, "the whole fixture: %s", qgemv_last_error());
  free(b);
}
END_TEST

/* Every byte of the header and tensor infos flipped, one at a time: the
 * open succeeds or says why not; nothing reads outside the file. */
START_TEST(fixture_header_bytes_flipped) {
  size_t size;
  unsigned char *b = mf_read_file(fixture, &size);
  ck_assert_ptr_nonnull(b);
  static const unsigned char masks[] = {0x01, 0x10, 0x80, 0xff};
  int refused = 0, opened = 0;
  size_t step = tu_quick() ? 13 : 1;
  for (size_t i = 0; i < 512; i += step)
    for (size_t mk = 0; mk < sizeof masks; mk++) {
      b[i] ^= masks[mk];
      qgemv_status s = open_and_use(b, size);
      b[i] ^= masks[mk];
      EXPECT(s == QGEMV_OK || s == QGEMV_ERR_BAD_DATA || s == QGEMV_ERR_UNSUPPORTED,
             "byte %zu ^ 0x%02x: unexpected %s (%s)", i, masks[mk], qgemv_status_str(s), qgemv_last_error());
      s == QGEMV_OK ? opened++ : refused++;
    }
  EXPECT(refused > 0 && opened > 0, "flips refused %d, opened %d: both should happen", refused, opened);
  free(b);
}
END_TEST

/* ---- GGUF files with one fault each ---- */

static void head(mf_buf *b, uint32_t version, uint64_t nt, uint64_t nkv) {
  mf_put(b, "GGUF", 4);
  mf_u32(b, version);
  mf_u64(b, nt);
  mf_u64(b, nkv);
}

static void info(mf_buf *b, const char *name, uint32_t ndims, const uint64_t *ne, uint32_t type, uint64_t offset) {
  mf_gstr(b, name);
  mf_u32(b, ndims);
  for (uint32_t d = 0; d < ndims; d++) mf_u64(b, ne[d]);
  mf_u32(b, type);
  mf_u64(b, offset);
}

/* Data after the infos: padding to 32, then `bytes` of 0x11. */
static void data(mf_buf *b, size_t bytes) {
  mf_pad(b, 32);
  for (size_t i = 0; i < bytes; i++) mf_u8(b, 0x11);
}

static void expect_refused(mf_buf *b, qgemv_status want, const char *needle, const char *what) {
  qgemv_status s = open_and_use(b->p, b->len);
  EXPECT(s == want && strstr(qgemv_last_error(), needle), "%s: got %s (%s), expected %s mentioning '%s'", what,
         qgemv_status_str(s), qgemv_last_error(), qgemv_status_str(want), needle);
  mf_free(b);
}

static const uint64_t ne_128x2[] = {128, 2};

START_TEST(bad_magic_and_version) {
  mf_buf b = {0};
  mf_put(&b, "GGUX", 4);
  mf_u32(&b, 3);
  mf_u64(&b, 0);
  mf_u64(&b, 0);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "neither GGUF", "magic GGUX");
  head(&b, 1, 0, 0);
  expect_refused(&b, QGEMV_ERR_UNSUPPORTED, "version 1", "version 1");
  head(&b, 4, 0, 0);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "version 4", "version 4");
  head(&b, 0x03000000u, 0, 0);
  expect_refused(&b, QGEMV_ERR_UNSUPPORTED, "big-endian", "big-endian version");
  mf_put(&b, "GGUF\3\0", 6);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "truncated", "header cut in the version");
  head(&b, 2, 0, 0); /* an empty v2 file is well formed */
  EXPECT(open_and_use(b.p, b.len) == QGEMV_OK, "empty v2 file: %s", qgemv_last_error());
  mf_free(&b);
  EXPECT(open_and_use((const unsigned char *)"", 0) == QGEMV_ERR_BAD_DATA, "an empty file");
}
END_TEST

START_TEST(counts_that_overflow) {
  mf_buf b = {0};
  head(&b, 3, 1ull << 62, 0);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "claims", "tensor count 2^62");
  head(&b, 3, 0, UINT64_MAX);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "claims", "metadata count 2^64-1");
  head(&b, 3, 1, 0);
  info(&b, "w", 2, (const uint64_t[]){1ull << 32, 1ull << 32}, 0, 0);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "overflow", "dimensions 2^32 x 2^32");
  head(&b, 3, 1, 0);
  info(&b, "w", 1, (const uint64_t[]){1ull << 63}, 0, 0);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "overflow", "dimension 2^63");
  head(&b, 3, 1, 0);
  info(&b, "w", 2, (const uint64_t[]){1ull << 31, 1ull << 31}, 0, 0); /* 2^62 f32: bytes overflow */
  data(&b, 64);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "needs", "2^62 f32 values");
  head(&b, 3, 1, 0);
  info(&b, "w", 0, NULL, 0, 0);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "dimensions", "0 dimensions");
  head(&b, 3, 1, 0);
  info(&b, "w", 9, (const uint64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, 0);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "dimensions", "9 dimensions");
  head(&b, 3, 0, 1);
  mf_gstr(&b, "a");
  mf_u32(&b, 9); /* array */
  mf_u32(&b, 4); /* of uint32 */
  mf_u64(&b, 1ull << 60);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "truncated", "array of 2^60 uint32");
  head(&b, 3, 0, 1);
  mf_gstr(&b, "a");
  mf_u32(&b, 8); /* string */
  mf_u64(&b, UINT64_MAX);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "truncated", "string of 2^64-1 bytes");
}
END_TEST

START_TEST(offsets_past_the_end_or_misaligned) {
  mf_buf b = {0};
  head(&b, 3, 1, 0);
  info(&b, "w", 1, (const uint64_t[]){8}, 0, 1ull << 40);
  data(&b, 32);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "past the", "offset 2^40");
  head(&b, 3, 1, 0);
  info(&b, "w", 1, (const uint64_t[]){8}, 0, UINT64_MAX - 31);
  data(&b, 32);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "past the", "offset near 2^64");
  head(&b, 3, 1, 0);
  info(&b, "w", 1, (const uint64_t[]){8}, 0, 8);
  data(&b, 64);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "not a multiple of the alignment", "offset 8");
  head(&b, 3, 1, 0);
  info(&b, "w", 1, (const uint64_t[]){16}, 0, 0); /* 64 bytes of f32, 32 present */
  data(&b, 32);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "needs 64 bytes", "f32 past the end");
  head(&b, 3, 2, 0); /* the first overlaps the second */
  info(&b, "a", 1, (const uint64_t[]){16}, 0, 0);
  info(&b, "b", 1, (const uint64_t[]){8}, 0, 32);
  data(&b, 64);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "before the next tensor", "overlapping tensors");
  head(&b, 3, 1, 0);
  info(&b, "q", 2, ne_128x2, 42, 0); /* Q2_0 2 x 128 needs 68 bytes at least */
  data(&b, 32);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "Q2_0", "Q2_0 past the end");
  head(&b, 3, 1, 0);
  info(&b, "q", 2, (const uint64_t[]){40, 2}, 2, 0); /* Q4_0 rows of 40: not whole blocks */
  data(&b, 64);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "whole blocks", "Q4_0 of 40 per row");
}
END_TEST

START_TEST(names_and_keys) {
  mf_buf b = {0};
  head(&b, 3, 2, 0);
  info(&b, "w", 1, (const uint64_t[]){8}, 0, 0);
  info(&b, "w", 1, (const uint64_t[]){8}, 0, 32);
  data(&b, 64);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "two tensors are named 'w'", "duplicate tensor names");
  static const char *const bad[] = {"\xff", "a\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ab\xe2\x82", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    head(&b, 3, 1, 0);
    info(&b, bad[i], 1, (const uint64_t[]){8}, 0, 0);
    data(&b, 32);
    expect_refused(&b, QGEMV_ERR_BAD_DATA, "UTF-8", "a name that is not UTF-8");
  }
  head(&b, 3, 1, 0); /* a NUL inside a name */
  mf_u64(&b, 3);
  mf_put(&b, "a\0b", 3);
  mf_u32(&b, 1);
  mf_u64(&b, 8);
  mf_u32(&b, 0);
  mf_u64(&b, 0);
  data(&b, 32);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "UTF-8", "a NUL in a name");
  head(&b, 3, 1, 0); /* a valid multi-byte name opens */
  info(&b, "bl\xc3\xb6" "ck.\xe2\x82\xac", 1, (const uint64_t[]){8}, 0, 0);
  data(&b, 32);
  EXPECT(open_and_use(b.p, b.len) == QGEMV_OK, "UTF-8 name: %s", qgemv_last_error());
  mf_free(&b);
  head(&b, 3, 0, 2);
  for (int i = 0; i < 2; i++) {
    mf_gstr(&b, "general.name");
    mf_u32(&b, 8);
    mf_gstr(&b, "x");
  }
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "appears twice", "duplicate metadata key");
  head(&b, 3, 0, 1);
  mf_gstr(&b, "");
  mf_u32(&b, 4);
  mf_u32(&b, 1);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "empty", "empty metadata key");
}
END_TEST

static void alignment_kv(mf_buf *b, uint32_t type, uint64_t v) {
  mf_gstr(b, "general.alignment");
  mf_u32(b, type);
  type == 10 ? mf_u64(b, v) : mf_u32(b, (uint32_t)v);
}

START_TEST(metadata_values) {
  mf_buf b = {0};
  static const uint32_t bad_alignments[] = {0, 3, 48};
  for (int i = 0; i < 3; i++) {
    head(&b, 3, 0, 1);
    alignment_kv(&b, 4, bad_alignments[i]);
    expect_refused(&b, QGEMV_ERR_BAD_DATA, "power of two", "bad alignment");
  }
  head(&b, 3, 0, 1);
  alignment_kv(&b, 10, 32);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "not a uint32", "alignment as uint64");
  head(&b, 3, 0, 1);
  mf_gstr(&b, "flag");
  mf_u32(&b, 7);
  mf_u8(&b, 2);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "bool", "bool of 2");
  head(&b, 3, 0, 1);
  mf_gstr(&b, "x");
  mf_u32(&b, 13);
  mf_u32(&b, 0);
  expect_refused(&b, QGEMV_ERR_BAD_DATA, "not a GGUF type", "value type 13");
  /* arrays nested 9 deep are refused (8 is the limit), 3 deep are read */
  for (int depth = 3; depth <= 9; depth += 6) {
    head(&b, 3, 0, 1);
    mf_gstr(&b, "nested");
    mf_u32(&b, 9);
    for (int d = 1; d < depth; d++) {
      mf_u32(&b, 9);
      mf_u64(&b, 1);
    }
    mf_u32(&b, 8); /* innermost: one string */
    mf_u64(&b, 1);
    mf_gstr(&b, "s");
    if (depth == 9) {
      expect_refused(&b, QGEMV_ERR_BAD_DATA, "nested deeper", "arrays nested 9 deep");
      continue;
    }
    qgemv_model *m;
    EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
    qgemv_model_kv kv;
    EXPECT_OK(qgemv_model_metadata(m, 0, &kv));
    EXPECT(kv.type == QGEMV_VALUE_ARRAY && strcmp(kv.elem_type_name, "array") == 0 && kv.count == 1,
           "nested array read as %s of %s x %llu", kv.type_name, kv.elem_type_name, (unsigned long long)kv.count);
    qgemv_model_close(m);
    mf_free(&b);
  }
  /* every scalar type, read back */
  head(&b, 3, 0, 4);
  mf_gstr(&b, "i8");
  mf_u32(&b, 1);
  mf_u8(&b, 0xfe);
  mf_gstr(&b, "u64");
  mf_u32(&b, 10);
  mf_u64(&b, 1ull << 40);
  mf_gstr(&b, "f32");
  mf_u32(&b, 6);
  mf_f32(&b, 0.5f);
  mf_gstr(&b, "i64");
  mf_u32(&b, 11);
  mf_u64(&b, (uint64_t)-3);
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  qgemv_model_kv kv[4];
  for (int i = 0; i < 4; i++) EXPECT_OK(qgemv_model_metadata(m, i, &kv[i]));
  EXPECT(kv[0].type == QGEMV_VALUE_INT && kv[0].i == -2, "int8 0xfe read as %lld", (long long)kv[0].i);
  EXPECT(kv[1].type == QGEMV_VALUE_UINT && kv[1].u == 1ull << 40, "uint64 read as %llu", (unsigned long long)kv[1].u);
  EXPECT(kv[2].type == QGEMV_VALUE_FLOAT && kv[2].f == 0.5, "float32 read as %g", kv[2].f);
  EXPECT(kv[3].type == QGEMV_VALUE_INT && kv[3].i == -3, "int64 read as %lld", (long long)kv[3].i);
  qgemv_model_close(m);
  mf_free(&b);
}
END_TEST

/* ---- Q2_0: the group told by the extent ---- */

static unsigned char zeros[8192];

static int32_t detected_group(int64_t n, int64_t k, size_t bytes, uint32_t alignment) {
  mf_tensor t = {"q", 42, 2, {(uint64_t)k, (uint64_t)n}, zeros, bytes};
  mf_buf b = mf_gguf(&t, 1, alignment);
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  qgemv_model_tensor info;
  EXPECT_OK(qgemv_model_tensor_info(m, 0, &info));
  EXPECT(info.use == QGEMV_USE_WEIGHT, "Q2_0 %lld x %lld: not a weight (%s)", (long long)n, (long long)k, info.note);
  qgemv_model_close(m);
  mf_free(&b);
  return info.group;
}

START_TEST(q2_0_group_from_extent) {
  /* 16 x 1024: g64 is 4608 bytes, g128 4352; only the file's size fits */
  ck_assert_int_eq(detected_group(16, 1024, 16 * 16 * 18, 32), 64);
  ck_assert_int_eq(detected_group(16, 1024, 16 * 8 * 34, 32), 128);
  /* k = 192 is not a multiple of 128: g64 whatever the padding */
  ck_assert_int_eq(detected_group(2, 192, 2 * 3 * 18, 256), 64);
  /* 1 x 128: 36 or 34 bytes, both within one alignment of the 64 there */
  ck_assert_int_eq(detected_group(1, 128, 36, 32), 0);
  mf_tensor t = {"q", 42, 2, {128, 1}, zeros, 34};
  mf_buf b = mf_gguf(&t, 1, 32);
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  qgemv_weight_desc d;
  ck_assert_int_eq(qgemv_model_weight(m, "q", 0, &d), QGEMV_ERR_INVALID_ARG);
  EXPECT(strstr(qgemv_last_error(), "pass the group"), "message: %s", qgemv_last_error());
  EXPECT_OK(qgemv_model_weight(m, "q", 128, &d));
  ck_assert_int_eq(d.group, 128);
  EXPECT_OK(qgemv_model_weight(m, "q", 64, &d));
  qgemv_model_close(m);
  mf_free(&b);
  /* k = 96: not a qgemv Q2_0 shape; listed, not usable */
  mf_tensor odd = {"odd", 42, 2, {96, 2}, zeros, 64};
  b = mf_gguf(&odd, 1, 32);
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  qgemv_model_tensor info;
  EXPECT_OK(qgemv_model_tensor_info(m, 0, &info));
  EXPECT(info.use == QGEMV_USE_NONE && strstr(info.note, "multiple of 64"), "k=96: %s", info.note);
  ck_assert_int_eq(qgemv_model_weight(m, "odd", 0, &d), QGEMV_ERR_UNSUPPORTED);
  qgemv_model_close(m);
  mf_free(&b);
}
END_TEST

START_TEST(unknown_type_listed_not_used) {
  mf_tensor t = {"mystery", 1000, 1, {8}, zeros, 40};
  mf_buf b = mf_gguf(&t, 1, 32);
  qgemv_model *m;
  EXPECT_OK(qgemv_model_open_memory(b.p, b.len, &m));
  qgemv_model_tensor info;
  EXPECT_OK(qgemv_model_tensor_info(m, 0, &info));
  EXPECT(strcmp(info.type_name, "type 1000") == 0 && info.ggml_type == 1000 && info.use == QGEMV_USE_NONE,
         "type %s (%d) use %d", info.type_name, info.ggml_type, info.use);
  qgemv_weight_desc d;
  ck_assert_int_eq(qgemv_model_weight(m, "mystery", 0, &d), QGEMV_ERR_UNSUPPORTED);
  EXPECT(strstr(qgemv_last_error(), "type 1000"), "message: %s", qgemv_last_error());
  qgemv_model_close(m);
  mf_free(&b);
}
END_TEST

/* A file of our own writer with every byte flipped in turn. */
START_TEST(small_file_every_byte_flipped) {
  static unsigned char q2[2 * 2 * 18];
  static float f32[4 * 64];
  for (size_t i = 0; i < sizeof q2; i++) q2[i] = (unsigned char)(i * 37);
  q2[1] = q2[19] = 0x3c; /* d = 1.0 */
  mf_tensor t[] = {{"q", 42, 2, {128, 2}, q2, sizeof q2}, {"f", 0, 2, {64, 4}, f32, sizeof f32},
                   {"e", 2, 1, {64}, zeros, 36}};
  mf_buf b = mf_gguf(t, 3, 64);
  EXPECT(open_and_use(b.p, b.len) == QGEMV_OK, "the intact file: %s", qgemv_last_error());
  for (size_t i = 0; i < b.len; i += tu_quick() ? 11 : 1)
    for (int bit = 0; bit < 8; bit += tu_quick() ? 7 : 1) {
      b.p[i] ^= (unsigned char)(1u << bit);
      open_and_use(b.p, b.len);
      b.p[i] ^= (unsigned char)(1u << bit);
    }
  mf_free(&b);
}
END_TEST

static Suite *model_corrupt_suite(void) {
  Suite *s = suite_create("model_corrupt");
  TCase *fx = tcase_create("fixture");
  tcase_set_timeout(fx, 600);
  tcase_add_test(fx, fixture_truncated);
  tcase_add_test(fx, fixture_header_bytes_flipped);
  suite_add_tcase(s, fx);
  TCase *made = tcase_create("made");
  tcase_set_timeout(made, 300);
  tcase_add_test(made, bad_magic_and_version);
  tcase_add_test(made, counts_that_overflow);
  tcase_add_test(made, offsets_past_the_end_or_misaligned);
  tcase_add_test(made, names_and_keys);
  tcase_add_test(made, metadata_values);
  tcase_add_test(made, q2_0_group_from_extent);
  tcase_add_test(made, unknown_type_listed_not_used);
  tcase_add_test(made, small_file_every_byte_flipped);
  suite_add_tcase(s, made);
  return s;
}

int main(void) {
  if (!(fixture = mf_fixture())) return TU_SKIP;
  SRunner *sr = srunner_create(model_corrupt_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
