/* qgemv info: version, build, backends and why any is unusable, devices. */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

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

int cmd_info(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: qgemv info\n\nPrints the library version and build, every backend with its devices\n"
             "(or why it is not usable here), and the environment variables in effect.\n");
      return 0;
    }
    fprintf(stderr, "qgemv info: unknown option '%s' (qgemv info --help)\n", argv[i]);
    return 2;
  }
  printf("qgemv %s\nbuild: %s\n\nbackends:\n", qgemv_version(), qgemv_build_config());
  for (int b = 0; b < qgemv_backend_count(); b++) {
    const char *name = qgemv_backend_name(b);
    int devices = 0;
    qgemv_status s = qgemv_backend_probe(name, &devices);
    if (s != QGEMV_OK) {
      printf("  %s: not usable: %s\n", name, qgemv_last_error());
      continue;
    }
    printf("  %s: %d device%s\n", name, devices, devices == 1 ? "" : "s");
    for (int d = 0; d < devices; d++) {
      char spec[32];
      snprintf(spec, sizeof spec, "%s:%d", name, d);
      qgemv_ctx *ctx;
      qgemv_device_info info;
      if ((s = qgemv_open(spec, &ctx)) != QGEMV_OK || (s = qgemv_ctx_info(ctx, &info)) != QGEMV_OK) {
        printf("    device %d: cannot open: %s\n", d, qgemv_last_error());
        continue;
      }
      print_device(&info);
      qgemv_close(ctx);
    }
  }
  qgemv_ctx *ctx;
  if (qgemv_open(NULL, &ctx) == QGEMV_OK) {
    printf("\ndefault backend (QGEMV_BACKEND or auto): %s:%d\n", qgemv_ctx_backend(ctx), qgemv_ctx_device(ctx));
    qgemv_close(ctx);
  } else {
    printf("\ndefault backend: cannot open: %s\n", qgemv_last_error());
  }
  static const char *const vars[] = {"QGEMV_BACKEND", "QGEMV_DEVICE", "QGEMV_CPU_ISA", "QGEMV_NUM_THREADS",
                                     "QGEMV_PLUGIN_PATH"};
  printf("\nenvironment:\n");
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    printf("  %-18s %s\n", vars[i], v ? v : "(unset)");
  }
  return 0;
}
