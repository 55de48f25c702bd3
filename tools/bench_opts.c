/* qgemv bench: the model presets and the command line. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "opts.h"

/* One decode step (one transformer block) of each model: attention q, k,
 * v, o and the MLP gate, up, down, as W[n, k] with n outputs. */
static const bench_layer llama3_8b[] = {
    {"llama3-8b", "q", 4096, 4096},     {"llama3-8b", "k", 1024, 4096},     {"llama3-8b", "v", 1024, 4096},
    {"llama3-8b", "o", 4096, 4096},     {"llama3-8b", "gate", 14336, 4096}, {"llama3-8b", "up", 14336, 4096},
    {"llama3-8b", "down", 4096, 14336},
};
static const bench_layer llama3_70b[] = {
    {"llama3-70b", "q", 8192, 8192},     {"llama3-70b", "k", 1024, 8192},     {"llama3-70b", "v", 1024, 8192},
    {"llama3-70b", "o", 8192, 8192},     {"llama3-70b", "gate", 28672, 8192}, {"llama3-70b", "up", 28672, 8192},
    {"llama3-70b", "down", 8192, 28672},
};
#define PRESET_LAYERS 7

static void usage(FILE *f) {
  char formats[256];
  fprintf(f,
          "usage: qgemv bench [--backend SPEC] [--preset NAME[,NAME]] [--shape NxK]...\n"
          "                   [--model FILE]\n"
          "                   [--format LIST] [--dtype LIST] [--m LIST] [--rmsnorm]\n"
          "                   [--iters N | --min-time SEC] [--working-set SIZE]\n"
          "                   [--no-baseline] [--graph] [--json FILE] [--csv FILE] [--quiet]\n\n"
          "Times y = x . W^T on decode-sized shapes and reports, per layer and format,\n"
          "the median time per call, the effective bandwidth GB/s = (weight + x + y\n"
          "bytes) / time, that as a percentage of the streaming read bandwidth measured\n"
          "in the same run, and the speed-up over a dense baseline of the same shape\n"
          "(CUDA: cuBLAS bf16 GEMV; CPU: OpenBLAS f32 sgemv) also measured in the run.\n"
          "Calls rotate over enough weight copies that the working set exceeds the\n"
          "last-level cache, so the weights stream from memory as in real decode.\n"
          "Default: one decode step of llama3-8b, formats %s, bf16, m = 1.\n"
          "With --model, the file's own weights instead (see below).\n\n"
          "  --backend SPEC     auto, cpu, cuda, cuda:N (default: QGEMV_BACKEND, else auto)\n"
          "  --preset NAME      llama3-8b, llama3-70b or all (comma lists allowed); with\n"
          "                     --shape, both are measured\n"
          "  --shape NxK        a weight of N outputs and K inputs (repeatable)\n"
          "  --model FILE       every 2-D weight of a GGUF or safetensors file that qgemv\n"
          "                     runs as stored (Q2_0, bitsandbytes NF4), at its real shape\n"
          "                     and on its own data; with --format, also every f32/f16/bf16\n"
          "                     matrix quantized to those formats. Layers of one transformer\n"
          "                     block (blk.N., model.layers.N.) are summed like a preset\n"
          "  --format LIST      %s or all (default %s; qgemv info\n"
          "                     describes each)\n"
          "  --dtype LIST       f32 or bf16, the dtype of x and y (default bf16)\n"
          "  --m LIST           activation rows per call, 1 .. 4096 (default 1), e.g. 1,8,16\n"
          "  --rmsnorm          time the fused RMSNorm + matvec instead\n"
          "  --iters N          exactly N timed samples per row (1 .. 1000000)\n"
          "  --min-time SEC     sample each row for at least SEC seconds, and at least 5\n"
          "                     samples (default 0.5; 0 .. 3600)\n"
          "  --working-set SIZE bytes of weight copies to rotate over, with K, M, G\n"
          "                     suffixes (default max(8 x last-level cache, 1G))\n"
          "  --no-baseline      skip the dense baseline\n"
          "  --graph            CUDA: capture each sample's calls in a CUDA graph and time\n"
          "                     its replays, as engines run decode (on a stream, a call\n"
          "                     also pays the host's launch, the whole time of the\n"
          "                     smallest shapes); the dense baseline stays on the stream\n"
          "  --json FILE        write every figure, the machine and the command as JSON\n"
          "  --csv FILE         write the rows as CSV ('-' for either: standard output,\n"
          "                     instead of the table); both files are brought up to\n"
          "                     date as each row finishes\n"
          "  --quiet            no table and no progress messages\n"
          "  -h, --help         this help\n",
          BENCH_DEFAULT_FORMATS, format_names(formats, sizeof formats, false), BENCH_DEFAULT_FORMATS);
}

