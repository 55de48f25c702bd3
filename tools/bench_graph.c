/* qgemv bench --graph: a sample's calls captured once in a CUDA graph and
 * replayed, as inference engines run a decode step. On a stream every
 * call pays the host's launch path (3-5 us a launch on the H200 machine,
 * bench/NOTES.md v23), which is the whole per-call time of the smallest
 * shapes; in a graph the launches are made once.
 *
 * The driver's graph calls come from libcuda.so.1 at run time (the tool
 * links no CUDA library and runs where there is none); the calls are
 * captured on a stream of the tool's own, made the context's stream with
 * qgemv_set_stream, in the CUDA runtime's primary context that the CUDA
 * backend uses. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct bench_graph {
  qgemv_ctx *ctx;
  void *pctx, *stream, *graph, *exec;
  int device;
  int (*init)(unsigned);
  int (*device_get)(int *, int);
  int (*retain)(void **, int);
  int (*release)(int);
  int (*push)(void *);
  int (*pop)(void **);
  int (*stream_create)(void **, unsigned);
  int (*stream_destroy)(void *);
  int (*begin)(void *, int);
  int (*end)(void *, void **);
  int (*instantiate)(void **, void *, unsigned long long);
  int (*launch)(void *, void *);
  int (*stream_sync)(void *);
  int (*exec_destroy)(void *);
  int (*graph_destroy)(void *);
};

static void *symbol(void *lib, const char *name, const char *alt) {
  void *f = dlsym(lib, name);
  return f || !alt ? f : dlsym(lib, alt);
}

/* The driver calls below run with the context current, and leave the
 * thread as they found it. */
static void enter(bench_graph *g) { g->push(g->pctx); }
static void leave(bench_graph *g) {
  void *popped;
  g->pop(&popped);
}

bench_graph *bench_graph_open(qgemv_ctx *ctx, char *err, size_t errsize) {
  if (strcmp(qgemv_ctx_backend(ctx), "cuda") != 0) {
    snprintf(err, errsize, "--graph needs the CUDA backend (this run's is %s): use --backend cuda",
             qgemv_ctx_backend(ctx));
    return NULL;
  }
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(err, errsize, "--graph: cannot load the CUDA driver (libcuda.so.1): %s", dlerror());
    return NULL;
  }
  bench_graph *g = calloc(1, sizeof *g);
  if (!g) return snprintf(err, errsize, "out of host memory"), NULL;
  g->init = symbol(lib, "cuInit", NULL);
  g->device_get = symbol(lib, "cuDeviceGet", NULL);
  g->retain = symbol(lib, "cuDevicePrimaryCtxRetain", NULL);
  g->release = symbol(lib, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
  g->push = symbol(lib, "cuCtxPushCurrent_v2", "cuCtxPushCurrent");
  g->pop = symbol(lib, "cuCtxPopCurrent_v2", "cuCtxPopCurrent");
  g->stream_create = symbol(lib, "cuStreamCreate", NULL);
  g->stream_destroy = symbol(lib, "cuStreamDestroy_v2", "cuStreamDestroy");
  g->begin = symbol(lib, "cuStreamBeginCapture_v2", "cuStreamBeginCapture");
  g->end = symbol(lib, "cuStreamEndCapture", NULL);
  g->instantiate = symbol(lib, "cuGraphInstantiateWithFlags", NULL);
  g->launch = symbol(lib, "cuGraphLaunch", NULL);
  g->stream_sync = symbol(lib, "cuStreamSynchronize", NULL);
  g->exec_destroy = symbol(lib, "cuGraphExecDestroy", NULL);
  g->graph_destroy = symbol(lib, "cuGraphDestroy", NULL);
  if (!(g->init && g->device_get && g->retain && g->release && g->push && g->pop && g->stream_create &&
        g->stream_destroy && g->begin && g->end && g->instantiate && g->launch && g->stream_sync && g->exec_destroy &&
        g->graph_destroy)) {
    snprintf(err, errsize, "--graph: this CUDA driver lacks the graph calls (CUDA 11.4 or newer is needed)");
    free(g);
    return NULL;
  }
  int rc = g->init(0);
  if (!rc) rc = g->device_get(&g->device, qgemv_ctx_device(ctx));
  if (!rc) rc = g->retain(&g->pctx, g->device);
  if (rc) {
    snprintf(err, errsize, "--graph: the CUDA driver refused device %d (error %d)", qgemv_ctx_device(ctx), rc);
    free(g);
    return NULL;
  }
  enter(g);
  rc = g->stream_create(&g->stream, 1 /* CU_STREAM_NON_BLOCKING */);
  leave(g);
  qgemv_status s = rc ? QGEMV_OK : qgemv_set_stream(ctx, g->stream);
  if (rc || s != QGEMV_OK) {
    snprintf(err, errsize, "--graph: %s", rc ? "cannot make a stream" : qgemv_last_error());
    if (!rc) enter(g), g->stream_destroy(g->stream), leave(g);
    g->release(g->device);
    free(g);
    return NULL;
  }
  g->ctx = ctx;
  return g;
}

void bench_graph_close(bench_graph *g) {
  if (!g) return;
  bench_graph_drop(g);
  qgemv_set_stream(g->ctx, NULL);
  enter(g);
  g->stream_destroy(g->stream);
  leave(g);
  g->release(g->device);
  free(g);
}

int bench_graph_capture(bench_graph *g, const bench_callee *c, int count, int *next) {
  bench_graph_drop(g);
  enter(g);
  int rc = g->begin(g->stream, 2 /* CU_STREAM_CAPTURE_MODE_RELAXED: the backend's own calls are its business */);
  leave(g);
  if (rc) return -1;
  int failed = 0;
  for (int i = 0; i < count && !failed; i++) {
    failed = c->call(c->arg, *next) != 0;
    *next = (*next + 1) % c->copies;
  }
  enter(g);
  rc = g->end(g->stream, &g->graph); /* ends the capture even after a failed call */
  if (!rc && !failed) rc = g->instantiate(&g->exec, g->graph, 0);
  leave(g);
  if (rc || failed) return bench_graph_drop(g), -1;
  return 0;
}

double bench_graph_replay(bench_graph *g) {
  double t0 = seconds_now();
  enter(g);
  int rc = g->launch(g->exec, g->stream);
  if (!rc) rc = g->stream_sync(g->stream);
  leave(g);
  return rc ? -1 : seconds_now() - t0;
}

void bench_graph_drop(bench_graph *g) {
  enter(g);
  if (g->exec) g->exec_destroy(g->exec);
  if (g->graph) g->graph_destroy(g->graph);
  leave(g);
  g->exec = g->graph = NULL;
}
