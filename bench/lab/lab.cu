/* The kernel lab: one executable, every variant of kernel.cuh, the read
 * probes, checks against the double reference and timings.
 *
 *   lab --probe [--probe-gb 4]                 read-bandwidth probes
 *   lab --fmt nf4|q2g64|q2g128 [--ceiling GBs] the sweep of one format on
 *       [--shapes NxK,...] [--quick]            the target shapes
 *   lab --only SPEC                             one variant, 3 launches (ncu)
 *   lab --plan SMS                              list the m = 1 sweep (no GPU)
 * Common: --out DIR (JSON; default $OUT or .), --summary FILE (the short
 * table, appended), --ncu-file FILE (the specs of the best and the worst
 * NF4 28672x8192 variants, for ncu).
 *
 * Method: weights rotated over >= 2.2 GB of copies (each launch of a CUDA
 * graph of >= 32 launches reads another copy); time per launch = median of
 * 10 graph replays / launches; % of read = (weight + x + y bytes) / time
 * over the best probe of the same run. Every FULL variant is checked on 257
 * sampled rows against the double reference (|y - ref| <= 1e-3 R (+2^-8
 * |ref| for bf16 y)), poisoned outputs must all be written, batched rows
 * must equal m = 1 rows bit for bit, and variants of the same k-split must
 * agree bit for bit. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "host_data.h"
#include "kernel.cuh"
#include "probe.h"
#include "registry.h"

namespace lab {

const char *fmt_name(int f) { return f == kNF4 ? "nf4" : f == kQ2G64 ? "q2g64" : "q2g128"; }
const char *xmode_name(int x) { return x == kDirect ? "direct" : x == kS1 ? "s1" : "s2"; }
const char *pipe_name(int p) { return p == kTMA ? "tma" : p == kCPA ? "cpa" : "reg"; }
const char *mode_name(int m) { return m == kLoads ? "loads" : m == kDecode ? "decode" : m == kMath ? "math" : "full"; }
std::string entry_name(const KernelEntry &e) {
  char b[128];
  snprintf(b, sizeof b, "%s/%s/ng%d/t%d/%s/%s/%s%s", fmt_name(e.fmt), xmode_name(e.xm), e.ng, e.t, pipe_name(e.pipe),
           e.bs ? "bsmem" : "bwarp", mode_name(e.mode), e.lut ? "/lut256" : "");
  return b;
}

namespace {

[[noreturn]] void die_cuda(cudaError_t e, const char *what, int line) {
  fprintf(stderr, "lab: CUDA error '%s' in %s (line %d); stopping this invocation\n", cudaGetErrorString(e), what,
          line);
  exit(3);
}
#define CK(x)                                   \
  do {                                          \
    cudaError_t e_ = (x);                       \
    if (e_ != cudaSuccess) die_cuda(e_, #x, __LINE__); \
  } while (0)

struct Geom {
  int G, KS, S;
  bool persist;
};

struct Shape {
  int64_t n, k;
};

struct LaunchInfo {
  bool ok = false;
  std::string why;
  int block = 0, grid = 0, occ = 0, regs = 0, local = 0, units = 0;
  size_t smem = 0, static_smem = 0;
};

struct Rec {
  std::string shape, fmt, kernel, geom, xdtype, pattern, group;
  int m = 1, mode = kFull;
  bool norm = false;
  double us = 0, us_min = 0, gbs = 0, pct = 0, bytes = 0;
  int checked = 0, pass = 0;
  double worst = 0;
  int64_t fails = 0, unwritten = 0;
  int batch_ident = -1, xv_ident = -1, timed_out = 0;
  LaunchInfo li;
};

struct Opts {
  std::string out = ".", summary, ncu_file, only;
  bool probe = false, quick = false;
  int plan_sms = 0; /* --plan SMS: list the m = 1 sweep, no GPU */
  double probe_gb = 4.0, ceiling = 0.0, rot_bytes = 2.2e9;
  int fmt = -1;
  std::vector<Shape> shapes;
};

std::string shape_str(const Shape &s) { return std::to_string(s.n) + "x" + std::to_string(s.k); }

struct Lab {
  Opts o;
  cudaDeviceProp prop;
  int sms = 0;
  std::vector<KernelEntry> ents;
  std::vector<Rec> recs;
  cudaStream_t st;
  cudaEvent_t e0, e1;
  unsigned *d_err = nullptr, *d_sink = nullptr;
  std::map<std::string, uint64_t> xv_hash; /* case + KS -> hash of y */

  /* per (shape, fmt) */
  Shape sh;
  int fmt = 0;
  Weight w;
  size_t wbytes = 0;
  std::vector<uint8_t *> copies;
  void *d_x = nullptr, *d_g = nullptr, *d_y = nullptr, *d_y1 = nullptr;

  /* current activations */
  Acts acts;
  bool norm = false;
  std::string case_key;