static int add_layers(bench_opts *o, const bench_layer *src, int count) {
  if (o->nlayers + count > BENCH_MAX_LAYERS) return -1;
  memcpy(o->layers + o->nlayers, src, (size_t)count * sizeof *src);
  o->nlayers += count;
  return 0;
}

static int parse_preset(opt_iter *it, const char *v, bench_opts *o) {
  char items[BENCH_MAX_LIST][32];
  int n = split_list(v, items, BENCH_MAX_LIST);
  for (int i = 0; i < n; i++) {
    bool all = strcmp(items[i], "all") == 0;
    bool b8 = all || strcmp(items[i], "llama3-8b") == 0, b70 = all || strcmp(items[i], "llama3-70b") == 0;
    if ((!b8 && !b70) || (b8 && add_layers(o, llama3_8b, PRESET_LAYERS) != 0) ||
        (b70 && add_layers(o, llama3_70b, PRESET_LAYERS) != 0)) {
      n = -1;
      break;
    }
  }
  return n < 0 ? opt_bad_value(it, v, "use llama3-8b, llama3-70b or all (comma lists allowed; at most %d layers)",
                               BENCH_MAX_LAYERS)
               : -1;
}

static int parse_shape(opt_iter *it, const char *v, bench_opts *o) {
  /* N and K up to 2^20 keep every byte count far from overflow */
  const int64_t limit = 1 << 20;
  char n_text[32];
  const char *x = strpbrk(v, "xX");
  size_t len = x ? (size_t)(x - v) : 0;
  int64_t n, k;
  if (!x || len >= sizeof n_text) return opt_bad_value(it, v, "use NxK, e.g. 4096x14336");
  memcpy(n_text, v, len);
  n_text[len] = '\0';
  if (!parse_i64(n_text, 1, limit, &n) || !parse_i64(x + 1, 1, limit, &k))
    return opt_bad_value(it, v, "use NxK with N and K from 1 to %lld, e.g. 4096x14336", (long long)limit);
  if (o->nlayers >= BENCH_MAX_LAYERS) return opt_bad_value(it, v, "at most %d layers", BENCH_MAX_LAYERS);
  o->layers[o->nlayers++] = (bench_layer){NULL, "-", n, k};
  return -1;
}

/* Marks in want[] (by list index) the formats of a comma list of names
 * or "all"; false on a name that is not a format. */
static bool want_formats(const char *v, bool *want) {
  char items[BENCH_MAX_LIST][32];
  int n = split_list(v, items, BENCH_MAX_LIST);
  for (int i = 0; i < n; i++) {
    qgemv_format_info named;
    bool all = strcmp(items[i], "all") == 0;
    for (int f = 0; f < qgemv_format_count(); f++) want[f] |= all;
    if (all) continue;
    if (qgemv_format_lookup(items[i], &named) != QGEMV_OK) return false;
    for (int f = 0; f < qgemv_format_count(); f++) {
      qgemv_format_info listed;
      want[f] |= qgemv_format_get(f, &listed) == QGEMV_OK && strcmp(listed.name, named.name) == 0;
    }
  }
  return n > 0;
}

/* o->formats: those of v, in the library's order, each once; false when v
 * names none or something else. */
static bool set_formats(const char *v, bench_opts *o) {
  const int count = qgemv_format_count();
  bool want[BENCH_MAX_LIST] = {false};
  if (count > BENCH_MAX_LIST || !want_formats(v, want)) return false;
  o->nformats = 0;
  for (int f = 0; f < count; f++)
    if (want[f]) qgemv_format_get(f, &o->formats[o->nformats++]);
  return true;
}

static int parse_formats(opt_iter *it, const char *v, bench_opts *o) {
  char names[256];
  if (set_formats(v, o)) return -1;
  return opt_bad_value(it, v, "use %s or all (comma lists allowed)", format_names(names, sizeof names, false));
}

static int parse_dtypes(opt_iter *it, const char *v, bench_opts *o) {
  char items[BENCH_MAX_LIST][32];
  int n = split_list(v, items, BENCH_MAX_LIST);
  bool want[2] = {false, false};
  for (int i = 0; i < n; i++) {
    if (strcmp(items[i], "f32") == 0)
      want[QGEMV_F32] = true;
    else if (strcmp(items[i], "bf16") == 0)
      want[QGEMV_BF16] = true;
    else
      n = -1;
  }
  if (n < 0) return opt_bad_value(it, v, "use f32 or bf16 (or f32,bf16)");
  o->ndtypes = 0;
  if (want[QGEMV_F32]) o->dtypes[o->ndtypes++] = QGEMV_F32;
  if (want[QGEMV_BF16]) o->dtypes[o->ndtypes++] = QGEMV_BF16;
  return -1;
}

