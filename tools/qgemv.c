/* qgemv: show the machine (info), prove the backends (verify), measure
 * them (bench). */
#include <stdio.h>
#include <string.h>

#include "tool.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: qgemv [--version] [--help] <command> [options]\n"
          "\n"
          "commands:\n"
          "  info     version, build, backends, devices and topology\n"
          "  verify   every operation on a backend against the CPU oracle\n"
          "  bench    time matvec on decode-sized shapes (GB/s, %% of read bandwidth)\n"
          "\n"
          "'qgemv <command> --help' describes a command's options.\n"
          "Environment: QGEMV_BACKEND, QGEMV_DEVICE, QGEMV_CPU_ISA, QGEMV_NUM_THREADS,\n"
          "QGEMV_PLUGIN_PATH.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("qgemv %s\n", qgemv_version());
    return 0;
  }
  if (strcmp(cmd, "info") == 0) return cmd_info(argc - 1, argv + 1);
  if (strcmp(cmd, "verify") == 0) return cmd_verify(argc - 1, argv + 1);
  if (strcmp(cmd, "bench") == 0) return cmd_bench(argc - 1, argv + 1);
  fprintf(stderr, "qgemv: unknown command '%s': use info, verify or bench (qgemv --help)\n", cmd);
  return 2;
}