  void init() {
    CK(cudaGetDeviceProperties(&prop, 0));
    sms = prop.multiProcessorCount;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaMalloc(&d_err, 8));
    CK(cudaMalloc(&d_sink, 8));
    CK(cudaMemset(d_err, 0, 8));
    register_nf4(ents);
    register_q2g64(ents);
    register_q2g128(ents);
  }

  const KernelEntry *find(int f, int xm, int ng, int t, int pipe, int mode, int bs = 0, int lut = 0) const {
    for (const auto &e : ents)
      if (e.fmt == f && e.xm == xm && e.ng == ng && e.t == t && e.pipe == pipe && e.mode == mode && e.bs == bs &&
          e.lut == lut)
        return &e;
    return nullptr;
  }

  void load_weight(const Shape &s, int f, int ncopies_min) {
    free_weight();
    sh = s;
    fmt = f;
    w = make_weight(f, s.n, s.k, 42 + f * 7 + (uint64_t)s.n * 3 + (uint64_t)s.k);
    const std::vector<uint8_t> lay = repack(w);
    wbytes = lay.size();
    printf("== %s %s: resident %zu bytes, packed %zu (%.4fx)\n", shape_str(s).c_str(), fmt_name(f), wbytes,
           w.packed_bytes(), (double)wbytes / (double)w.packed_bytes());
    int c = (int)ceil(o.rot_bytes / (double)wbytes);
    c = std::max(c, ncopies_min);
    c = std::min(c, 512);
    for (int i = 0; i < c; ++i) {
      uint8_t *p = nullptr;
      CK(cudaMalloc(&p, wbytes));
      if (i == 0)
        CK(cudaMemcpy(p, lay.data(), wbytes, cudaMemcpyHostToDevice));
      else
        CK(cudaMemcpy(p, copies[0], wbytes, cudaMemcpyDeviceToDevice));
      copies.push_back(p);
    }
    CK(cudaMalloc(&d_x, (size_t)16 * s.k * 4));
    CK(cudaMalloc(&d_g, (size_t)s.k * 4));
    CK(cudaMalloc(&d_y, (size_t)16 * s.n * 4));
    CK(cudaMalloc(&d_y1, (size_t)s.n * 4));
    CK(cudaDeviceSynchronize());
  }
  void free_weight() {
    for (auto p : copies) cudaFree(p);
    copies.clear();
    cudaFree(d_x);
    cudaFree(d_g);
    cudaFree(d_y);
    cudaFree(d_y1);
    d_x = d_g = d_y = d_y1 = nullptr;
  }

  void set_acts(int64_t m, bool bf16, int pattern, bool with_norm) {
    acts = make_acts(m, sh.k, bf16, pattern, 1000 + pattern * 17 + (bf16 ? 5 : 0));
    norm = with_norm;
    CK(cudaMemcpy(d_x, acts.xbits.data(), acts.xbits.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_g, acts.gbits.data(), acts.gbits.size(), cudaMemcpyHostToDevice));
    case_key = shape_str(sh) + fmt_name(fmt) + (bf16 ? "bf16" : "f32") + std::to_string(pattern) +
               (with_norm ? "norm" : "");
  }

  LaunchInfo prepare(const KernelEntry &e, const Geom &g, int m) {
    LaunchInfo li;
    const int W = g.G * g.KS, nch = (int)(sh.k / fmt_kc(e.fmt)), tiles = (int)(sh.n / 16);
    if (W < 1 || W > 16) return li.why = "warps per CTA", li;
    if (g.KS > nch) return li.why = "KS > chunks", li;
    if (tiles % e.t) return li.why = "tiles % T", li;
    const int S = e.pipe == kREG ? 1 : g.S;
    li.smem = (size_t)smem_plan(e.fmt, e.pipe, e.lut, e.bs && e.mode == kFull, W, S, e.t, e.ng, sh.k,
                                m * xmode_splits(e.xm), g.KS)
                  .total;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, e.fn));
    li.regs = fa.numRegs;
    li.local = (int)fa.localSizeBytes;
    li.static_smem = fa.sharedSizeBytes;
    if (li.smem + li.static_smem > prop.sharedMemPerBlockOptin) return li.why = "shared memory", li;
    CK(cudaFuncSetAttribute(e.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)li.smem));
    li.block = 32 * W;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&li.occ, e.fn, li.block, li.smem));
    if (li.occ == 0) return li.why = "occupancy 0", li;
    li.units = (tiles / e.t + g.G - 1) / g.G;
    li.grid = g.persist ? std::min(li.units, li.occ * sms) : li.units;
    li.ok = true;
    return li;
  }

  KParams params(const KernelEntry &e, const Geom &g, const LaunchInfo &li, int m, const void *x, void *y,
                 const uint8_t *wp) const {
    KParams p;
    p.w = wp;
    p.n = sh.n;
    p.k = sh.k;
    p.nch = (int)(sh.k / fmt_kc(e.fmt));
    p.rowgroups = (int)(sh.n / 16 / e.t);
    p.units = li.units;
    p.G = g.G;
    p.KS = g.KS;
    p.S = e.pipe == kREG ? 1 : g.S;
    p.x = x;
    p.gamma = norm ? d_g : nullptr;
    p.y = y;
    p.m = m;
    p.ncols = m * xmode_splits(e.xm);
    p.x_bf16 = acts.bf16;
    p.g_bf16 = acts.bf16;
    p.y_bf16 = acts.bf16;
    p.eps = 1e-5f;
    p.inv_k = 1.0f / (float)sh.k;
    p.err = d_err;
    p.sink = d_sink;
    return p;
  }

  void launch(const KernelEntry &e, const LaunchInfo &li, KParams p) {
    void *args[] = {&p};
    CK(cudaLaunchKernel(e.fn, dim3(li.grid), dim3(li.block), args, li.smem, st));
  }

  bool timed_out() {
    unsigned h = 0;
    CK(cudaMemcpy(&h, d_err, 4, cudaMemcpyDeviceToHost));
    if (h) CK(cudaMemset(d_err, 0, 4));
    return h != 0;
  }

  /* One record: check (FULL), bit-identity (batched), time. */
  Rec run(const std::string &group, const KernelEntry &e, const Geom &g, int m, const Ref *ref, bool do_time,
          bool do_ident, const std::string &pattern) {
    Rec r;
    r.group = group;
    r.shape = shape_str(sh);
    r.fmt = fmt_name(e.fmt);
    r.kernel = entry_name(e);
    char gb[96];
    snprintf(gb, sizeof gb, "G%d KS%d S%d %s", g.G, g.KS, e.pipe == kREG ? 0 : g.S, g.persist ? "persist" : "grid");
    r.geom = gb;
    r.xdtype = acts.bf16 ? "bf16" : "f32";
    r.pattern = pattern;
    r.m = m;
    r.mode = e.mode;
    r.norm = norm;
    r.li = prepare(e, g, m);
    if (!r.li.ok) return r;
    const size_t xs = acts.bf16 ? 2 : 4, ys = xs;
    r.bytes = (double)wbytes + (e.mode == kFull || e.mode == kMath ? (double)m * sh.k * xs + (double)m * sh.n * ys +
                                                                         (norm ? (double)sh.k * xs : 0.0)
                                                                   : 0.0);
    if (e.mode == kFull && ref) {
      CK(cudaMemsetAsync(d_y, 0xff, (size_t)m * sh.n * ys, st));
      launch(e, r.li, params(e, g, r.li, m, d_x, d_y, copies[0]));
      CK(cudaStreamSynchronize(st));
      r.timed_out = timed_out();
      std::vector<uint8_t> y((size_t)m * sh.n * ys);
      CK(cudaMemcpy(y.data(), d_y, y.size(), cudaMemcpyDeviceToHost));
      const Check c = check(*ref, y.data(), m, sh.n, acts.bf16);
      r.checked = 1;
      r.pass = c.pass && !r.timed_out;
      r.worst = c.worst;
      r.fails = c.fails;
      r.unwritten = c.unwritten;
      const std::string key = case_key + "m" + std::to_string(m) + "KS" + std::to_string(g.KS);
      const uint64_t h = fnv1a(y.data(), y.size());
      auto it = xv_hash.find(key);
      if (it == xv_hash.end())
        xv_hash[key] = h;
      else
        r.xv_ident = it->second == h;
      if (do_ident && m > 1) {
        r.batch_ident = 1;
        for (int a = 0; a < m; ++a) {
          CK(cudaMemsetAsync(d_y1, 0xff, (size_t)sh.n * ys, st));
          launch(e, r.li, params(e, g, r.li, 1, static_cast<const char *>(d_x) + (size_t)a * sh.k * xs, d_y1,
                                 copies[0]));
          CK(cudaStreamSynchronize(st)); /* st does not synchronize with the legacy stream's copy */
          std::vector<uint8_t> y1((size_t)sh.n * ys);
          CK(cudaMemcpy(y1.data(), d_y1, y1.size(), cudaMemcpyDeviceToHost));
          if (memcmp(y1.data(), y.data() + (size_t)a * sh.n * ys, y1.size()) != 0) r.batch_ident = 0;
        }
      }
    }
    if (do_time) {
      const int C = (int)copies.size(), NL = std::max(32, C);
      cudaGraph_t graph;
      cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < NL; ++i) launch(e, r.li, params(e, g, r.li, m, d_x, d_y, copies[i % C]));
      CK(cudaStreamEndCapture(st, &graph));
      CK(cudaGraphInstantiate(&ge, graph, 0));
      for (int i = 0; i < 2; ++i) CK(cudaGraphLaunch(ge, st));
      std::vector<float> ms;
      for (int i = 0; i < 10; ++i) {
        CK(cudaEventRecord(e0, st));
        CK(cudaGraphLaunch(ge, st));
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
      }
      CK(cudaGraphExecDestroy(ge));
      CK(cudaGraphDestroy(graph));
      std::sort(ms.begin(), ms.end());
      r.us = 0.5 * (ms[4] + ms[5]) * 1e3 / NL;
      r.us_min = ms[0] * 1e3 / NL;
      r.gbs = r.bytes / (r.us * 1e-6) / 1e9;
      r.pct = o.ceiling > 0 ? 100.0 * r.gbs / o.ceiling : 0.0;
      if (timed_out()) r.timed_out = 1, r.pass = 0;
    }
    recs.push_back(r);
    print_rec(r);
    return r;
  }

  void print_rec(const Rec &r) const {
    printf("%-11s %-26s %-22s %-4s m%-2d %s%s%s %8.2f us %7.0f GB/s %5.1f%%  %s  r%d l%d occ%d grid%d%s%s%s\n",
           r.shape.c_str(), r.kernel.c_str(), r.geom.c_str(), r.xdtype.c_str(), r.m, r.pattern.c_str(),
           r.norm ? " norm" : "", r.checked ? (r.pass ? " ok" : " FAIL") : "", r.us, r.gbs, r.pct,
           r.checked ? (std::string("worst ") + std::to_string(r.worst)).c_str() : "", r.li.regs, r.li.local,
           r.li.occ, r.li.grid, r.batch_ident == 0 ? " BATCH-DIFF" : r.batch_ident == 1 ? " batch=m1" : "",
           r.xv_ident == 0 ? " XV-DIFF" : "", r.timed_out ? " TIMEOUT" : "");
    fflush(stdout);
  }

  /* The m = 1 sweep candidates of (fmt, xm) on the current shape: every
   * FULL one-group entry x KS in {ksa, 2 ksa} (ksa: the fewest slices that
   * give >= 8 warps of work per SM) x W in {8, 16} warps x S; persistent
   * grids. Candidates that do not fit the device are skipped by run(). */
  std::vector<std::pair<const KernelEntry *, Geom>> candidates(int xm) {
    std::vector<std::pair<const KernelEntry *, Geom>> c;
    const int tiles = (int)(sh.n / 16), nch = (int)(sh.k / fmt_kc(fmt));
    for (const auto &e : ents) {
      if (e.fmt != fmt || e.xm != xm || e.ng != 1 || e.mode != kFull) continue;
      if (tiles % e.t) continue;
      const int rgs = tiles / e.t;
      int ksa = 1;
      while (ksa < 16 && ksa * 2 <= nch && (int64_t)rgs * ksa < 8 * sms) ksa *= 2;
      for (int ks : {ksa, 2 * ksa}) {
        if (ks > 16 || ks > nch) continue;
        for (int W : {8, 16}) {
          if (W < ks) continue;
          std::vector<int> Ss;
          if (e.pipe == kTMA) Ss = {2, 4};
          if (e.pipe == kCPA) Ss = {3};
          if (e.pipe == kREG) Ss = {1};
          if (o.quick) Ss.resize(1);
          for (int S : Ss) c.push_back({&e, Geom{W / ks, ks, S, true}});
        }
      }
    }
    return c;
  }

  /* LOADS-only geometry sweep: which ring geometry reads the weights at
   * the probe's rate (no decode, no math, same bytes and pattern). */
  void loads_sweep(int xm) {
    const int tiles = (int)(sh.n / 16), nch = (int)(sh.k / fmt_kc(fmt));
    for (const auto &e : ents) {
      if (e.fmt != fmt || e.xm != xm || e.mode != kLoads) continue;
      for (int ks : {1, 2, 4, 8, 16}) {
        if (ks > nch || (int64_t)(tiles / e.t) * ks < 2 * sms) continue;
        for (int W : {4, 8, 16}) {
          if (W < ks) continue;
          for (int S : {2, 3, 4, 6, 8}) {
            if (e.pipe == kREG && S != 2) continue;
            if (e.pipe == kCPA && S > 6) continue;
            run("loads", e, Geom{W / ks, ks, S, true}, 1, nullptr, true, false, "normal");
          }
        }
      }
    }
  }

  /* Batched (and subtractive) geometry from an m = 1 winner: same rows per
   * CTA unit, same KS, same S. */
  Geom translate(const Geom &g, int t_from, int t_to) const {
    Geom r = g;
    r.G = std::max(1, g.G * t_from / t_to);
    while (r.G * r.KS > 16 && r.G > 1) r.G /= 2;
    return r;
  }

  void sweep_format();
  void only(const std::string &spec);
  void write_json(const std::string &path, const std::vector<ProbeResult> *probes) const;
  void summary(FILE *f) const;
  void ncu_targets() const;
};

