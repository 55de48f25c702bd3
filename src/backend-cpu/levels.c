/* The table of CPU levels and the choice among them. */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

extern const qg_cpu_level qg_cpu_level_ref, qg_cpu_level_scalar;

const qg_cpu_level *const qg_cpu_levels[] = {&qg_cpu_level_ref, &qg_cpu_level_scalar};
const int qg_cpu_level_count = (int)(sizeof qg_cpu_levels / sizeof qg_cpu_levels[0]);

/* Names a user may ask for, compiled in or not, for a precise message. */
static const char *const known[] = {"ref", "scalar", "avx2", "avx512", "neon"};

qgemv_status qg_cpu_pick_level(const qg_cpu_level **out) {
  const char *want = getenv("QGEMV_CPU_ISA");
  if (want == NULL || *want == '\0') {
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
      return qg_cpu_fail(QGEMV_ERR_UNSUPPORTED, "QGEMV_CPU_ISA=%s: this CPU (or OS) does not support %s", want, want);
    *out = qg_cpu_levels[i];
    return QGEMV_OK;
  }
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(want, known[i]) == 0)
      return qg_cpu_fail(QGEMV_ERR_UNSUPPORTED, "QGEMV_CPU_ISA=%s: this build of qgemv has no %s level", want, want);
  return qg_cpu_fail(QGEMV_ERR_INVALID_ARG, "QGEMV_CPU_ISA=%.32s is not a level: use ref, scalar, avx2, avx512 or neon",
                     want);
}
