#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tool.h"

/* Rows are made in chunks, in parallel: each chunk draws from its own
 * generator seeded from one draw of r and the chunk's index, so the weight
 * is the same for any thread count, and only a chunk of f32 values exists
 * at a time (a whole 28672 x 8192 weight in f32 would be 940 MB). */
enum { WEIGHT_CHUNK_ROWS = 64 };

int host_weight_make(rng *r, dist_kind d, qgemv_format f, int32_t group, int64_t n, int64_t k, host_weight *out) {
  memset(out, 0, sizeof *out);
  size_t bytes = qgemv_data_bytes(f, n, k, group);
  size_t nscales = qgemv_scale_count(f, n, k, group);
  size_t row_bytes = qgemv_data_bytes(f, 1, k, group), row_scales = qgemv_scale_count(f, 1, k, group);
  if (!bytes || n <= 0 || row_bytes * (size_t)n != bytes || row_scales * (size_t)n != nscales) return -1;
  out->data = malloc(bytes);
  out->scales = nscales ? malloc(nscales * sizeof(float)) : NULL;
  if (!out->data || (nscales && !out->scales)) {
    host_weight_free(out);
    return -1;
  }
  const uint64_t base = rng_next(r);
  const int64_t chunks = (n + WEIGHT_CHUNK_ROWS - 1) / WEIGHT_CHUNK_ROWS;
  int failed = 0;
#pragma omp parallel for schedule(dynamic) reduction(| : failed)
  for (int64_t c = 0; c < chunks; c++) {
    int64_t row0 = c * WEIGHT_CHUNK_ROWS, rows = n - row0 < WEIGHT_CHUNK_ROWS ? n - row0 : WEIGHT_CHUNK_ROWS;
    float *w = malloc((size_t)rows * (size_t)k * sizeof(float));
    if (w == NULL) {
      failed = 1;
      continue;
    }
    rng cr = {base ^ ((uint64_t)c * 0xd1b54a32d192ed03ull)};
    fill_random(&cr, d, w, (size_t)rows * (size_t)k);
    if (qgemv_quantize(f, rows, k, group, w, (unsigned char *)out->data + (size_t)row0 * row_bytes,
                       nscales ? out->scales + (size_t)row0 * row_scales : NULL) != QGEMV_OK)
      failed = 1;
    free(w);
  }
  if (failed) {
    host_weight_free(out);
    return -1;
  }
  out->desc = (qgemv_weight_desc){.format = f, .n = n, .k = k, .group = group, .data = out->data, .scales = out->scales};
  out->bytes = bytes + nscales * sizeof(float);
  return 0;
}

void host_weight_free(host_weight *w) {
  free(w->data);
  free(w->scales);
  w->data = NULL;
  w->scales = NULL;
}

void *to_dtype(const float *src, size_t count, qgemv_dtype t) {
  if (t == QGEMV_F32) {
    float *p = malloc(count * sizeof(float));
    if (p) memcpy(p, src, count * sizeof(float));
    return p;
  }
  uint16_t *p = malloc(count * sizeof(uint16_t));
  if (p)
    for (size_t i = 0; i < count; i++) p[i] = qgemv_f32_to_bf16(src[i]);
  return p;
}

/* Item i joined to buf's first i items by ", ". */
static void join_add(char *buf, size_t size, int i, const char *item) {
  size_t used = i ? strlen(buf) : 0;
  if (used < size) snprintf(buf + used, size - used, "%s%s", i ? ", " : "", item);
}

const char *format_names(char *buf, size_t size, bool labels) {
  qgemv_format_info f;
  buf[0] = '\0';
  for (int i = 0; i < qgemv_format_count() && qgemv_format_get(i, &f) == QGEMV_OK; i++)
    join_add(buf, size, i, labels ? f.label : f.name);
  return buf;
}

bool format_info_of(qgemv_format format, int32_t group, qgemv_format_info *out) {
  if (format == QGEMV_NF4 && group == 0) group = QGEMV_NF4_BLOCK;
  for (int i = 0; qgemv_format_get(i, out) == QGEMV_OK; i++)
    if (out->format == format && out->group == group) return true;
  return false;
}

const char *format_label(qgemv_format format, int32_t group) {
  qgemv_format_info f;
  return format_info_of(format, group, &f) ? f.label : "?";
}

const char *cpu_level_names(char *buf, size_t size) {
  qgemv_cpu_level_info l;
  buf[0] = '\0';
  for (int i = 0; i < qgemv_cpu_level_count() && qgemv_cpu_level_get(i, &l) == QGEMV_OK; i++)
    join_add(buf, size, i, l.name);
  return buf;
}

const char *dtype_label(qgemv_dtype t) { return t == QGEMV_F32 ? "f32" : "bf16"; }

double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void report_failure(const char *what, qgemv_status s) {
  fprintf(stderr, "qgemv: %s: %s: %s\n", what, qgemv_status_str(s), qgemv_last_error());
}

FILE *out_open(const char *cmd, const char *path) {
  if (strcmp(path, "-") == 0) return stdout;
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "qgemv %s: cannot write '%s': %s\n", cmd, path, strerror(errno));
  return f;
}

int out_close(const char *cmd, FILE *f, const char *path) {
  int bad = ferror(f);
  if (f == stdout)
    bad |= fflush(f) != 0;
  else
    bad |= fclose(f) != 0;
  if (bad) fprintf(stderr, "qgemv %s: writing '%s' failed\n", cmd, path);
  return bad ? -1 : 0;
}

const char *const tool_env_vars[] = {
    "QGEMV_BACKEND",   "QGEMV_DEVICE",  "QGEMV_CPU_ISA", "QGEMV_NUM_THREADS",    "QGEMV_CPU_BIND", "QGEMV_PLUGIN_PATH",
    "QGEMV_CUDA_PLAN", "OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
};
const int tool_env_var_count = (int)(sizeof tool_env_vars / sizeof tool_env_vars[0]);

/* Arguments made only of these characters need no quotes in a shell. */
static int shell_safe(const char *a) {
  if (*a == '\0') return 0;
  for (; *a; a++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%", *a)) return 0;
  return 1;
}

char *command_line(const char *prog, int argc, char **argv) {
  size_t size = strlen(prog) + 1;
  for (int i = 1; i < argc; i++) size += 4 * strlen(argv[i]) + 3; /* worst case: every char a quote */
  char *s = malloc(size), *p = s;
  if (!s) return NULL;
  p += sprintf(p, "%s", prog);
  for (int i = 1; i < argc; i++) {
    *p++ = ' ';
    if (shell_safe(argv[i])) {
      p += sprintf(p, "%s", argv[i]);
      continue;
    }
    *p++ = '\'';
    for (const char *c = argv[i]; *c; c++) {
      if (*c == '\'') {
        memcpy(p, "'\\''", 4); /* close, escaped quote, reopen */
        p += 4;
      } else {
        *p++ = *c;
      }
    }
    *p++ = '\'';
  }
  *p = '\0';
  return s;
}

void utc_timestamp(char *buf, size_t size) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
