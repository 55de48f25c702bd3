/*
 * The machine's topology from hwloc, for the CPU backend and for device
 * modules. This helper is a static library linked into each shared object
 * that uses it (libqgemv, a module), so each loads its own topology once
 * per process and a module never calls back into the core for it.
 */
#ifndef QG_TOPOLOGY_H
#define QG_TOPOLOGY_H

#include <hwloc.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What this process may run on (cgroups, taskset and batch schedulers
 * shrink the machine): where the CPU backend places its threads. NULL when
 * hwloc could not load a topology. Read-only once returned. */
hwloc_topology_t qg_topology(void);
/* The whole machine, CPUs this process is not bound to included: where a
 * device sits, which may be away from the process's binding. NULL when
 * hwloc could not load one. Read-only once returned. */
hwloc_topology_t qg_topology_machine(void);

/* Of qg_topology(): cores (at least 1), */
int qg_topology_cores(void);
/* "1 package, 1 NUMA node, 2 cores, 2 PUs, L3 260 MB" (into buf), */
void qg_topology_summary(char *buf, size_t size);
/* the size of the largest cache level hwloc reports (0 if unknown), */
unsigned long long qg_topology_llc_bytes(void);
/* and the CPU model name hwloc reports (or "unknown CPU"). */
const char *qg_topology_cpu_name(void);

#ifdef __cplusplus
}
#endif
#endif