__global__ void empty_kernel() {}

/* The floor under every time: an empty kernel of 132 x 8 blocks of 256
 * threads, as a graph of 256 launches (launch gap + ramp, no work). */
double empty_launch_us(cudaStream_t st, cudaEvent_t e0, cudaEvent_t e1, int sms) {
  cudaGraph_t graph;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 256; ++i) empty_kernel<<<sms * 8, 256, 0, st>>>();
  CK(cudaStreamEndCapture(st, &graph));
  CK(cudaGraphInstantiate(&ge, graph, 0));
  std::vector<float> ms;
  for (int i = 0; i < 12; ++i) {
    CK(cudaEventRecord(e0, st));
    CK(cudaGraphLaunch(ge, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    if (i >= 2) ms.push_back(t);
  }
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(graph));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e3 / 256;
}

int ng_for(int xm, int m) { return (m * xmode_splits(xm) + 7) / 8; }

void Lab::sweep_format() {
  std::vector<Shape> shapes = o.shapes;
  if (shapes.empty()) shapes = {{28672, 8192}, {8192, 28672}, {14336, 4096}, {4096, 14336}, {4096, 4096}};
  for (const Shape &s : shapes) {
    printf("== %s %s: generating\n", shape_str(s).c_str(), fmt_name(o.fmt));
    fflush(stdout);
    load_weight(s, o.fmt, 2);
    const std::vector<int64_t> rows = sample_rows(s.n, 256);
    const KernelEntry *s2e = nullptr; /* the f32 (two-term) winner, for the norm rows */
    Geom s2g{};
    for (int bf : {0, 1}) {
      const int xm = bf ? (fmt == kNF4 ? kS1 : kDirect) : kS2, main_xm = fmt == kNF4 ? kS2 : kDirect;
      set_acts(16, bf, kNormal, false);
      const Ref ref = reference(w, acts, 16, false, 1e-5f, rows);
      /* m = 1 sweep */
      const KernelEntry *be = nullptr;
      Geom bg{};
      double best_us = 0;
      for (auto &c : candidates(xm)) {
        const Rec r = run("sweep", *c.first, c.second, 1, &ref, true, false, "normal");
        if (r.li.ok && r.pass && (be == nullptr || r.us < best_us)) best_us = r.us, be = c.first, bg = c.second;
      }
      if (!be) {
        printf("== %s %s %s: no passing variant\n", shape_str(s).c_str(), fmt_name(fmt), bf ? "bf16" : "f32");
        continue;
      }
      if (!bf) s2e = be, s2g = bg;
      /* the same winner on a plain grid (no persistent loop) */
      run("grid", *be, Geom{bg.G, bg.KS, bg.S, false}, 1, &ref, true, false, "normal");
      /* batched: the winner's KS (so the same bits); B per CTA where it
       * fits, else per warp; T = 1, 2 */
      for (int m : {8, 16})
        for (int t : {1, 2})
          for (int bs : {1, 0}) {
            const KernelEntry *e = find(fmt, xm, ng_for(xm, m), t, kTMA, kFull, bs, bs ? be->lut : 0);
            if (e) run("batched", *e, translate(bg, be->t, t), m, &ref, true, true, "normal");
          }
      /* subtractive, main activation mode: loads / +decode / +math / full
       * at the winner's KS, T = 2, B staged per CTA */
      if (xm == main_xm) {
        const Geom g = translate(bg, be->t, 2);
        for (const auto &e : ents)
          if (e.fmt == fmt && e.xm == xm && e.t == 2 && e.ng == 1 &&
              ((e.mode == kLoads) || ((e.mode == kDecode || e.mode == kMath) && e.bs)))
            run("sub", e, g, 1, nullptr, true, false, "normal");
        const KernelEntry *f2 = find(fmt, xm, 1, 2, kTMA, kFull, 1, 0);
        if (f2) run("sub", *f2, g, 1, &ref, true, false, "normal");
        const KernelEntry *f3 = find(fmt, xm, 1, 2, kTMA, kFull, 1, 1);
        if (f3) run("sub", *f3, g, 1, &ref, true, false, "normal");
        if (s.n == 28672 || (s.n == 4096 && s.k == 4096)) loads_sweep(xm);
      }
      /* adversarial activations: check only */
      for (int pat : {kAdversarial, kExtreme}) {
        set_acts(1, bf, pat, false);
        const Ref ra = reference(w, acts, 1, false, 1e-5f, rows);
        run("adv", *be, bg, 1, &ra, false, false, pat == kAdversarial ? "adversarial" : "extreme");
      }
      /* fused RMSNorm at 28672x8192: the two-term kernel of the f32 winner */
      if (s.n == 28672 && s.k == 8192 && s2e) {
        set_acts(16, bf, kNormal, true);
        const Ref rn = reference(w, acts, 8, true, 1e-5f, rows);
        run("norm", *s2e, s2g, 1, &rn, true, false, "normal");
        const KernelEntry *e8 = find(fmt, kS2, ng_for(kS2, 8), std::min(s2e->t, 2), kTMA, kFull, 0, 0);
        if (e8 && !bf) run("norm", *e8, translate(s2g, s2e->t, e8->t), 8, &rn, true, true, "normal");
      }
    }
    free_weight();
  }
}

