/* The table of CPU levels and the choice among them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

extern const qg_cpu_level qg_cpu_level_ref, qg_cpu_level_scalar;
#if defined(__x86_64__)
extern const qg_cpu_level qg_cpu_level_avx2, qg_cpu_level_avx512;
#endif
#if defined(__aarch64__)
extern const qg_cpu_level qg_cpu_level_neon;
#endif

/* Ordered from the oracle to the fastest: with no QGEMV_CPU_ISA the last
 * available one wins. */
const qg_cpu_level *const qg_cpu_levels[] = {
    &qg_cpu_level_ref,
    &qg_cpu_level_scalar,
#if defined(__x86_64__)
    &qg_cpu_level_avx2,
    &qg_cpu_level_avx512,
#endif
#if defined(__aarch64__)
    &qg_cpu_level_neon,
#endif
};
const int qg_cpu_level_count = (int)(sizeof qg_cpu_levels / sizeof qg_cpu_levels[0]);

/* Names a user may ask for, compiled in or not, for a precise message. */
static const char *const known[] = {"ref", "scalar", "avx2", "avx512", "neon"};

/* "ref scalar avx2": the levels usable here, for messages. */
static const char *usable_list(void) {
  static _Thread_local char buf[64];
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < qg_cpu_level_count && used < sizeof buf; i++)
    if (qg_cpu_levels[i]->available())
      used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", used ? " " : "", qg_cpu_levels[i]->name);
  return buf;
}

qgemv_status qg_cpu_pick_level(const qg_cpu_level **out) {
  const char *want = getenv("QGEMV_CPU_ISA");
  if (want == NULL || *want == '\0' || strcmp(want, "auto") == 0) {
    for (int i = qg_cpu_level_count - 1; i >= 0; i--)
      if (qg_cpu_levels[i]->available()) {
        *out = qg_cpu_levels[i];
        return QGEMV_OK;
      }
    return qg_cpu_fail(QGEMV_ERR_UNSUPPORTED, "no CPU level is usable"); /* ref always is */
  }
  for (int i = 0; i < qg_cpu_level_count; i++) {
    if (strcmp(want, qg_cpu_levels[i]->name) != 0) continue;
    if (!qg_cpu_levels[i]->available())
      return qg_cpu_fail(QGEMV_ERR_UNSUPPORTED,
                         "QGEMV_CPU_ISA=%s: this CPU (or its OS) does not support %s; usable here: %s", want, want,
                         usable_list());
    *out = qg_cpu_levels[i];
    return QGEMV_OK;
  }
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(want, known[i]) == 0)
      return qg_cpu_fail(QGEMV_ERR_UNSUPPORTED,
                         "QGEMV_CPU_ISA=%s: this build of qgemv has no %s level (not this architecture); usable here: %s",
                         want, want, usable_list());
  return qg_cpu_fail(QGEMV_ERR_INVALID_ARG,
                     "QGEMV_CPU_ISA=%.32s is not a level: use auto, ref, scalar, avx2, avx512 or neon", want);
}
