/* The built-in CPU backend: host memory, OpenMP over output rows (one
 * contiguous range per thread, the same split at upload and at matvec),
 * one of the ISA levels for the inner loops, workers bound by hwloc. */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../core/formats.h"
#include "../core/reference.h"
#include "../core/registry.h"
#include "../topology/topology.h"
#include "cpu.h"
#include "cpu_interleave.h"
#include "cpu_threads.h"

typedef struct cpu_state {
  const qg_cpu_level *level;
  int threads;
  qg_cpu_threads placement;
  /* Normalized activations. Grown (never shrunk) when a call needs more, so
   * steady-state decode allocates nothing; the matvec is synchronous, so
   * one buffer per context suffices. */
  void *workspace;
  size_t workspace_bytes;
} cpu_state;

static _Thread_local char detail[512];

qgemv_status qg_cpu_fail(qgemv_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return s;
}

static const char *cpu_error_detail(void) { return detail; }

static int thread_num(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

static int thread_count(void) {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

static int cpu_device_count(void) { return 1; }

static char build_info[128];
static pthread_once_t build_info_once = PTHREAD_ONCE_INIT;

static void make_build_info(void) {
  size_t used = (size_t)snprintf(build_info, sizeof build_info, "cpu levels:");
  for (int i = 0; i < qg_cpu_level_count && used < sizeof build_info; i++)
    if (qg_cpu_level_built(qg_cpu_levels[i]))
      used += (size_t)snprintf(build_info + used, sizeof build_info - used, " %s", qg_cpu_levels[i]->name);
#if defined(QG_X86_EMU)
  /* scripts/x86-emu-check.sh's build: say so wherever the build is shown */
  if (used < sizeof build_info)
    snprintf(build_info + used, sizeof build_info - used, " (AVX-512 and AMX emulated: a test build)");
#endif
}

static const char *cpu_build_info(void) {
  pthread_once(&build_info_once, make_build_info);
  return build_info;
}

/* $QGEMV_NUM_THREADS, else one thread per core the process may run on. */
static qgemv_status pick_threads(int *out) {
  const char *env = getenv("QGEMV_NUM_THREADS");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end != '\0' || v < 1 || v > 4096)
      return qg_cpu_fail(QGEMV_ERR_INVALID_ARG, "QGEMV_NUM_THREADS=%.32s: use a thread count from 1 to 4096", env);
    *out = (int)v;
    return QGEMV_OK;
  }
  *out = qg_cpu_threads_cores();
  return QGEMV_OK;
}

static qgemv_status cpu_open(int device, void **state, int *opened) {
  if (device > 0) return qg_cpu_fail(QGEMV_ERR_NO_DEVICE, "the CPU backend has one device, 0; asked for %d", device);
  cpu_state *st = calloc(1, sizeof *st);
  if (st == NULL) return qg_cpu_fail(QGEMV_ERR_NO_MEMORY, "out of host memory");
  qgemv_status s = qg_cpu_pick_level(&st->level);
  if (s == QGEMV_OK) s = pick_threads(&st->threads);
  if (s == QGEMV_OK) s = qg_cpu_threads_init(&st->placement, st->threads);
  if (s != QGEMV_OK) {
    free(st);
    return s;
  }
  /* Bind the workers now, once, rather than inside the first matvec. */
#pragma omp parallel num_threads(st->threads)
  qg_cpu_threads_enter(&st->placement, thread_num());
  *opened = 0;
  *state = st;
  return QGEMV_OK;
}

static void cpu_close(void *state) {
  cpu_state *st = state;
  qg_cpu_threads_fini(&st->placement);
  free(st->workspace);
  free(st);
}

/* "32K" / "512K" / "32M": a cache size, short. */
static void short_size(char *buf, size_t size, unsigned long long bytes) {
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
    snprintf(buf, size, "%lluM", bytes >> 20);
  else
    snprintf(buf, size, "%lluK", bytes >> 10);
}

/* "1 pkg, 1 NUMA, 2 cores, 2 PUs; L1d 32K L2 512K L3 32M; <binding>": the
 * topology the backend plans with, for qgemv info. */