void Lab::only(const std::string &spec) {
  int f = 0, xm = 0, ng = 1, t = 1, pipe = 0, mode = kFull, m = 1, xbf = 0, nrm = 0, bs = 0, lut = 0;
  Geom g{1, 1, 2, true};
  long long n = 0, k = 0;
  for (size_t pos = 0; pos < spec.size();) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string kv = spec.substr(pos, end - pos);
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    const long long v = atoll(kv.c_str() + eq + 1);
    if (key == "fmt") f = (int)v;
    if (key == "xm") xm = (int)v;
    if (key == "ng") ng = (int)v;
    if (key == "t") t = (int)v;
    if (key == "pipe") pipe = (int)v;
    if (key == "mode") mode = (int)v;
    if (key == "n") n = v;
    if (key == "k") k = v;
    if (key == "m") m = (int)v;
    if (key == "G") g.G = (int)v;
    if (key == "KS") g.KS = (int)v;
    if (key == "S") g.S = (int)v;
    if (key == "persist") g.persist = v != 0;
    if (key == "xbf16") xbf = (int)v;
    if (key == "norm") nrm = (int)v;
    if (key == "bs") bs = (int)v;
    if (key == "lut") lut = (int)v;
    pos = end + 1;
  }
  const KernelEntry *e = find(f, xm, ng, t, pipe, mode, bs, lut);
  if (!e) {
    fprintf(stderr, "lab: no such kernel in '%s'\n", spec.c_str());
    exit(2);
  }
  o.rot_bytes = 0;
  load_weight({n, k}, f, 1);
  set_acts(16, xbf != 0, kNormal, nrm != 0);
  const LaunchInfo li = prepare(*e, g, m);
  if (!li.ok) {
    fprintf(stderr, "lab: %s does not launch: %s\n", spec.c_str(), li.why.c_str());
    exit(2);
  }
  for (int i = 0; i < 3; ++i) {
    CK(cudaEventRecord(e0, st));
    launch(*e, li, params(*e, g, li, m, d_x, d_y, copies[0]));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("%s %s launch %d: %.2f us (single launch, cold L2 only under ncu)\n", entry_name(*e).c_str(), spec.c_str(), i,
           ms * 1e3);
  }
}

