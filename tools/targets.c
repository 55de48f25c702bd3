/* Enumerates backend devices and CPU levels (see targets.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets.h"

/* The CPU backend reads QGEMV_CPU_ISA when a context opens, so setting it
 * around qgemv_open is how a level is chosen from outside the library.
 * Returns the caller's value for isa_restore. */
static char *isa_override(const char *isa) {
  const char *old = getenv("QGEMV_CPU_ISA");
  char *saved = old ? strdup(old) : NULL;
  setenv("QGEMV_CPU_ISA", isa, 1);
  return saved;
}

static void isa_restore(char *saved) {
  if (saved) {
    setenv("QGEMV_CPU_ISA", saved, 1);
    free(saved);
  } else {
    unsetenv("QGEMV_CPU_ISA");
  }
}

qgemv_status target_open(const target *t, qgemv_ctx **ctx) {
  if (t->isa[0] == '\0') return qgemv_open(t->spec, ctx);
  char *saved = isa_override(t->isa);
  qgemv_status s = qgemv_open(t->spec, ctx);
  isa_restore(saved);
  return s;
}

static void set_unusable(target *t, const char *why) {
  t->usable = false;
  snprintf(t->reason, sizeof t->reason, "%s", why);
}

/* Tries a target and records whether it opens (and why not). */
static void probe_target(target *t) {
  qgemv_ctx *ctx;
  if (target_open(t, &ctx) != QGEMV_OK) {
    set_unusable(t, qgemv_last_error());
    return;
  }
  t->usable = true;
  qgemv_close(ctx);
}

void target_cpu_levels(target *out) {
  for (int i = 0; i < qgemv_cpu_level_count(); i++) {
    target *t = &out[i];
    qgemv_cpu_level_info level;
    memset(t, 0, sizeof *t);
    qgemv_cpu_level_get(i, &level); /* i is in range */
    snprintf(t->backend, sizeof t->backend, "cpu");
    snprintf(t->spec, sizeof t->spec, "cpu");
    snprintf(t->isa, sizeof t->isa, "%s", level.name);
    snprintf(t->label, sizeof t->label, "cpu/%s", level.name);
    t->is_default = level.is_default;
    probe_target(t); /* the library's reason when it does not open */
  }
}

int targets_all(target **out) {
  int cap = 0, count = 0;
  target *ts = NULL;
  for (int b = 0; b < qgemv_backend_count(); b++) {
    const char *name = qgemv_backend_name(b);
    int devices = 0;
    qgemv_status s = qgemv_backend_probe(name, &devices);
    int is_cpu = strcmp(name, "cpu") == 0;
    int wanted = s != QGEMV_OK ? 1 : is_cpu ? qgemv_cpu_level_count() : devices;
    if (count + wanted > cap) {
      cap = count + wanted + 8;
      target *grown = realloc(ts, (size_t)cap * sizeof *ts);
      if (!grown) return free(ts), -1;
      ts = grown;
    }
    target *t = &ts[count];
    if (s == QGEMV_OK && is_cpu) {
      target_cpu_levels(t);
      count += wanted;
      continue;
    }
    for (int i = 0; i < wanted; i++, t++) {
      memset(t, 0, sizeof *t);
      snprintf(t->backend, sizeof t->backend, "%s", name);
      if (s != QGEMV_OK) { /* one row saying why the whole backend is out */
        snprintf(t->label, sizeof t->label, "%s", name);
        t->device = -1;
        set_unusable(t, qgemv_last_error());
        continue;
      }
      t->device = i;
      snprintf(t->spec, sizeof t->spec, "%s:%d", name, i);
      snprintf(t->label, sizeof t->label, "%s:%d", name, i);
      probe_target(t);
    }
    count += wanted;
  }
  *out = ts;
  return count;
}
