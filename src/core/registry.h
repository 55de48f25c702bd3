/* Known backends: the built-in CPU backend and run-time loaded modules. */
#ifndef QG_REGISTRY_H
#define QG_REGISTRY_H

#include "backend.h"

/* The backend called `name`, loading its module on first use (once per
 * process, safe to race). Errors: NO_BACKEND (unknown name, module missing
 * or unloadable), ABI (module built for another ABI). */
qgemv_status qg_backend_get(const char *name, const qg_backend **out);

/* The built-in CPU backend (src/backend-cpu). */
const qg_backend *qg_cpu_backend(void);
/* Its ISA levels (levels.c): how many, and level `index` (in range). */
int qg_cpu_level_total(void);
void qg_cpu_level_describe(int index, qgemv_cpu_level_info *out);

#endif
