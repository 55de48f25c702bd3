/* The table of CPU levels and the choice among them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/registry.h"
#include "cpu.h"

extern const qg_cpu_level qg_cpu_level_ref, qg_cpu_level_avx2, qg_cpu_level_avx512, qg_cpu_level_avx512vnni,
    qg_cpu_level_avx512amx, qg_cpu_level_neon, qg_cpu_level_neondot;

/* Every level a user may name, built here or not (a level file compiles
 * to a name only off its architecture), ordered from the oracle to the
 * fastest: with no QGEMV_CPU_ISA the last usable one wins (qg_cpu_default_level, which the level list marks), or the next
 * one down if its preparation fails when a context opens (qg_cpu_pick_level). */
const qg_cpu_level *const qg_cpu_levels[] = {
    &qg_cpu_level_ref,        &qg_cpu_level_scalar,    &qg_cpu_level_avx2, &qg_cpu_level_avx512,
    &qg_cpu_level_avx512vnni, &qg_cpu_level_avx512amx, &qg_cpu_level_neon, &qg_cpu_level_neondot,
};
const int qg_cpu_level_count = (int)(sizeof qg_cpu_levels / sizeof qg_cpu_levels[0]);

bool qg_cpu_level_built(const qg_cpu_level *l) { return l->available != NULL; }

bool qg_cpu_level_usable(const qg_cpu_level *l) { return qg_cpu_level_built(l) && l->available(); }

/* The index of the best usable level below index `below`, or -1. */
static int default_below(int below) {
  for (int i = below - 1; i >= 0; i--)
    if (qg_cpu_level_usable(qg_cpu_levels[i])) return i;
  return -1;
}

const qg_cpu_level *qg_cpu_default_level(void) {
  const int i = default_below(qg_cpu_level_count);
  return i >= 0 ? qg_cpu_levels[i] : &qg_cpu_level_ref; /* ref: always usable */
}

int qg_cpu_level_total(void) { return qg_cpu_level_count; }

void qg_cpu_level_describe(int index, qgemv_cpu_level_info *out) {
  const qg_cpu_level *l = qg_cpu_levels[index];
  *out = (qgemv_cpu_level_info){.name = l->name, .built = qg_cpu_level_built(l), .supported = qg_cpu_level_usable(l),
                                .is_default = l == qg_cpu_default_level()};
}

/* "ref scalar avx2": the levels usable here, for messages. */
static const char *usable_list(void) {
  static _Thread_local char buf[64];
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < qg_cpu_level_count && used < sizeof buf; i++)
    if (qg_cpu_level_usable(qg_cpu_levels[i]))
      used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", used ? " " : "", qg_cpu_levels[i]->name);
  return buf;
}

/* "auto, ref, scalar, avx2, avx512 or neon": every value QGEMV_CPU_ISA takes. */
static const char *all_list(void) {
  static _Thread_local char buf[96];
  buf[0] = '\0';
  qg_choices_add(buf, sizeof buf, 0, qg_cpu_level_count + 1, "auto");
  for (int i = 0; i < qg_cpu_level_count; i++)
    qg_choices_add(buf, sizeof buf, i + 1, qg_cpu_level_count + 1, qg_cpu_levels[i]->name);
  return buf;
}

static const qg_cpu_level *level_named(const char *name) {
  for (int i = 0; i < qg_cpu_level_count; i++)
    if (strcmp(name, qg_cpu_levels[i]->name) == 0) return qg_cpu_levels[i];
  return NULL;
}

qgemv_status qg_cpu_pick_level(const qg_cpu_level **out) {
  const char *want = getenv("QGEMV_CPU_ISA");
  if (want == NULL || *want == '\0' || strcmp(want, "auto") == 0) {
    /* The default, else the next best where its preparation fails (Linux
     * may refuse avx512amx the tile state): a level the user did not name
     * must not keep the backend from opening. */
    for (int i = default_below(qg_cpu_level_count); i >= 0; i = default_below(i)) {
      const qg_cpu_level *l = qg_cpu_levels[i];
      if (l->prepare == NULL || l->prepare() == NULL) {
        *out = l;
        return QGEMV_OK;
      }
    }
    *out = &qg_cpu_level_ref; /* always usable, nothing to prepare */
    return QGEMV_OK;
  }
  const qg_cpu_level *l = level_named(want);
  if (l == NULL)
    return qg_cpu_fail(QGEMV_ERR_INVALID_ARG, "QGEMV_CPU_ISA=%.32s is not a level: use %s", want, all_list());
  if (!qg_cpu_level_built(l))
    return qg_cpu_fail(QGEMV_ERR_UNSUPPORTED,
                       "QGEMV_CPU_ISA=%s: this build of qgemv has no %s level (not this architecture); usable here: %s",
                       want, want, usable_list());
  if (!l->available())
    return qg_cpu_fail(QGEMV_ERR_UNSUPPORTED,
                       "QGEMV_CPU_ISA=%s: this CPU (or its OS) does not support %s; usable here: %s", want, want,
                       usable_list());
  const char *why = l->prepare ? l->prepare() : NULL;
  if (why != NULL) return qg_cpu_fail(QGEMV_ERR_UNSUPPORTED, "cpu level %s: %s", l->name, why);
  *out = l;
  return QGEMV_OK;
}
