/* qgemv: show the machine (info), prove the backends (verify), measure
 * them (bench). Exit status: 0 success, 1 a failure (a check that failed,
 * a backend that cannot open), 2 a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "tool.h"

const char *tool_command = "";

static void usage(FILE *f) {
  fprintf(f,
          "usage: qgemv [--version] [--help] <command> [options]\n"
          "\n"
          "commands:\n"
          "  info     version, build, backends, devices, ISA levels, environment\n"
          "  verify   every operation on a backend (or all) against the CPU oracle\n"
          "  bench    time matvec on model-shaped layers: GB/s, %% of the measured read\n"
          "           bandwidth, speed-up over a dense baseline (--model FILE: a model's\n"
          "           own weights)\n"
          "  inspect  what a model file (GGUF, safetensors) holds and what qgemv can use\n"
          "\n"
          "'qgemv <command> --help' describes a command's options; man qgemv has more.\n"
          "Environment: QGEMV_BACKEND, QGEMV_DEVICE, QGEMV_CPU_ISA, QGEMV_NUM_THREADS,\n"
          "QGEMV_CPU_BIND, QGEMV_PLUGIN_PATH.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  /* "qgemv", not argv[0]: in a build tree that is libtool's .libs path */
  char *cmdline = command_line("qgemv", argc, argv);
  if (cmdline) tool_command = cmdline;
  const char *cmd = argv[1];
  int rc;
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    rc = 0;
  } else if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
    /* the header this tool was built with, and the library it loaded */
    printf("qgemv %s (libqgemv %s)\n", QGEMV_VERSION_STRING, qgemv_version());
    rc = 0;
  } else if (strcmp(cmd, "info") == 0) {
    rc = cmd_info(argc - 1, argv + 1);
  } else if (strcmp(cmd, "verify") == 0) {
    rc = cmd_verify(argc - 1, argv + 1);
  } else if (strcmp(cmd, "bench") == 0) {
    rc = cmd_bench(argc - 1, argv + 1);
  } else if (strcmp(cmd, "inspect") == 0) {
    rc = cmd_inspect(argc - 1, argv + 1);
  } else {
    fprintf(stderr, "qgemv: unknown command '%s': use info, verify, bench or inspect (qgemv --help)\n", cmd);
    rc = EXIT_USAGE;
  }
  free(cmdline);
  return rc;
}
