/*
 * Thread placement with hwloc.
 *
 * Policy (why): the kernels stream weights whose pages were first touched
 * by the thread that reads them (cpu_backend.c), so a worker must stay on
 * its core from upload to matvec; each OpenMP worker thread is bound to one
 * core of the process's allowed cpuset, once, the first time it serves this
 * library (eagerly at open), never again per call.
 *
 * The calling thread is thread 0 of every team and is NOT bound: a library
 * must not silently change its caller's affinity (an MPI rank, a runtime's
 * own pinning). When the caller is already pinned inside one core, thread 0
 * counts as that core and the workers take the other cores; otherwise the
 * workers take cores 1, 2, ... and leave core 0 free, where the scheduler
 * then runs the caller. When the user asked the OpenMP runtime to bind
 * (OMP_PROC_BIND / OMP_PLACES), that choice wins and we bind nothing.
 * QGEMV_CPU_BIND=none binds nothing either, and gives workers that an
 * earlier context bound the whole process set back: in a VM whose vCPUs
 * hide which of them share a physical core, "one per core" can put two
 * workers on one (the H200 machine's host: NF4 at 4 threads 1.6x slower
 * on vCPUs 0-3 than on 0,2,4,6; bench/NOTES-cpu.md v21).
 *
 * Caveats, for the documentation: the workers are the OpenMP runtime's
 * pool for the calling thread, so an application's own parallel regions
 * from that thread run on the same, now bound, threads; and after a call
 * the workers spin for a while before sleeping (OMP_WAIT_POLICY=passive
 * stops that where the cores are needed for other work between calls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../topology/topology.h"
#include "cpu_threads.h"

/* The first PU (OS index + 1) of the core set this thread was bound to by
 * us; 0: none. Contexts with different plans then rebind only when they
 * want a different core. */
static _Thread_local int bound_core;

/* PUs this process may run on: its binding (taskset, cpuset, a launcher)
 * within what the OS allows. The topology alone is not enough: it may
 * cover the whole machine when it was not restricted to the binding. */
static hwloc_bitmap_t process_pus(hwloc_topology_t t) {
  hwloc_bitmap_t s = hwloc_bitmap_alloc();
  if (s == NULL) return NULL;
  if (hwloc_get_cpubind(t, s, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(s))
    hwloc_bitmap_copy(s, hwloc_topology_get_allowed_cpuset(t));
  else
    hwloc_bitmap_and(s, s, hwloc_topology_get_allowed_cpuset(t));
  return s;
}

int qg_cpu_threads_cores(void) {
  hwloc_topology_t t = qg_topology();
  hwloc_bitmap_t pus = t ? process_pus(t) : NULL;
  int n = 0;
  if (pus) {
    for (hwloc_obj_t c = NULL; (c = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_CORE, c)) != NULL;)
      if (hwloc_bitmap_intersects(c->cpuset, pus)) n++;
    hwloc_bitmap_free(pus);
  }
  return n > 0 ? n : qg_topology_cores();
}

static void set_policy(qg_cpu_threads *th, const char *what) { snprintf(th->policy, sizeof th->policy, "%s", what); }

