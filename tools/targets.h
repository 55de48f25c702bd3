/* What the tool can run on: every device of every backend and, for the CPU,
 * every ISA level (forced through QGEMV_CPU_ISA), each either usable or with
 * the library's reason why not. Shared by `info` and `verify --backend all`. */
#ifndef QGEMV_TOOL_TARGETS_H
#define QGEMV_TOOL_TARGETS_H

#include <stdbool.h>

#include "qgemv.h"

typedef struct target {
  char label[48];   /* "cpu/avx2", "cuda:0"; the table's first column */
  char spec[32];    /* for qgemv_open */
  char backend[16];
  int device;       /* -1 when the backend itself is unusable */
  char isa[16];     /* CPU level to force; "" for none */
  bool usable;
  bool is_default;  /* the CPU level chosen when QGEMV_CPU_ISA is unset */
  char reason[256]; /* why it is not usable */
} target;

/* Fills out[0 .. qgemv_cpu_level_count() - 1] with the CPU levels a user
 * can name in QGEMV_CPU_ISA (the library's list), each probed. */
void target_cpu_levels(target *out);

/* Fills *out (malloc'ed, caller frees) with every target; returns the
 * count, or -1 when out of memory. */
int targets_all(target **out);

/* Opens a target's context, forcing its CPU level for this open only (the
 * caller's QGEMV_CPU_ISA is restored afterwards). */
qgemv_status target_open(const target *t, qgemv_ctx **ctx);

#endif