void json_str(FILE *f, const std::string &s) {
  fputc('"', f);
  for (char c : s) {
    if (c == '"' || c == '\\') fputc('\\', f);
    fputc(c, f);
  }
  fputc('"', f);
}

void Lab::write_json(const std::string &path, const std::vector<ProbeResult> *probes) const {
  FILE *f = fopen(path.c_str(), "w");
  if (!f) {
    fprintf(stderr, "lab: cannot write %s\n", path.c_str());
    return;
  }
  fprintf(f, "{\n  \"device\": ");
  json_str(f, prop.name);
  fprintf(f, ",\n  \"sms\": %d,\n  \"l2_bytes\": %d,\n  \"ceiling_gbs\": %.1f,\n", sms, prop.l2CacheSize, o.ceiling);
  fprintf(f, "  \"rotated_bytes_min\": %.0f,\n", o.rot_bytes);
  if (probes) {
    fprintf(f, "  \"probes\": [\n");
    for (size_t i = 0; i < probes->size(); ++i) {
      const ProbeResult &p = (*probes)[i];
      fprintf(f, "    {\"name\": ");
      json_str(f, p.name);
      fprintf(f, ", \"warps_per_sm\": %d, \"threads\": %d, \"grid\": %zu, \"smem\": %zu, \"gbs_best\": %.1f, "
                 "\"gbs_median\": %.1f, \"error\": ",
              p.warps_per_sm, p.threads, p.grid, p.smem, p.gbs_best, p.gbs_median);
      json_str(f, p.error);
      fprintf(f, "}%s\n", i + 1 < probes->size() ? "," : "");
    }
    fprintf(f, "  ],\n");
  }
  fprintf(f, "  \"records\": [\n");
  for (size_t i = 0; i < recs.size(); ++i) {
    const Rec &r = recs[i];
    fprintf(f, "    {\"group\": ");
    json_str(f, r.group);
    fprintf(f, ", \"shape\": ");
    json_str(f, r.shape);
    fprintf(f, ", \"fmt\": ");
    json_str(f, r.fmt);
    fprintf(f, ", \"kernel\": ");
    json_str(f, r.kernel);
    fprintf(f, ", \"geom\": ");
    json_str(f, r.geom);
    fprintf(f, ", \"x\": ");
    json_str(f, r.xdtype);
    fprintf(f, ", \"pattern\": ");
    json_str(f, r.pattern);
    fprintf(f,
            ", \"m\": %d, \"norm\": %d, \"mode\": \"%s\", \"us\": %.3f, \"us_min\": %.3f, \"bytes\": %.0f, \"gbs\": "
            "%.1f, \"pct_read\": %.2f, \"checked\": %d, \"pass\": %d, \"worst_of_tol\": %.4g, \"fails\": %lld, "
            "\"unwritten\": %lld, \"batch_ident\": %d, \"xv_ident\": %d, \"timed_out\": %d, \"launch\": {\"ok\": %d, "
            "\"why\": ",
            r.m, r.norm, mode_name(r.mode), r.us, r.us_min, r.bytes, r.gbs, r.pct, r.checked, r.pass,
            std::isinf(r.worst) ? 1e30 : r.worst, (long long)r.fails, (long long)r.unwritten, r.batch_ident,
            r.xv_ident, r.timed_out, r.li.ok);
    json_str(f, r.li.why);
    fprintf(f, ", \"grid\": %d, \"block\": %d, \"occ\": %d, \"regs\": %d, \"local\": %d, \"smem\": %zu, "
               "\"static_smem\": %zu, \"units\": %d}}%s\n",
            r.li.grid, r.li.block, r.li.occ, r.li.regs, r.li.local, r.li.smem, r.li.static_smem, r.li.units,
            i + 1 < recs.size() ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
}

/* The short table: per shape and activation dtype, the fastest passing
 * m = 1 variant, the batched ratios, the checks; then the subtractive rows. */
void Lab::summary(FILE *f) const {
  std::vector<std::string> keys;
  for (const Rec &r : recs) {
    const std::string k = r.shape + " " + r.fmt + " " + r.xdtype;
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  for (const std::string &k : keys) {
    const Rec *b1 = nullptr, *b8 = nullptr, *b16 = nullptr, *nm1 = nullptr;
    int checks = 0, fails = 0, ident_bad = 0, xv_bad = 0, adv_ok = -1, ext_ok = -1;
    for (const Rec &r : recs) {
      if (r.shape + " " + r.fmt + " " + r.xdtype != k || !r.li.ok) continue;
      if (r.checked) checks++, fails += !r.pass;
      if (r.batch_ident == 0) ident_bad++;
      if (r.xv_ident == 0) xv_bad++;
      if (r.pattern == "adversarial") adv_ok = r.pass;
      if (r.pattern == "extreme") ext_ok = r.pass;
      if (r.mode != kFull || r.pattern != "normal" || !r.pass || r.us <= 0 || r.group == "sub" || r.group == "loads")
        continue;
      const Rec **slot = r.norm ? (r.m == 1 ? &nm1 : nullptr) : r.m == 1 ? &b1 : r.m == 8 ? &b8 : &b16;
      if (slot && (!*slot || r.us < (*slot)->us)) *slot = &r;
    }
    if (!b1) {
      fprintf(f, "%-24s no passing m=1 variant\n", k.c_str());
      continue;
    }
    fprintf(f, "%-24s %7.2f us %5.0f GB/s %5.1f%%  %-32s %-18s m8 %s m16 %s", k.c_str(), b1->us, b1->gbs, b1->pct,
            b1->kernel.substr(b1->kernel.find('/') + 1).c_str(), b1->geom.c_str(),
            b8 ? (std::to_string(b8->us / b1->us).substr(0, 4) + "x").c_str() : "-",
            b16 ? (std::to_string(b16->us / b1->us).substr(0, 4) + "x").c_str() : "-");
    if (nm1) fprintf(f, " norm %.3fx", nm1->us / b1->us);
    fprintf(f, "  checks %d/%d%s%s adv %s ext %s\n", checks - fails, checks, ident_bad ? " BATCH-DIFF" : "",
            xv_bad ? " XV-DIFF" : "", adv_ok < 0 ? "-" : adv_ok ? "ok" : "FAIL", ext_ok < 0 ? "-" : ext_ok ? "ok" : "FAIL");
  }
  for (const Rec &r : recs)
    if (r.group == "sub" && r.shape == "28672x8192" && r.li.ok)
      fprintf(f, "  sub %-11s %-40s %-20s %7.2f us %5.1f%%\n", r.shape.c_str(), r.kernel.c_str(), r.geom.c_str(),
              r.us, r.pct);
  for (const char *shp : {"28672x8192", "4096x4096"}) {
    const Rec *bl = nullptr;
    for (const Rec &r : recs)
      if (r.group == "loads" && r.shape == shp && r.li.ok && (!bl || r.us < bl->us)) bl = &r;
    if (bl)
      fprintf(f, "  best loads-only %-11s %-40s %-20s %7.2f us %5.1f%%\n", bl->shape.c_str(), bl->kernel.c_str(),
              bl->geom.c_str(), bl->us, bl->pct);
  }
}

void Lab::ncu_targets() const {
  if (o.ncu_file.empty()) return;
  /* the best and the worst passing m = 1 variant of the main activation
   * dtype at 28672x8192 (NF4: f32 x; Q2_0: bf16 x) */
  const Rec *best = nullptr, *worst = nullptr;
  for (const Rec &r : recs) {
    if (r.shape != "28672x8192" || r.m != 1 || r.mode != kFull || !r.pass || r.norm || r.pattern != "normal") continue;
    if (r.xdtype != (fmt == kNF4 ? "f32" : "bf16") || r.group != "sweep") continue;
    if (!best || r.us < best->us) best = &r;
    if (!worst || r.us > worst->us) worst = &r;
  }
  FILE *f = fopen(o.ncu_file.c_str(), "a");
  if (!f || !best) {
    if (f) fclose(f);
    return;
  }
  for (const Rec *r : {best, worst}) {
    const KernelEntry *e = nullptr;
    for (const auto &x : ents)
      if (entry_name(x) == r->kernel) e = &x;
    int G, KS, S;
    char pers[16];
    sscanf(r->geom.c_str(), "G%d KS%d S%d %15s", &G, &KS, &S, pers);
    if (!e) continue;
    fprintf(f,
            "%s-%s fmt=%d,xm=%d,ng=%d,t=%d,pipe=%d,mode=3,bs=%d,lut=%d,n=28672,k=8192,m=1,G=%d,KS=%d,S=%d,persist=%d,"
            "xbf16=%d\n",
            fmt_name(fmt), r == best ? "best" : "worst", e->fmt, e->xm, e->ng, e->t, e->pipe, e->bs, e->lut, G, KS,
            S > 0 ? S : 1, !strcmp(pers, "persist"), r->xdtype == "bf16");
  }
  fclose(f);
}

}  // namespace
}  // namespace lab

int main(int argc, char **argv) {
  using namespace lab;
  Lab L;
  if (getenv("OUT")) L.o.out = getenv("OUT");
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "lab: %s needs a value\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--probe") L.o.probe = true;
    else if (a == "--probe-gb") L.o.probe_gb = atof(next().c_str());
    else if (a == "--fmt") {
      const std::string v = next();
      L.o.fmt = v == "nf4" ? kNF4 : v == "q2g64" ? kQ2G64 : v == "q2g128" ? kQ2G128 : -1;
    } else if (a == "--ceiling") L.o.ceiling = atof(next().c_str());
    else if (a == "--shapes") {
      const std::string v = next();
      for (size_t p = 0; p < v.size();) {
        size_t e = v.find(',', p);
        if (e == std::string::npos) e = v.size();
        long long n = 0, k = 0;
        sscanf(v.substr(p, e - p).c_str(), "%lldx%lld", &n, &k);
        L.o.shapes.push_back({n, k});
        p = e + 1;
      }
    } else if (a == "--quick") L.o.quick = true;
    else if (a == "--out") L.o.out = next();
    else if (a == "--summary") L.o.summary = next();
    else if (a == "--ncu-file") L.o.ncu_file = next();
    else if (a == "--only") L.o.only = next();
    else if (a == "--rot-gb") L.o.rot_bytes = atof(next().c_str()) * 1e9;
    else if (a == "--plan") L.o.plan_sms = atoi(next().c_str());
    else {
      fprintf(stderr, "lab: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (L.o.plan_sms > 0) {
    L.sms = L.o.plan_sms;
    register_nf4(L.ents);
    register_q2g64(L.ents);
    register_q2g128(L.ents);
    const std::vector<Shape> shapes = {{28672, 8192}, {8192, 28672}, {14336, 4096}, {4096, 14336}, {4096, 4096}};
    int total = 0;
    for (int f : {kNF4, kQ2G64, kQ2G128})
      for (const Shape &s : shapes)
        for (int xm : {kS2, f == kNF4 ? kS1 : kDirect}) {
          L.sh = s;
          L.fmt = f;
          const auto c = L.candidates(xm);
          total += (int)c.size();
          printf("%s %s %s: %zu candidates:", shape_str(s).c_str(), fmt_name(f), xmode_name(xm), c.size());
          for (auto &e : c)
            printf(" [t%d %s G%d KS%d S%d]", e.first->t, pipe_name(e.first->pipe), e.second.G, e.second.KS, e.second.S);
          printf("\n");
        }
    printf("total m=1 sweep records: %d\n", total);
    return 0;
  }
  L.init();
  printf("lab: %s, %d SMs, L2 %d MB, smem/SM %zu, opt-in/block %zu\n", L.prop.name, L.sms, L.prop.l2CacheSize >> 20,
         L.prop.sharedMemPerMultiprocessor, L.prop.sharedMemPerBlockOptin);
  if (!L.o.only.empty()) {
    L.only(L.o.only);
    return 0;
  }
  if (L.o.probe) {
    const std::vector<ProbeResult> pr = run_probes(L.prop, (size_t)(L.o.probe_gb * 1e9) / 4096 * 4096);
    double best = 0;
    std::string bn;
    for (const auto &p : pr) {
      printf("probe %-40s w/SM %2d  best %7.1f GB/s  median %7.1f%s%s\n", p.name.c_str(), p.warps_per_sm, p.gbs_best,
             p.gbs_median, p.error.empty() ? "" : "  ", p.error.c_str());
      if (p.gbs_best > best) best = p.gbs_best, bn = p.name;
    }
    L.o.ceiling = best;
    const double empty = empty_launch_us(L.st, L.e0, L.e1, L.sms);
    printf("EMPTY %.2f us per launch in a graph (132x8 blocks of 256 threads, no work)\n", empty);
    printf("CEILING %.1f %s\n", best, bn.c_str());
    L.write_json(L.o.out + "/probe.json", &pr);
    if (!L.o.summary.empty()) {
      FILE *f = fopen(L.o.summary.c_str(), "a");
      if (f) {
        double backend = 0;
        for (const auto &p : pr)
          if (p.name.rfind("backend", 0) == 0) backend = p.gbs_best;
        fprintf(f, "read ceiling %.0f GB/s (%s); backend's probe %.0f GB/s (%.1f%% of it); empty kernel %.2f us/launch\n",
                best, bn.c_str(), backend, 100.0 * backend / best, empty);
        fclose(f);
      }
    }
    return 0;
  }
  if (L.o.fmt < 0) {
    fprintf(stderr, "lab: give --probe, --fmt nf4|q2g64|q2g128 or --only SPEC\n");
    return 2;
  }
  L.sweep_format();
  L.write_json(L.o.out + "/" + fmt_name(L.o.fmt) + ".json", nullptr);
  L.ncu_targets();
  if (!L.o.summary.empty()) {
    FILE *f = fopen(L.o.summary.c_str(), "a");
    if (f) {
      L.summary(f);
      fclose(f);
    }
  }
  L.summary(stdout);
  return 0;
}