static int parse_ms(opt_iter *it, const char *v, bench_opts *o) {
  char items[BENCH_MAX_LIST][32];
  int n = split_list(v, items, BENCH_MAX_LIST);
  for (int i = 0; i < n; i++)
    if (!parse_i64(items[i], 1, 4096, &o->ms[i])) n = -1;
  if (n < 0) return opt_bad_value(it, v, "use row counts from 1 to 4096, e.g. 1,8,16 (at most %d)", BENCH_MAX_LIST);
  o->nms = n;
  return -1;
}

/* Every shape must suit every format (K a multiple of the block/group). */
static int check_shapes(const bench_opts *o) {
  for (int i = 0; i < o->nlayers; i++)
    for (int f = 0; f < o->nformats; f++) {
      const bench_layer *l = &o->layers[i];
      if (qgemv_data_bytes(o->formats[f].format, l->n, l->k, o->formats[f].group) == 0) {
        fprintf(stderr, "qgemv bench: --shape %lldx%lld does not suit --format %s: %s\n", (long long)l->n,
                (long long)l->k, o->formats[f].name, qgemv_last_error());
        return EXIT_USAGE;
      }
    }
  return -1;
}

static bool takes_value(const opt_iter *it) {
  static const char *const names[] = {"--backend",  "--preset",   "--shape",       "--format", "--model",
                                      "--dtype",    "--m",        "--iters",       "--min-time",
                                      "--working-set", "--json", "--csv"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (opt_is(it, names[i])) return true;
  return false;
}

int bench_parse(int argc, char **argv, bench_opts *o) {
  memset(o, 0, sizeof *o);
  set_formats(BENCH_DEFAULT_FORMATS, o); /* names of the library's list */
  o->dtypes[0] = QGEMV_BF16;
  o->ndtypes = 1;
  o->ms[0] = 1;
  o->nms = 1;
  o->min_time = 0.5;
  o->baseline = true;
  bool timed = false, counted = false;
  opt_iter it;
  opt_init(&it, "bench", argc, argv);
  const char *v;
  int rc = -1;
  while (rc < 0 && opt_next(&it)) {
    if (opt_is(&it, "--help") || opt_is(&it, "-h")) {
      usage(stdout);
      return 0;
    } else if (opt_is(&it, "--rmsnorm") || opt_is(&it, "--quiet") || opt_is(&it, "--no-baseline") ||
               opt_is(&it, "--graph")) {
      if (!opt_flag(&it)) return EXIT_USAGE;
      if (opt_is(&it, "--graph")) o->graph = true;
      if (opt_is(&it, "--rmsnorm")) o->rmsnorm = true;
      if (opt_is(&it, "--quiet")) o->quiet = true;
      if (opt_is(&it, "--no-baseline")) o->baseline = false;
    } else if (!takes_value(&it)) {
      return opt_unknown(&it);
    } else if (!(v = opt_value(&it))) {
      return EXIT_USAGE;
    } else if (opt_is(&it, "--backend")) {
      o->spec = v;
    } else if (opt_is(&it, "--preset")) {
      rc = parse_preset(&it, v, o);
    } else if (opt_is(&it, "--shape")) {
      rc = parse_shape(&it, v, o);
    } else if (opt_is(&it, "--format")) {
      rc = parse_formats(&it, v, o);
      o->formats_given = true;
    } else if (opt_is(&it, "--model")) {
      o->model_path = v;
    } else if (opt_is(&it, "--dtype")) {
      rc = parse_dtypes(&it, v, o);
    } else if (opt_is(&it, "--m")) {
      rc = parse_ms(&it, v, o);
    } else if (opt_is(&it, "--iters")) {
      if (!parse_i64(v, 1, 1000000, &o->iters)) rc = opt_bad_value(&it, v, "use an integer from 1 to 1000000");
      counted = true;
    } else if (opt_is(&it, "--min-time")) {
      if (!parse_double(v, 0, 3600, &o->min_time)) rc = opt_bad_value(&it, v, "use seconds from 0 to 3600, e.g. 0.5");
      timed = true;
    } else if (opt_is(&it, "--working-set")) {
      if (!parse_size(v, &o->working_set) || o->working_set == 0 || o->working_set > (1ull << 40))
        rc = opt_bad_value(&it, v, "use a byte count from 1 to 1T with an optional K, M, G or T suffix, e.g. 2G");
    } else if (opt_is(&it, "--json")) {
      o->json_path = v;
    } else {
      o->csv_path = v;
    }
  }
  if (rc >= 0) return rc;
  if (timed && counted) {
    fprintf(stderr, "qgemv bench: --iters and --min-time exclude each other: use one\n");
    return EXIT_USAGE;
  }
  if (o->json_path && o->csv_path && strcmp(o->json_path, "-") == 0 && strcmp(o->csv_path, "-") == 0) {
    fprintf(stderr, "qgemv bench: --json - and --csv - cannot both use standard output\n");
    return EXIT_USAGE;
  }
  if (o->nlayers == 0 && !o->model_path) add_layers(o, llama3_8b, PRESET_LAYERS);
  return check_shapes(o);
}
