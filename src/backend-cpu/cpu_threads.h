/* Thread count and core binding of the CPU backend (policy in cpu_threads.c). */
#ifndef QG_CPU_THREADS_H
#define QG_CPU_THREADS_H

#include "cpu.h"

#include <hwloc.h>

typedef struct qg_cpu_threads {
  int count;             /* OpenMP threads per parallel region */
  int ncores;            /* usable cores */
  hwloc_bitmap_t *cores; /* their PUs that the process may use */
  int *core_of;          /* per thread: index into cores */
  bool bind;             /* we bind workers (not OpenMP, not single-threaded) */
  hwloc_bitmap_t all;    /* QGEMV_CPU_BIND=none: the process's PUs, given back
                            to workers an earlier context bound; else NULL */
  char policy[64];
} qg_cpu_threads;

/* Cores the process may run on (its binding within the allowed cpuset):
 * the default thread count. */
int qg_cpu_threads_cores(void);

/* Plans the binding for `count` threads from the process topology and
 * QGEMV_CPU_BIND (cores, the default: one worker per core; none: the OS
 * places the threads). */
qgemv_status qg_cpu_threads_init(qg_cpu_threads *th, int count);
void qg_cpu_threads_fini(qg_cpu_threads *th);
/* Called by each thread at the top of every parallel region of the
 * backend: binds a worker the first time it is seen, then costs one
 * thread-local load. Thread 0 (the caller) is never bound. */
void qg_cpu_threads_enter(const qg_cpu_threads *th, int thread);

#endif
