/*
 * Loading one device module. Its one entry symbol must report our ABI
 * number before the core reads anything the entry returned, and the name
 * in its backend table must be the name in its file name. Every refusal is
 * reported in words, with the path.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "module_load.h"

/* Records a refusal; long paths are cut, not overflowed. */
static void refuse(qg_found_module *m, qgemv_status s, const char *fmt, ...) QG_PRINTF(3, 4);
static void refuse(qg_found_module *m, qgemv_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->message, sizeof m->message, fmt, ap);
  va_end(ap);
  m->status = s;
}

/* The checks on what a loaded module's entry handed out; 0 when it passes. */
static int check_entry(qg_found_module *m, qg_module_entry_fn entry) {
  unsigned abi = 0;
  const qg_module *mod = (const qg_module *)entry(&abi);
  if (abi != QG_BACKEND_ABI) {
    refuse(m, QGEMV_ERR_ABI,
           "%s was built for backend ABI %u but this libqgemv needs ABI %u: install the module from the same "
           "qgemv release",
           m->path, abi, QG_BACKEND_ABI);
    return -1;
  }
  const qg_backend *be = mod ? mod->backend : NULL;
  if (be == NULL) {
    refuse(m, QGEMV_ERR_ABI, "%s reported ABI %u but returned no %s: the module is broken", m->path, abi,
           mod ? "backend table" : "module description");
    return -1;
  }
  if (be->abi != QG_BACKEND_ABI) {
    refuse(m, QGEMV_ERR_ABI,
           "%s reported ABI %u but its backend table says ABI %u: the module is broken or mismatched; install "
           "the module from the same qgemv release",
           m->path, abi, be->abi);
    return -1;
  }
  if (be->name == NULL || strcmp(be->name, m->name) != 0) {
    refuse(m, QGEMV_ERR_NO_BACKEND,
           "%s calls its backend '%.32s': a module's backend name must be the NAME of its file qgemv-NAME.so",
           m->path, be->name ? be->name : "(null)");
    return -1;
  }
  m->be = be;
  m->auto_priority = mod->auto_priority;
  return 0;
}

void qg_module_load(qg_found_module *m) {
  dlerror();
  void *handle = dlopen(m->path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    refuse(m, QGEMV_ERR_NO_BACKEND, "the %s backend module %s could not be loaded: %s", m->name, m->path,
           why ? why : "unknown dlopen error");
    return;
  }
  qg_module_entry_fn entry;
  *(void **)&entry = dlsym(handle, QG_MODULE_ENTRY);
  if (entry == NULL) {
    refuse(m, QGEMV_ERR_NO_BACKEND, "%s is not a qgemv module: it has no %s symbol", m->path, QG_MODULE_ENTRY);
    dlclose(handle);
    return;
  }
  if (check_entry(m, entry) != 0) {
    dlclose(handle);
    return;
  }
  m->status = QGEMV_OK; /* the handle stays open for the life of the process */
}
