/* qgemv info: version, build, weight formats, backends and why any is
 * unusable, devices, CPU ISA levels, the default backend and the
 * environment in effect; as text or as JSON. Facts are gathered once, then
 * rendered. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "opts.h"
#include "targets.h"
#include "tool.h"

#define MAX_DEVICES 16

typedef struct backend_facts {
  const char *name;
  bool usable;
  char reason[256];
  int ndevices; /* found by the probe */
  int nopened;  /* of those, described in devices[] */
  qgemv_device_info devices[MAX_DEVICES];
  char device_error[MAX_DEVICES][256]; /* "" when the device opened */
  target *levels;                      /* the CPU's ISA levels */
  int nlevels;
} backend_facts;

typedef struct info_facts {
  backend_facts *backends;
  int nbackends;
  char default_backend[48]; /* "cpu:0"; "" when none opens */
  char default_error[256];
} info_facts;

static void gather_backend(backend_facts *b, const char *name) {
  memset(b, 0, sizeof *b);
  b->name = name;
  qgemv_status s = qgemv_backend_probe(name, &b->ndevices);
  if (s != QGEMV_OK) {
    snprintf(b->reason, sizeof b->reason, "%s", qgemv_last_error());
    return;
  }
  b->usable = true;
  b->nopened = b->ndevices < MAX_DEVICES ? b->ndevices : MAX_DEVICES;
  for (int d = 0; d < b->nopened; d++) {
    char spec[32];
    snprintf(spec, sizeof spec, "%s:%d", name, d);
    qgemv_ctx *ctx = NULL;
    if (qgemv_open(spec, &ctx) != QGEMV_OK || qgemv_ctx_info(ctx, &b->devices[d]) != QGEMV_OK)
      snprintf(b->device_error[d], sizeof b->device_error[d], "%s", qgemv_last_error());
    qgemv_close(ctx);
  }
  if (strcmp(name, "cpu") == 0 && (b->levels = calloc((size_t)qgemv_cpu_level_count(), sizeof *b->levels))) {
    target_cpu_levels(b->levels);
    b->nlevels = qgemv_cpu_level_count();
  }
}

static int gather(info_facts *f) {
  memset(f, 0, sizeof *f);
  f->nbackends = qgemv_backend_count();
  f->backends = calloc((size_t)(f->nbackends > 0 ? f->nbackends : 1), sizeof *f->backends);
  if (!f->backends) return -1;
  for (int i = 0; i < f->nbackends; i++) gather_backend(&f->backends[i], qgemv_backend_name(i));
  qgemv_ctx *ctx;
  if (qgemv_open(NULL, &ctx) == QGEMV_OK) {
    snprintf(f->default_backend, sizeof f->default_backend, "%s:%d", qgemv_ctx_backend(ctx), qgemv_ctx_device(ctx));
    qgemv_close(ctx);
  } else {
    snprintf(f->default_error, sizeof f->default_error, "%s", qgemv_last_error());
  }
  return 0;
}

static void print_device(const qgemv_device_info *d) {
  printf("    device %d: %s\n", d->index, d->name);
  if (d->compute_major)
    printf("      compute capability %d.%d, %d SMs\n", d->compute_major, d->compute_minor, d->units);
  else
    printf("      %d cores, %d threads, ISA level %s\n", d->units, d->threads, d->isa);
  printf("      memory %.1f GiB", (double)d->memory_bytes / (1024.0 * 1024.0 * 1024.0));
  if (d->peak_bandwidth_gbs > 0) printf(", peak bandwidth %.0f GB/s", d->peak_bandwidth_gbs);
  if (d->llc_bytes) printf(", last-level cache %.0f MB", (double)d->llc_bytes / 1e6);
  printf("\n      %s\n", d->locality);
}

/* The library's format list: name, label and bytes per block. */
static void print_formats(void) {
  printf("\nformats (qgemv bench --format):\n");
  for (int i = 0; i < qgemv_format_count(); i++) {
    qgemv_format_info fi;
    qgemv_format_get(i, &fi); /* i is in range */
    printf("  %-9s %-10s group %d: %d bytes", fi.name, fi.label, (int)fi.group, (int)fi.block_bytes);
    if (fi.scale_bytes)
      printf(" + a %d-byte scale per block\n", (int)fi.scale_bytes);
    else
      printf(" per block, its scale included\n");
  }
}