static void locality(const cpu_state *st, char *buf, size_t size) {
  hwloc_topology_t t = qg_topology();
  if (t == NULL) {
    qg_topology_summary(buf, size);
    return;
  }
  size_t used = (size_t)snprintf(buf, size, "%d pkg, %d NUMA, %d cores, %d PUs;",
                                 hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE),
                                 hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE),
                                 hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
  static const struct { hwloc_obj_type_t type; const char *name; } caches[] = {
      {HWLOC_OBJ_L1CACHE, "L1d"}, {HWLOC_OBJ_L2CACHE, "L2"}, {HWLOC_OBJ_L3CACHE, "L3"}};
  for (size_t i = 0; i < sizeof caches / sizeof caches[0] && used < size; i++) {
    hwloc_obj_t c = hwloc_get_next_obj_by_type(t, caches[i].type, NULL);
    if (c == NULL || c->attr == NULL) continue;
    char sz[24];
    short_size(sz, sizeof sz, c->attr->cache.size);
    used += (size_t)snprintf(buf + used, size - used, " %s %s", caches[i].name, sz);
  }
  if (used < size) snprintf(buf + used, size - used, "; %s", st->placement.policy);
}

static qgemv_status cpu_device_info(void *state, qgemv_device_info *info) {
  cpu_state *st = state;
  hwloc_topology_t t = qg_topology();
  snprintf(info->name, sizeof info->name, "%s", qg_topology_cpu_name());
  info->units = qg_cpu_threads_cores();
  info->threads = st->threads;
  /* The kernel's MemTotal. hwloc's root total_memory sums the NUMA nodes'
   * meminfo, which some virtual machines under-report (8.8 GiB of 23 seen
   * here); it stays the fallback where sysconf cannot say. */
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    info->memory_bytes = (uint64_t)pages * (uint64_t)page;
  else if (t)
    info->memory_bytes = hwloc_get_root_obj(t)->total_memory;
  info->llc_bytes = qg_topology_llc_bytes();
  snprintf(info->isa, sizeof info->isa, "%s", st->level->name);
  locality(st, info->locality, sizeof info->locality);
  return QGEMV_OK;
}

static qgemv_status cpu_set_stream(void *state, void *native) {
  (void)state;
  if (native != NULL) return qg_cpu_fail(QGEMV_ERR_UNSUPPORTED, "the CPU backend has no streams: pass NULL");
  return QGEMV_OK;
}

static qgemv_status cpu_sync(void *state) {
  (void)state;
  return QGEMV_OK;
}

