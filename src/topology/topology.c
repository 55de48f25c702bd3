#include "topology.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

/* Loads a topology with `flags`; NULL when hwloc cannot. */
static hwloc_topology_t load(unsigned long flags) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0) return NULL;
  hwloc_topology_set_flags(t, flags);
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    return NULL;
  }
  return t;
}

static pthread_once_t process_once = PTHREAD_ONCE_INIT, machine_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t process_topo, machine_topo;

static void load_process(void) { process_topo = load(HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING); }
static void load_machine(void) { machine_topo = load(0); }

hwloc_topology_t qg_topology(void) {
  pthread_once(&process_once, load_process);
  return process_topo;
}

hwloc_topology_t qg_topology_machine(void) {
  pthread_once(&machine_once, load_machine);
  return machine_topo;
}

int qg_topology_cores(void) {
  hwloc_topology_t t = qg_topology();
  int n = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) : 0;
  if (n <= 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    n = cpus > 0 ? (int)cpus : 1;
  }
  return n;
}

unsigned long long qg_topology_llc_bytes(void) {
  hwloc_topology_t t = qg_topology();
  unsigned long long best = 0;
  if (!t) return 0;
  for (hwloc_obj_type_t type = HWLOC_OBJ_L1CACHE; type <= HWLOC_OBJ_L5CACHE; type++) {
    hwloc_obj_t o = hwloc_get_next_obj_by_type(t, type, NULL);
    if (o && o->attr && o->attr->cache.size > best) best = o->attr->cache.size;
  }
  return best;
}

const char *qg_topology_cpu_name(void) {
  hwloc_topology_t t = qg_topology();
  if (t) {
    hwloc_obj_t pkg = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PACKAGE, NULL);
    const char *name = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    if (name) return name;
  }
  return "unknown CPU";
}

void qg_topology_summary(char *buf, size_t size) {
  hwloc_topology_t t = qg_topology();
  if (!t) {
    snprintf(buf, size, "hwloc topology unavailable; %d CPUs online", qg_topology_cores());
    return;
  }
  int pkgs = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
  int numa = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  int cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  int pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  snprintf(buf, size, "%d package%s, %d NUMA node%s, %d cores, %d PUs, LLC %llu MB", pkgs, pkgs == 1 ? "" : "s",
           numa, numa == 1 ? "" : "s", cores, pus, qg_topology_llc_bytes() >> 20);
}