static void print_text(const info_facts *f) {
  printf("qgemv %s\nbuild: %s\n", qgemv_version(), qgemv_build_config());
  print_formats();
  printf("\nbackends:\n");
  for (int i = 0; i < f->nbackends; i++) {
    const backend_facts *b = &f->backends[i];
    if (!b->usable) {
      printf("  %s: not usable: %s\n", b->name, b->reason);
      continue;
    }
    printf("  %s: %d device%s\n", b->name, b->ndevices, b->ndevices == 1 ? "" : "s");
    for (int d = 0; d < b->nopened; d++) {
      if (b->device_error[d][0])
        printf("    device %d: cannot open: %s\n", d, b->device_error[d]);
      else
        print_device(&b->devices[d]);
    }
    if (b->nlevels) printf("    ISA levels (QGEMV_CPU_ISA):\n");
    for (int l = 0; l < b->nlevels; l++) {
      const target *t = &b->levels[l];
      printf("      %-10s %s%s%s\n", t->isa, t->usable ? "usable" : "not usable: ", t->usable ? "" : t->reason,
             t->is_default ? " (default)" : "");
    }
  }
  if (f->default_backend[0])
    printf("\ndefault backend (QGEMV_BACKEND, else auto): %s\n", f->default_backend);
  else
    printf("\ndefault backend: cannot open: %s\n", f->default_error);
  printf("\nenvironment:\n");
  for (int i = 0; i < tool_env_var_count; i++) {
    const char *v = getenv(tool_env_vars[i]);
    printf("  %-20s %s\n", tool_env_vars[i], v ? v : "(unset)");
  }
}

static void write_json(const info_facts *f, FILE *out) {
  json_w j;
  json_init(&j, out);
  json_obj_begin(&j, NULL);
  json_str(&j, "version", qgemv_version());
  json_int(&j, "version_number", qgemv_version_number());
  json_str(&j, "build", qgemv_build_config());
  json_arr_begin(&j, "formats");
  for (int i = 0; i < qgemv_format_count(); i++) {
    qgemv_format_info fi;
    qgemv_format_get(i, &fi); /* i is in range */
    json_obj_begin(&j, NULL);
    json_str(&j, "name", fi.name);
    json_str(&j, "label", fi.label);
    json_int(&j, "group", fi.group);
    json_int(&j, "block_bytes", fi.block_bytes);
    json_int(&j, "scale_bytes", fi.scale_bytes);
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_arr_begin(&j, "backends");
  for (int i = 0; i < f->nbackends; i++) {
    const backend_facts *b = &f->backends[i];
    json_obj_begin(&j, NULL);
    json_str(&j, "name", b->name);
    json_bool(&j, "usable", b->usable);
    json_str(&j, "reason", b->usable ? NULL : b->reason);
    json_int(&j, "device_count", b->ndevices);
    json_arr_begin(&j, "devices");
    for (int d = 0; d < b->nopened; d++) {
      if (!b->device_error[d][0]) {
        json_device_info(&j, NULL, &b->devices[d]);
        continue;
      }
      json_obj_begin(&j, NULL);
      json_int(&j, "index", d);
      json_str(&j, "error", b->device_error[d]);
      json_obj_end(&j);
    }
    json_arr_end(&j);
    if (b->nlevels) {
      json_arr_begin(&j, "isa_levels");
      for (int l = 0; l < b->nlevels; l++) {
        json_obj_begin(&j, NULL);
        json_str(&j, "name", b->levels[l].isa);
        json_bool(&j, "usable", b->levels[l].usable);
        json_bool(&j, "default", b->levels[l].is_default);
        json_str(&j, "reason", b->levels[l].usable ? NULL : b->levels[l].reason);
        json_obj_end(&j);
      }
      json_arr_end(&j);
    }
    json_obj_end(&j);
  }
  json_arr_end(&j);
  json_str(&j, "default_backend", f->default_backend[0] ? f->default_backend : NULL);
  json_str(&j, "default_backend_error", f->default_backend[0] ? NULL : f->default_error);
  json_obj_begin(&j, "environment");
  for (int i = 0; i < tool_env_var_count; i++) json_str(&j, tool_env_vars[i], getenv(tool_env_vars[i]));
  json_obj_end(&j);
  json_obj_end(&j);
}

static void usage(FILE *f) {
  fprintf(f, "usage: qgemv info [--json [FILE]]\n\n"
             "Prints the library version and build configuration, the weight formats,\n"
             "every backend with its devices (or why it is not usable here), the CPU ISA\n"
             "levels, the default backend and the environment variables in effect.\n\n"
             "  --json [FILE]  write JSON instead of text, to FILE or (without FILE, or '-')\n"
             "                 to standard output\n"
             "  -h, --help     this help\n");
}

int cmd_info(int argc, char **argv) {
  const char *json_path = NULL;
  opt_iter it;
  opt_init(&it, "info", argc, argv);
  while (opt_next(&it)) {
    if (opt_is(&it, "--help") || opt_is(&it, "-h")) {
      usage(stdout);
      return 0;
    } else if (opt_is(&it, "--json")) {
      json_path = opt_optional_value(&it);
      if (!json_path) json_path = "-";
    } else {
      return opt_unknown(&it);
    }
  }
  info_facts f;
  if (gather(&f) != 0) {
    fprintf(stderr, "qgemv info: out of memory\n");
    return 1;
  }
  int rc = 0;
  if (json_path) {
    FILE *out = out_open("info", json_path);
    if (out) {
      write_json(&f, out);
      rc = out_close("info", out, json_path);
    } else {
      rc = -1;
    }
  } else {
    print_text(&f);
  }
  for (int i = 0; i < f.nbackends; i++) free(f.backends[i].levels);
  free(f.backends);
  return rc ? 1 : 0;
}
