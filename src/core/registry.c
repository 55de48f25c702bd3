/*
 * The backend registry: the built-in CPU backend and the device modules
 * found in the search path. Discovery runs once per process: every
 * qgemv-NAME.so in each directory of $QGEMV_PLUGIN_PATH (read through
 * secure_getenv, so set-id programs ignore it), then in the install's
 * module directory, is loaded and checked. The first file of a name wins,
 * as on $PATH: later ones of that name are never opened, and the built-in
 * "cpu" comes before every directory. The core keeps no list of module
 * backends; what discovery found is the list.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "module_load.h"
#include "registry.h"

#ifndef QG_PKGLIBDIR
#define QG_PKGLIBDIR "/usr/local/lib/qgemv"
#endif
/* The modules this build makes (configure), for the hint on a missing one. */
#ifndef QG_BUILT_MODULES
#define QG_BUILT_MODULES ""
#endif

static struct {
  char *plugin_path;       /* $QGEMV_PLUGIN_PATH as discovery read it */
  qg_found_module *mods;   /* in search order */
  int count;
  int *auto_order;         /* loaded modules with a priority > 0, best first */
  int auto_count;
} found;
static pthread_once_t found_once = PTHREAD_ONCE_INIT;

static bool valid_name(const char *s, size_t len) {
  if (len == 0 || len >= QG_NAME_SIZE || s[0] < 'a' || s[0] > 'z') return false;
  for (size_t i = 0; i < len; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_')) return false;
  return true;
}

/* NAME when file is qgemv-NAME.so with a valid NAME; false otherwise. */
static bool module_name(const char *file, char name[QG_NAME_SIZE]) {
  static const char prefix[] = "qgemv-", suffix[] = ".so";
  size_t len = strlen(file), pre = sizeof prefix - 1, suf = sizeof suffix - 1;
  if (len <= pre + suf || strncmp(file, prefix, pre) != 0 || strcmp(file + len - suf, suffix) != 0) return false;
  if (!valid_name(file + pre, len - pre - suf)) return false;
  memcpy(name, file + pre, len - pre - suf);
  name[len - pre - suf] = '\0';
  return true;
}

static const qg_found_module *find(const char *name) {
  for (int i = 0; i < found.count; i++)
    if (strcmp(found.mods[i].name, name) == 0) return &found.mods[i];
  return NULL;
}

/* Calls fn on each directory of the search path, in order, passing over
 * empty entries and ones too long to be a directory. */
static void each_dir(void (*fn)(const char *dir, void *arg), void *arg) {
  char dir[4096];
  for (const char *p = found.plugin_path; p != NULL;) {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    if (len > 0 && len < sizeof dir) {
      memcpy(dir, p, len);
      dir[len] = '\0';
      fn(dir, arg);
    }
    p = colon ? colon + 1 : NULL;
  }
  fn(QG_PKGLIBDIR, arg);
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

/* Adds and loads the module called `name` in dir, unless a module or the
 * built-in backend of that name came first. */
static void add_module(const char *dir, const char *name) {
  if (strcmp(name, "cpu") == 0 || strcmp(name, "auto") == 0 || find(name) != NULL) return;
  qg_found_module *grown = realloc(found.mods, (size_t)(found.count + 1) * sizeof *grown);
  if (grown == NULL) return; /* out of memory: the module stays unknown */
  found.mods = grown;
  qg_found_module *m = &found.mods[found.count];
  memset(m, 0, sizeof *m);
  size_t size = strlen(dir) + strlen(name) + sizeof "/qgemv-.so";
  if ((m->path = malloc(size)) == NULL) return;
  snprintf(m->path, size, "%s/qgemv-%s.so", dir, name);
  snprintf(m->name, sizeof m->name, "%s", name);
  found.count++;
  qg_module_load(m);
}

/* The modules of one directory, in name order (readdir's order is the
 * file system's, and discovery must not depend on it). */
static void scan_dir(const char *dir, void *unused) {
  (void)unused;
  DIR *d = opendir(dir);
  if (d == NULL) return;
  char (*names)[QG_NAME_SIZE] = NULL;
  size_t count = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char name[QG_NAME_SIZE];
    if (!module_name(e->d_name, name)) continue;
    char(*grown)[QG_NAME_SIZE] = realloc(names, (count + 1) * sizeof *names);
    if (grown == NULL) break;
    names = grown;
    memcpy(names[count++], name, sizeof name);
  }
  closedir(d);
  if (count) qsort(names, count, sizeof *names, by_name);
  for (size_t i = 0; i < count; i++) add_module(dir, names[i]);
  free(names);
}

/* Auto's order: loaded modules with a priority above 0, highest first,
 * ties in search order (a stable insertion sort). */
static void order_for_auto(void) {
  found.auto_order = malloc((size_t)(found.count ? found.count : 1) * sizeof *found.auto_order);
  if (found.auto_order == NULL) return;
  for (int i = 0; i < found.count; i++) {
    const qg_found_module *m = &found.mods[i];
    if (m->status != QGEMV_OK || m->auto_priority <= 0) continue;
    int at = found.auto_count++;
    while (at > 0 && found.mods[found.auto_order[at - 1]].auto_priority < m->auto_priority) {
      found.auto_order[at] = found.auto_order[at - 1];
      at--;
    }
    found.auto_order[at] = i;
  }
}

static void discover(void) {
  const char *env = secure_getenv("QGEMV_PLUGIN_PATH");
  found.plugin_path = env ? strdup(env) : NULL;
  each_dir(scan_dir, NULL);
  order_for_auto();
}

static void discover_once(void) { pthread_once(&found_once, discover); }

/* ---- lookup ---------------------------------------------------------------- */

static void append(char *buf, size_t size, const char *text) {
  size_t used = strlen(buf);
  if (used + 1 < size) snprintf(buf + used, size - used, "%s", text);
}

typedef struct searched {
  const char *name;
  char *buf;
  size_t size;
  bool first;
} searched;

static void add_searched(const char *dir, void *arg) {
  searched *s = arg;
  char path[4200];
  snprintf(path, sizeof path, "%s%s/qgemv-%s.so", s->first ? "" : ", ", dir, s->name);
  s->first = false;
  append(s->buf, s->size, path);
}

static const char built_modules[] = QG_BUILT_MODULES;

static bool built_here(const char *name) {
  size_t len = strlen(name);
  for (const char *p = built_modules; (p = strstr(p, name)) != NULL; p += len)
    if ((p == built_modules || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) return true;
  return false;
}

/* NO_BACKEND for a name nothing answers to: what was found, and for a name
 * a module could have, where its file was looked for and what to do. */
static qgemv_status unknown(const char *name) {
  char msg[1024], part[128];
  snprintf(msg, sizeof msg, "unknown backend '%.32s': available: cpu", name);
  for (int i = 0; i < found.count; i++) {
    append(msg, sizeof msg, ", ");
    append(msg, sizeof msg, found.mods[i].name);
  }
  if (valid_name(name, strlen(name))) {
    snprintf(part, sizeof part, "; the module qgemv-%s.so was not found (searched ", name);
    append(msg, sizeof msg, part);
    searched s = {name, msg, sizeof msg, true};
    each_dir(add_searched, &s);
    if (built_here(name))
      snprintf(part, sizeof part, "); set QGEMV_PLUGIN_PATH to the directory that holds it");
    else
      snprintf(part, sizeof part, "); this qgemv was built without it (modules built: %s)",
               built_modules[0] ? built_modules : "none");
    append(msg, sizeof msg, part);
  }
  return qg_fail(QGEMV_ERR_NO_BACKEND, "%s", msg);
}

qgemv_status qg_backend_get(const char *name, const qg_backend **out) {
  if (strcmp(name, "cpu") == 0) {
    *out = qg_cpu_backend();
    return QGEMV_OK;
  }
  discover_once();
  const qg_found_module *m = find(name);
  if (m == NULL) return unknown(name);
  if (m->status != QGEMV_OK) return qg_fail(m->status, "%s", m->message);
  *out = m->be;
  return QGEMV_OK;
}

const qg_backend *qg_backend_auto(void) {
  discover_once();
  for (int i = 0; i < found.auto_count; i++) {
    const qg_backend *be = found.mods[found.auto_order[i]].be;
    if (be->device_count() > 0) return be;
  }
  return qg_cpu_backend();
}

int qgemv_backend_count(void) {
  discover_once();
  return 1 + found.count;
}

const char *qgemv_backend_name(int index) {
  if (index < 0 || index >= qgemv_backend_count()) return NULL;
  return index == 0 ? "cpu" : found.mods[index - 1].name;
}
