/* One device module found in the search path, and loading it. */
#ifndef QG_MODULE_LOAD_H
#define QG_MODULE_LOAD_H

#include "backend.h"

/* A backend name: 1 to 15 lowercase letters, digits or '_', starting with a
 * letter (it must fit qgemv_device_info.backend and the spec parser). */
enum { QG_NAME_SIZE = 16 };

typedef struct qg_found_module {
  char name[QG_NAME_SIZE]; /* NAME of its file qgemv-NAME.so */
  char *path;
  qgemv_status status;     /* QGEMV_OK: loaded and checked */
  char message[768];       /* why it was refused, when it was */
  const qg_backend *be;
  int auto_priority;
} qg_found_module;

/* Opens m->path and checks its entry, ABI and name, calling nothing in the
 * backend; on success sets be and auto_priority, else status and message.
 * The library stays loaded for the life of the process. */
void qg_module_load(qg_found_module *m);

#endif