qgemv_status qg_cpu_threads_init(qg_cpu_threads *th, int count) {
  th->count = count;
  th->ncores = 0;
  th->cores = NULL;
  th->core_of = NULL;
  th->bind = false;
  th->all = NULL;
  const char *want = getenv("QGEMV_CPU_BIND");
  bool none = want && strcmp(want, "none") == 0;
  if (want && *want && !none && strcmp(want, "cores") != 0)
    return qg_cpu_fail(QGEMV_ERR_INVALID_ARG,
                       "QGEMV_CPU_BIND=%.32s: use cores (one worker thread per core, the default) or none (the "
                       "operating system places the threads)",
                       want);
  hwloc_topology_t t = qg_topology();
#ifdef _OPENMP
  bool openmp_binds = omp_get_proc_bind() != omp_proc_bind_false;
#else
  bool openmp_binds = false;
#endif
  if (count == 1) return set_policy(th, "1 thread, caller not rebound"), QGEMV_OK;
  if (openmp_binds) return set_policy(th, "bound by OpenMP (OMP_PROC_BIND)"), QGEMV_OK;
  if (none) {
    th->all = t ? process_pus(t) : NULL;
    return set_policy(th, "unbound (QGEMV_CPU_BIND=none)"), QGEMV_OK;
  }
  hwloc_bitmap_t pus = t ? process_pus(t) : NULL;
  if (pus == NULL) return set_policy(th, "unbound (no hwloc topology)"), QGEMV_OK;

  /* The usable part of every core the process may run on, in hwloc's
   * logical (locality) order. */
  int total = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  th->cores = calloc(total > 0 ? (size_t)total : 1u, sizeof *th->cores);
  th->core_of = malloc((size_t)count * sizeof *th->core_of);
  if (th->cores == NULL || th->core_of == NULL) {
    hwloc_bitmap_free(pus);
    qg_cpu_threads_fini(th);
    return qg_cpu_fail(QGEMV_ERR_NO_MEMORY, "out of host memory");
  }
  for (hwloc_obj_t c = NULL; (c = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_CORE, c)) != NULL;) {
    if (!hwloc_bitmap_intersects(c->cpuset, pus)) continue;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set == NULL) break;
    hwloc_bitmap_and(set, c->cpuset, pus);
    th->cores[th->ncores++] = set;
  }
  hwloc_bitmap_free(pus);
  if (th->ncores == 0) {
    qg_cpu_threads_fini(th);
    return set_policy(th, "unbound (no usable core found)"), QGEMV_OK;
  }

  /* The core the caller is pinned to, if it is pinned within one. */
  int first = 0;
  hwloc_bitmap_t mine = hwloc_bitmap_alloc();
  if (mine && hwloc_get_cpubind(t, mine, HWLOC_CPUBIND_THREAD) == 0 && !hwloc_bitmap_iszero(mine))
    for (int c = 0; c < th->ncores; c++)
      if (hwloc_bitmap_isincluded(mine, th->cores[c])) {
        first = c;
        break;
      }
  hwloc_bitmap_free(mine);
  /* Thread i takes the i-th core counting from the caller's, round robin
   * when there are more threads than cores. */
  for (int i = 0; i < count; i++) th->core_of[i] = (first + i) % th->ncores;
  th->bind = true;
  snprintf(th->policy, sizeof th->policy, "%d worker%s bound 1 per core, caller not rebound", count - 1,
           count == 2 ? "" : "s");
  return QGEMV_OK;
}

void qg_cpu_threads_fini(qg_cpu_threads *th) {
  for (int c = 0; th->cores && c < th->ncores; c++) hwloc_bitmap_free(th->cores[c]);
  free(th->cores);
  free(th->core_of);
  th->cores = NULL;
  th->core_of = NULL;
  th->ncores = 0;
  th->bind = false;
  if (th->all) hwloc_bitmap_free(th->all);
  th->all = NULL;
}

void qg_cpu_threads_enter(const qg_cpu_threads *th, int thread) {
  if (th->all && bound_core != 0 && thread != 0) { /* QGEMV_CPU_BIND=none after a binding context */
    if (hwloc_set_cpubind(qg_topology(), th->all, HWLOC_CPUBIND_THREAD) == 0) bound_core = 0;
    return;
  }
  if (!th->bind || thread == 0 || thread >= th->count) return;
  hwloc_const_bitmap_t set = th->cores[th->core_of[thread]];
  int want = hwloc_bitmap_first(set) + 1;
  if (bound_core == want) return; /* the common case: no system call */
  /* Failure (a cpuset the OS refuses) leaves the thread where it is: slower
   * placement, same results. */
  if (hwloc_set_cpubind(qg_topology(), set, HWLOC_CPUBIND_THREAD) == 0) bound_core = want;
}
