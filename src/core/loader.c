/*
 * Backend registry and module loader. A module is looked up by its exact
 * file name, first in each directory of $QGEMV_PLUGIN_PATH (read through
 * secure_getenv, so set-id programs ignore it), then in the install
 * directory. Its one entry symbol must report our ABI number before the
 * core touches anything else in it. Every refusal is reported in words.
 */
#define _GNU_SOURCE
#include "config.h"
#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "registry.h"

#ifndef QG_PKGLIBDIR
#define QG_PKGLIBDIR "/usr/local/lib/qgemv"
#endif

typedef struct module_slot {
  const char *name;     /* backend name */
  const char *file;     /* module file name */
  pthread_once_t once;
  qgemv_status status;
  char message[768];
  const qg_backend *be;
} module_slot;

static module_slot modules[] = {
    {.name = "cuda", .file = "qgemv-cuda.so", .once = PTHREAD_ONCE_INIT},
};

/* Records a refusal; long paths are cut, not overflowed. */
static void refuse(module_slot *slot, qgemv_status s, const char *fmt, ...) QG_PRINTF(3, 4);
static void refuse(module_slot *slot, qgemv_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(slot->message, sizeof slot->message, fmt, ap);
  va_end(ap);
  slot->status = s;
}

static void append(char *buf, size_t size, const char *sep, const char *arg) {
  size_t used = strlen(buf);
  if (used + 1 < size) strncat(buf, used ? sep : "", size - used - 1);
  used = strlen(buf);
  if (used + 1 < size) strncat(buf, arg, size - used - 1);
}

/* Tries dir/file; returns 1 when loaded, 0 when absent, -1 on a refusal
 * that ends the search (reason in slot->message). */
static int try_dir(module_slot *slot, const char *dir, size_t dirlen, char *searched, size_t searched_size) {
  char path[4096];
  if (dirlen == 0) return 0;
  if (dirlen + strlen(slot->file) + 2 > sizeof path) return 0;
  memcpy(path, dir, dirlen);
  path[dirlen] = '/';
  strcpy(path + dirlen + 1, slot->file);
  append(searched, searched_size, ", ", path);
  if (access(path, F_OK) != 0) return 0;

  dlerror();
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    refuse(slot, QGEMV_ERR_NO_BACKEND, "the %s backend module %s could not be loaded: %s", slot->name, path,
           why ? why : "unknown dlopen error");
    return -1;
  }
  qg_module_entry_fn entry;
  *(void **)&entry = dlsym(handle, QG_MODULE_ENTRY);
  if (entry == NULL) {
    refuse(slot, QGEMV_ERR_NO_BACKEND, "%s is not a qgemv module: it has no %s symbol", path, QG_MODULE_ENTRY);
    dlclose(handle);
    return -1;
  }
  unsigned abi = 0;
  const qg_backend *be = (const qg_backend *)entry(&abi);
  if (abi != QG_BACKEND_ABI) {
    refuse(slot, QGEMV_ERR_ABI,
           "%s was built for backend ABI %u but this libqgemv needs ABI %u: install the module from the same "
           "qgemv release",
           path, abi, QG_BACKEND_ABI);
    dlclose(handle);
    return -1;
  }
  if (be == NULL || be->abi != QG_BACKEND_ABI) {
    if (be == NULL)
      refuse(slot, QGEMV_ERR_ABI, "%s reported ABI %u but returned no backend table: the module is broken", path, abi);
    else
      refuse(slot, QGEMV_ERR_ABI,
             "%s reported ABI %u but its backend table says ABI %u: the module is broken or mismatched; install "
             "the module from the same qgemv release",
             path, abi, be->abi);
    dlclose(handle);
    return -1;
  }
  slot->be = be; /* the handle stays open for the life of the process */
  slot->status = QGEMV_OK;
  return 1;
}

static void load_slot(module_slot *slot) {
  char searched[2048] = "";
  const char *env = secure_getenv("QGEMV_PLUGIN_PATH");
  if (env != NULL) {
    for (const char *p = env;;) {
      const char *colon = strchr(p, ':');
      size_t len = colon ? (size_t)(colon - p) : strlen(p);
      int r = try_dir(slot, p, len, searched, sizeof searched);
      if (r != 0) return;
      if (!colon) break;
      p = colon + 1;
    }
  }
  int r = try_dir(slot, QG_PKGLIBDIR, strlen(QG_PKGLIBDIR), searched, sizeof searched);
  if (r != 0) return;
#ifdef QG_HAVE_CUDA_MODULE
  const char *hint = "set QGEMV_PLUGIN_PATH to the directory that holds it";
#else
  const char *hint = "this qgemv was configured without CUDA (rebuild with --with-cuda)";
#endif
  refuse(slot, QGEMV_ERR_NO_BACKEND, "the %s backend module %s was not found (searched %s); %s", slot->name,
         slot->file, searched, hint);
}

/* pthread_once takes no argument: one trampoline per slot. */
static void load_cuda(void) { load_slot(&modules[0]); }
static void (*const loaders[])(void) = {load_cuda};

qgemv_status qg_backend_get(const char *name, const qg_backend **out) {
  if (strcmp(name, "cpu") == 0) {
    *out = qg_cpu_backend();
    return QGEMV_OK;
  }
  for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
    module_slot *slot = &modules[i];
    if (strcmp(name, slot->name) != 0) continue;
    pthread_once(&slot->once, loaders[i]);
    if (slot->status != QGEMV_OK) return qg_fail(slot->status, "%s", slot->message);
    *out = slot->be;
    return QGEMV_OK;
  }
  return qg_fail(QGEMV_ERR_NO_BACKEND, "unknown backend '%s': use auto, cpu or cuda", name);
}

static const char *const backend_names[] = {"cpu", "cuda"};

int qgemv_backend_count(void) { return (int)(sizeof backend_names / sizeof backend_names[0]); }

const char *qgemv_backend_name(int index) {
  if (index < 0 || index >= qgemv_backend_count()) return NULL;
  return backend_names[index];
}
