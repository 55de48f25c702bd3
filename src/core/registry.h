/* Known backends: the built-in CPU backend and the device modules that
 * discovery found (registry.c). */
#ifndef QG_REGISTRY_H
#define QG_REGISTRY_H

#include "backend.h"

/* The backend called `name`. The first call that needs the modules
 * discovers them (once per process, safe to race). Errors: NO_BACKEND
 * (unknown name, module unloadable or misnamed), ABI (module built for
 * another ABI), each with the reason in words. */
qgemv_status qg_backend_get(const char *name, const qg_backend **out);

/* What "auto" opens: of the loaded modules with a priority above 0, the
 * highest-priority one that sees a device; else the CPU backend. Sets no
 * error message: auto is quiet about the modules it passes over. */
const qg_backend *qg_backend_auto(void);

/* The built-in CPU backend (src/backend-cpu). */
const qg_backend *qg_cpu_backend(void);
/* Its ISA levels (levels.c): how many, and level `index` (in range). */
int qg_cpu_level_total(void);
void qg_cpu_level_describe(int index, qgemv_cpu_level_info *out);

#endif