static qgemv_status cpu_alloc(void *state, size_t bytes, void **ptr) {
  (void)state;
  size_t rounded = (bytes + 63u) & ~(size_t)63u;
  if (rounded < bytes || (*ptr = aligned_alloc(64, rounded)) == NULL)
    return qg_cpu_fail(QGEMV_ERR_NO_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
  return QGEMV_OK;
}

/* Memory that kernels stream (weights, the bandwidth probe's buffer): at
 * 4 MB and above, 2 MB aligned and advised for transparent huge pages, so a
 * stream takes a TLB miss per 2 MB rather than per 4 KB. Where THP is off
 * (or "never") the advice is ignored and this is plain memory. Only the
 * pages touched become resident, so the alignment costs address space, not
 * memory. Free with free(). */
#define QG_HUGE (2u << 20)
static qgemv_status alloc_stream(size_t bytes, void **ptr) {
  if (bytes < 2 * QG_HUGE) return cpu_alloc(NULL, bytes, ptr);
  size_t rounded = (bytes + 63u) & ~(size_t)63u;
  if (rounded < bytes || posix_memalign(ptr, QG_HUGE, rounded) != 0) {
    *ptr = NULL;
    return qg_cpu_fail(QGEMV_ERR_NO_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
  }
#ifdef MADV_HUGEPAGE
  madvise(*ptr, rounded, MADV_HUGEPAGE); /* advice: failure is harmless */
#endif
  return QGEMV_OK;
}

static void cpu_free(void *state, void *ptr) {
  (void)state;
  free(ptr);
}

static qgemv_status cpu_copy(void *state, void *dst, const void *src, size_t bytes) {
  (void)state;
  memcpy(dst, src, bytes);
  return QGEMV_OK;
}

/* The kernel the context's level has for a layout, else the scalar
 * level's (which has one for every layout); *level gets its level. m > 0:
 * the kernel for a call of m rows (kernel.below under its below_m); 0: the
 * level's own, whose resident weight every m shares. */
static const qg_cpu_kernel *kernel_for(const cpu_state *st, qg_layout_id id, int64_t m,
                                       const qg_cpu_level **level) {
  const qg_cpu_level *l = st->level->kernels[id].rows ? st->level : &qg_cpu_level_scalar;
  if (level) *level = l;
  const qg_cpu_kernel *kn = &l->kernels[id];
  return m > 0 && kn->below != NULL && m < kn->below_m ? kn->below : kn;
}

/* Thread t of nt's rows of n: a contiguous range of whole groups of
 * `group` rows (the last one may be narrower). The same split at upload
 * (first touch) and at matvec. */
static void thread_rows(int64_t n, int group, int t, int nt, int64_t *r0, int64_t *r1) {
  int64_t groups = (n + group - 1) / group;
  *r0 = groups * t / nt * group;
  *r1 = groups * (t + 1) / nt * group;
  if (*r1 > n) *r1 = n;
}

static qgemv_status cpu_weight_upload(void *state, const qgemv_weight_desc *desc, qg_layout_id id, int64_t max_m,
                                      void **layout, size_t *resident) {
  (void)max_m; /* one form serves every m */
  cpu_state *st = state;
  qg_shape shape;
  qg_check_shape(desc->format, desc->n, desc->k, desc->group, &shape); /* valid: it cannot fail */
  const qg_cpu_kernel *kn = kernel_for(st, id, 0, NULL);
  const int group = kn->group_rows ? kn->group_rows : 1;
  /* Interleaved layouts hold the scales inline: one stream of the same size. */
  const size_t scale_bytes = shape.scale_count * sizeof(float);
  const size_t bytes = kn->group_rows ? shape.data_bytes + scale_bytes : shape.data_bytes;
  const size_t nscales = kn->group_rows ? 0 : shape.scale_count;
  qg_cpu_weight *w = calloc(1, sizeof *w);
  if (w == NULL) return qg_cpu_fail(QGEMV_ERR_NO_MEMORY, "out of host memory");
  if (alloc_stream(bytes, &w->data) != QGEMV_OK ||
      (nscales && alloc_stream(nscales * sizeof(float), (void **)&w->scales) != QGEMV_OK)) {
    free(w->data);
    free(w);
    return qg_cpu_fail(QGEMV_ERR_NO_MEMORY, "cannot allocate %zu bytes of host memory for the weight",
                       shape.data_bytes + scale_bytes);
  }
  /* NUMA placement by first touch (not hwloc membind): the pages are
   * untouched until the thread that will read them writes them here. The
   * matvec splits rows over threads exactly as this loop does, and workers
   * stay bound to their cores (cpu_threads.c), so each row's pages land on
   * the NUMA node of the core that streams them. An interleaved layout
   * keeps each group's bytes where the packed format has its rows. */
  size_t row_bytes = bytes / (size_t)desc->n, row_scales = nscales / (size_t)desc->n;
  int64_t n = desc->n;
#pragma omp parallel num_threads(st->threads)
  {
    int t = thread_num(), nt = thread_count();
    qg_cpu_threads_enter(&st->placement, t);
    int64_t r0, r1;
    thread_rows(n, group, t, nt, &r0, &r1);
    uint8_t *to = (uint8_t *)w->data + (size_t)r0 * row_bytes;
    if (r1 > r0 && kn->group_rows && desc->format == QGEMV_NF4)
      qg_interleave_nf4(desc, group, r0, r1, to);
    else if (r1 > r0 && kn->group_rows)
      qg_interleave_q2(desc, group, r0, r1, to);
    else
      memcpy(to, (const char *)desc->data + (size_t)r0 * row_bytes, (size_t)(r1 - r0) * row_bytes);
    if (row_scales)
      memcpy(w->scales + (size_t)r0 * row_scales, desc->scales + (size_t)r0 * row_scales,
             (size_t)(r1 - r0) * row_scales * sizeof(float));
  }
  w->bytes = bytes + nscales * sizeof(float);
  w->id = id;
  w->desc = *desc;
  w->desc.data = w->data;
  w->desc.scales = w->scales;
  *layout = w;
  *resident = w->bytes;
  return QGEMV_OK;
}

static void cpu_weight_free(void *state, void *layout) {
  (void)state;
  qg_cpu_weight *w = layout;
  free(w->data);
  free(w->scales);
  free(w);
}

/* Interleaved kernels read the rows of a group together (their layout). */
static const char *cpu_weight_form(void *state, const void *layout) {
  const qg_cpu_weight *w = layout;
  return kernel_for(state, w->id, 0, NULL)->group_rows ? "interleaved" : "packed";
}

static qgemv_status ensure_workspace(cpu_state *st, size_t bytes) {
  if (bytes <= st->workspace_bytes) return QGEMV_OK;
  void *p;
  if (cpu_alloc(st, bytes, &p) != QGEMV_OK) return qg_cpu_fail(QGEMV_ERR_NO_MEMORY,
      "cannot allocate %zu bytes for the normalized activations", bytes);
  free(st->workspace);
  st->workspace = p;
  st->workspace_bytes = bytes;
  return QGEMV_OK;
}

static size_t round64(size_t n) { return (n + 63u) & ~(size_t)63u; }

/* Thread t's share of the quantizer's first phase (cpu_xfix.h): term 0 of
 * every block of every activation row, cut into nt contiguous runs of
 * (row, block) pairs. Each block's bytes are its own, so the split does
 * not change them; the rows' serial phase follows a barrier. About 35-40
 * us of a row of 28672 on a Zen 3 core, three quarters of the quantizer's
 * time there (bench/cpu-lab/xfix-cost, NOTES-cpu v29). */
static void quantize_share(const qg_cpu_job *job, int64_t k, int g, qg_xfix_term_fn term, char *ws, size_t row_bytes,
                           int t, int nt) {
  const int64_t nb = k / g, total = job->m * nb;
  const int64_t p0 = total * t / nt, p1 = total * (t + 1) / nt;
  for (int64_t p = p0; p < p1;) {
    const int64_t r = p / nb, b0 = p % nb, b1 = p1 - r * nb < nb ? p1 - r * nb : nb;
    qg_xfix_first(job->xn + (size_t)r * (size_t)k, k, g, ws + (size_t)r * row_bytes, term, b0, b1);
    p = r * nb + b1;
  }
}

static qgemv_status cpu_matvec(void *state, const qg_matvec_args *a) {
  cpu_state *st = state;
  const qg_cpu_weight *w = a->layout;
  const qg_cpu_level *level;
  const qg_cpu_kernel *kn = kernel_for(st, a->layout_id, a->m, &level);
  const int g = qg_layouts[a->layout_id].group;
  /* Workspace: the normalized x, then (kernels with xfix) the m rows in
   * block fixed point and their views. */
  size_t count = (size_t)a->m * (size_t)a->k; /* fits: the x tensor exists */
  size_t elem = level->wants_double ? sizeof(double) : sizeof(float);
  size_t xq_row = kn->xfix ? qg_xfix_row_bytes(a->k, g) : 0;
  if (count > SIZE_MAX / 8 / elem || (size_t)a->m > SIZE_MAX / 2 / (xq_row + sizeof(qg_xfix_row)))
    return qg_cpu_fail(QGEMV_ERR_NO_MEMORY, "activations too large for a workspace");
  size_t xn_bytes = round64(count * elem), views = round64((size_t)a->m * sizeof(qg_xfix_row));
  qgemv_status s = ensure_workspace(st, xn_bytes + (kn->xfix ? views + (size_t)a->m * xq_row : 0));
  if (s != QGEMV_OK) return s;
  qg_cpu_job job = {.w = w, .m = a->m, .y = a->y, .y_dtype = a->y_dtype};
  if (level->wants_double) {
    qg_ref_normalize(a->m, a->k, a->x_dtype, a->x, a->gamma_dtype, a->gamma, a->eps, st->workspace);
    job.xd = st->workspace;
  } else {
    qg_cpu_xorder order;
    bool ordered = level->x_order != NULL;
    if (ordered) level->x_order(a->layout_id, &order);
    qg_cpu_normalize(a, ordered ? &order : NULL, st->workspace);
    job.xn = st->workspace;
  }
  qg_xfix_row *xrows = NULL;
  char *xws = NULL;
  if (kn->xfix) {
    xrows = (qg_xfix_row *)((char *)st->workspace + xn_bytes);
    xws = (char *)xrows + views;
    job.xq = xrows;
  }
  qg_cpu_rows_fn rows = kn->rows;
  const int group = kn->group_rows ? kn->group_rows : 1;
  int64_t n = a->n;
  /* Contiguous static split, the same as at upload (first touch). Output
   * rows are independent and each one's arithmetic is fixed (cpu.h), so the
   * split changes which thread computes a row, never its value. */
#pragma omp parallel num_threads(st->threads)
  {
    int t = thread_num(), nt = thread_count();
    qg_cpu_threads_enter(&st->placement, t);
    if (kn->xfix) { /* the activations in block fixed point: a function of each row alone */
      quantize_share(&job, a->k, g, kn->xfix, xws, xq_row, t, nt);
#pragma omp barrier
      for (int64_t r = t; r < a->m; r += nt)
        xrows[r] = qg_xfix_finish(job.xn + (size_t)r * (size_t)a->k, a->k, g, xws + (size_t)r * xq_row, kn->xfix);
#pragma omp barrier
    }
    int64_t r0, r1;
    thread_rows(n, group, t, nt, &r0, &r1);
    if (r1 > r0) rows(&job, r0, r1);
  }
  return QGEMV_OK;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* All threads sum their share of a buffer far larger than the caches; the
 * best of several passes, after one pass that faults the pages in. */
/* The portable streaming read: four independent XOR chains. */
static uint64_t portable_read_stream(const void *buf, size_t bytes) {
  const uint64_t *p = buf;
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (size_t i = 0; i < bytes / 8; i += 4) {
    a0 ^= p[i];
    a1 ^= p[i + 1];
    a2 ^= p[i + 2];
    a3 ^= p[i + 3];
  }
  return a0 ^ a1 ^ a2 ^ a3;
}

/* The best streaming reader the CPU has, whatever level the kernels were
 * forced to: the probe measures the machine, not the chosen level. */
static const qg_cpu_level *best_read_level(void) {
  for (int i = qg_cpu_level_count - 1; i >= 0; i--)
    if (qg_cpu_levels[i]->read_stream != NULL && qg_cpu_level_usable(qg_cpu_levels[i])) return qg_cpu_levels[i];
  return NULL;
}

/* Every thread reads its own contiguous share (first-touched by it, as
 * weight rows are at upload) with the widest loads; the best of 4 passes
 * of each reader the level has: one sequential stream, and (read_stream2)
 * two streams in lockstep. "% of read" must be against the best read the
 * machine delivers, and the kernels read 16 rows at once with software
 * prefetch: on the Zen 5 VM NF4 read 103% of the one-stream probe, and the
 * two-stream read is 2-5% faster than it in every rep (bench/NOTES-cpu.md
 * v39; prefetch added nothing to a plain read there). */
static qgemv_status cpu_read_bandwidth(void *state, size_t bytes, double *gbs) {
  cpu_state *st = state;
  const size_t unit = 256; /* what a read_stream step consumes */
  size_t units = bytes / unit; /* >= 16: the core refuses fewer than 4096 bytes */
  bytes = units * unit;
  unsigned char *buf;
  if (alloc_stream(bytes, (void **)&buf) != QGEMV_OK)
    return qg_cpu_fail(QGEMV_ERR_NO_MEMORY, "cannot allocate %zu bytes to measure bandwidth", bytes);
  const qg_cpu_level *level = best_read_level();
  uint64_t (*readers[2])(const void *, size_t) = {portable_read_stream, NULL};
  if (level != NULL) {
    readers[0] = level->read_stream;
    readers[1] = level->read_stream2;
  }
  const int nreaders = readers[1] != NULL ? 2 : 1, passes = 4 * nreaders;
  double best = 0.0;
  volatile uint64_t sink = 0;
  for (int pass = 0; pass <= passes; pass++) {
    uint64_t (*read_stream)(const void *, size_t) = readers[pass % nreaders]; /* alternating */
    double t0 = now_seconds();
    uint64_t total = 0;
#pragma omp parallel num_threads(st->threads) reduction(^ : total)
    {
      int t = thread_num(), nt = thread_count();
      qg_cpu_threads_enter(&st->placement, t);
      size_t u0 = units * (size_t)t / (size_t)nt, u1 = units * (size_t)(t + 1) / (size_t)nt;
      if (pass == 0)
        memset(buf + u0 * unit, (int)(t + 1), (u1 - u0) * unit); /* first touch by the reader */
      else
        total ^= read_stream(buf + u0 * unit, (u1 - u0) * unit);
    }
    double dt = now_seconds() - t0;
    sink ^= total;
    if (pass > 0 && (double)bytes / dt > best) best = (double)bytes / dt;
  }
  (void)sink;
  free(buf);
  *gbs = best / 1e9;
  return QGEMV_OK;
}

static const qg_backend cpu_backend = {
    .abi = QG_BACKEND_ABI,
    .name = "cpu",
    .error_detail = cpu_error_detail,
    .device_count = cpu_device_count,
    .build_info = cpu_build_info,
    .open = cpu_open,
    .close = cpu_close,
    .device_info = cpu_device_info,
    .set_stream = cpu_set_stream,
    .sync = cpu_sync,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_in = cpu_copy,
    .copy_out = cpu_copy,
    .weight_upload = cpu_weight_upload,
    .weight_free = cpu_weight_free,
    .weight_form = cpu_weight_form,
    .matvec = cpu_matvec,
    .read_bandwidth = cpu_read_bandwidth,
};

const qg_backend *qg_cpu_backend(void) { return &cpu_backend; }
