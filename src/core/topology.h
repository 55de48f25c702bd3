/* The machine's topology from hwloc, loaded once per process. */
#ifndef QG_TOPOLOGY_H
#define QG_TOPOLOGY_H

#include <hwloc.h>
#include <stddef.h>

/* The process-wide topology (restricted to what this process may use), or
 * NULL when hwloc could not load one. Read-only once returned. */
hwloc_topology_t qg_topology(void);
/* Cores in the process's allowed cpuset (at least 1). */
int qg_topology_cores(void);
/* "1 package, 1 NUMA node, 2 cores, 2 PUs, L3 260 MB" (into buf). */
void qg_topology_summary(char *buf, size_t size);
/* Size of the largest cache level hwloc reports, 0 if unknown. */
unsigned long long qg_topology_llc_bytes(void);
/* The CPU model name hwloc reports (or "unknown CPU"). */
const char *qg_topology_cpu_name(void);

#endif
