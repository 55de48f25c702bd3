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
 * must equal m = 1 rows bit for bit, and variants of the same k-split,
 * activation mode and table must agree bit for bit. Launches may carry the
 * PDL attribute (Geom::pdl); chains of 8 launches whose x is the previous
 * y must equal the plain chain bit for bit; correlated inputs (one code per
 * row, all-positive x, k up to 65536) check the contract (round 2). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "host_data.h"
#include "kernel.cuh"
#include "probe.h"
#include "registry.h"

namespace lab {

const char *fmt_name(int f) { return f == kNF4 ? "nf4" : f == kQ2G64 ? "q2g64" : "q2g128"; }
const char *xmode_name(int x) { return x == kDirect ? "direct" : x == kS1 ? "s1" : x == kS2 ? "s2" : "b3"; }
const char *pipe_name(int p) { return p == kTMA ? "tma" : p == kCPA ? "cpa" : "reg"; }
const char *mode_name(int m) { return m == kLoads ? "loads" : m == kDecode ? "decode" : m == kMath ? "math" : "full"; }
std::string entry_name(const KernelEntry &e) {
  char b[128];
  snprintf(b, sizeof b, "%s/%s/ng%d/t%d/%s/%s/%s%s%s", fmt_name(e.fmt), xmode_name(e.xm), e.ng, e.t, pipe_name(e.pipe),
           e.bs ? "bsmem" : "bwarp", mode_name(e.mode), e.lut == 1 ? "/lut256" : e.lut == 2 ? "/lut2" : "",
           e.lb == 1 ? "/r80" : e.lb == 2 ? "/r64" : "");
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
  int phases = 1;         /* staged B in R phases (BS = 1) */
  int flags = kEarlyRing; /* kernel.cuh Flags */
  bool pdl = false;       /* launched with programmatic stream serialization */
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

std::string geom_str(const KernelEntry &e, const Geom &g) {
  char gb[128];
  snprintf(gb, sizeof gb, "G%d KS%d S%d %s%s%s%s", g.G, g.KS, e.pipe == kREG ? 0 : g.S, g.persist ? "persist" : "grid",
           g.phases > 1 ? (" R" + std::to_string(g.phases)).c_str() : "", g.flags & kEarlyRing ? " early" : g.flags & kEarlyOne ? " early1" : "",
           g.pdl ? " pdl" : "");
  return gb;
}

struct Rec {
  std::string shape, fmt, kernel, geom, xdtype, pattern, group;
  int m = 1, mode = kFull;
  bool norm = false;
  double us = 0, us_min = 0, gbs = 0, pct = 0, bytes = 0;
  int checked = 0, pass = 0;
  double worst = 0;
  int64_t fails = 0, unwritten = 0;
  int batch_ident = -1, xv_ident = -1, timed_out = 0;
  int stream_timed = 0; /* 1: the graph could not be made, stream launches timed */
  LaunchInfo li;
  const KernelEntry *e = nullptr;
  Geom g{};
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

  const KernelEntry *find(int f, int xm, int ng, int t, int pipe, int mode, int bs = 0, int lut = 0,
                          int lb = 0) const {
    for (const auto &e : ents)
      if (e.fmt == f && e.xm == xm && e.ng == ng && e.t == t && e.pipe == pipe && e.mode == mode && e.bs == bs &&
          e.lut == lut && e.lb == lb)
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
    if (W < 1 || W > lb_threads(e.lb) / 32) return li.why = "warps per CTA", li;
    if (g.KS > nch) return li.why = "KS > chunks", li;
    if (tiles % e.t) return li.why = "tiles % T", li;
    if (g.phases > 1 && (!e.bs || nch % g.KS)) return li.why = "phases", li;
    const int S = e.pipe == kREG ? 1 : g.S;
    li.smem = (size_t)smem_plan(e.fmt, e.pipe, e.lut, e.bs && e.mode == kFull, W, S, e.t, e.ng, sh.k,
                                m * xmode_splits(e.xm), g.KS, g.phases)
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
    p.flags = g.flags;
    p.phases = e.bs ? g.phases : 1;
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

  /* PDL: the launch may overlap the previous kernel of the stream; the
   * kernel's griddepcontrol.wait keeps everything that reads x or writes y
   * after that kernel's completion. */
  cudaError_t launch_soft(const KernelEntry &e, const LaunchInfo &li, KParams p, bool pdl) {
    void *args[] = {&p};
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(li.grid);
    cfg.blockDim = dim3(li.block);
    cfg.dynamicSmemBytes = li.smem;
    cfg.stream = st;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = pdl ? 1 : 0;
    return cudaLaunchKernelExC(&cfg, e.fn, args);
  }
  void launch(const KernelEntry &e, const LaunchInfo &li, KParams p, bool pdl = false) {
    CK(launch_soft(e, li, p, pdl));
  }
  /* The launches of one timed or chained sequence, as one CUDA graph; null
   * when the graph cannot be made (then the caller launches into the
   * stream, and the record says so). */
  cudaGraphExec_t capture(const std::function<cudaError_t()> &launches) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t ge = nullptr;
    if (cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    const cudaError_t le = launches();
    const cudaError_t ee = cudaStreamEndCapture(st, &graph);
    if (le != cudaSuccess || ee != cudaSuccess || cudaGraphInstantiate(&ge, graph, 0) != cudaSuccess) {
      fprintf(stderr, "lab: graph capture failed (%s / %s); timing stream launches instead\n", cudaGetErrorString(le),
              cudaGetErrorString(ee));
      cudaGetLastError();
      ge = nullptr;
    }
    if (graph) cudaGraphDestroy(graph);
    return ge;
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
    r.e = &e;
    r.g = g;
    r.shape = shape_str(sh);
    r.fmt = fmt_name(e.fmt);
    r.kernel = entry_name(e);
    r.geom = geom_str(e, g);
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
      const std::string key = case_key + xmode_name(e.xm) + "lut" + std::to_string(e.lut == 2) + "m" +
                              std::to_string(m) + "KS" + std::to_string(g.KS);
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
      auto all = [&]() {
        for (int i = 0; i < NL; ++i) {
          const cudaError_t le = launch_soft(e, r.li, params(e, g, r.li, m, d_x, d_y, copies[i % C]), g.pdl);
          if (le != cudaSuccess) return le;
        }
        return cudaSuccess;
      };
      cudaGraphExec_t ge = capture(all);
      r.stream_timed = ge == nullptr;
      for (int i = 0; i < 2; ++i) CK(ge ? cudaGraphLaunch(ge, st) : all());
      std::vector<float> ms;
      for (int i = 0; i < 10; ++i) {
        CK(cudaEventRecord(e0, st));
        CK(ge ? cudaGraphLaunch(ge, st) : all());
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
      }
      if (ge) CK(cudaGraphExecDestroy(ge));
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

  /* Shared memory a launch would need, without a GPU (for --plan). */
  size_t est_smem(const KernelEntry &e, const Geom &g, int m) const {
    const int W = g.G * g.KS;
    return (size_t)smem_plan(e.fmt, e.pipe, e.lut, e.bs && e.mode == kFull, W, e.pipe == kREG ? 1 : g.S, e.t, e.ng,
                             sh.k, m * xmode_splits(e.xm), g.KS, g.phases)
               .total +
           (e.fmt == kNF4 && e.mode >= kDecode && e.lut != 1 ? 32768 : 0);
  }
  /* CTAs per SM: from the device (GPU run) or estimated from the register
   * cap of LB, 2048 threads and 228 KB of shared memory per SM (--plan). */
  int occupancy(const KernelEntry &e, const Geom &g, int m) {
    if (o.plan_sms == 0) return prepare(e, g, m).occ;
    const int W = g.G * g.KS, regs = e.lb == 0 ? 128 : e.lb == 1 ? 80 : 64;
    const size_t sm = est_smem(e, g, m);
    if (sm > 232448) return 0;
    return std::min({65536 / (regs * 32 * W), 64 / W, (int)(233472 / (sm + 1024))});
  }
  /* The fewest B phases (1 = all of k at once) with which a BS = 1 launch
   * fits, or 0. */
  int fit_phases(const KernelEntry &e, Geom g, int m) {
    if (!e.bs) return 1;
    const int nch = (int)(sh.k / fmt_kc(e.fmt));
    for (int R = 1; R <= 16; R *= 2) {
      if (R > 1 && (nch % g.KS || R > nch / g.KS)) break;
      g.phases = R;
      if (occupancy(e, g, m) > 0) return R;
    }
    return 0;
  }

  /* Balanced geometries (round 2, question 1): for W warps per CTA and KS
   * slices, the busiest SM holds ceil(grid / SMs) CTAs of ceil(units /
   * grid) units each, so the grid's balance is
   *   eff = units / (SMs * ceil(grid / SMs) * ceil(units / grid))
   * times (nch / KS) / ceil(nch / KS) for uneven slices. Ranked by eff
   * (in steps of 2%), then warps per SM, then longer slices (fewer
   * combines); the best `count` with S = 2, persistent, early ring. */
  std::vector<Geom> balanced(const KernelEntry &e, int m, int count) {
    struct C {
      Geom g;
      double eff;
      int wps, nloc;
    };
    std::vector<C> cs;
    const int tiles = (int)(sh.n / 16), nch = (int)(sh.k / fmt_kc(e.fmt)), rgs = tiles / e.t;
    if (tiles % e.t) return {};
    for (int W : {8, 12, 16, 24, 32}) {
      if (W > lb_threads(e.lb) / 32) continue;
      for (int KS : {1, 2, 4, 8, 16}) {
        if (W % KS || KS > nch) continue;
        Geom g{W / KS, KS, e.pipe == kREG ? 1 : 2, true};
        g.flags = e.bs && e.mode == kFull ? 0 : kEarlyRing; /* run 1: an early ring delays the B staging */
        g.phases = fit_phases(e, g, m);
        if (g.phases == 0) continue;
        const int occ = occupancy(e, g, m);
        if (occ == 0) continue;
        const int units = (rgs + g.G - 1) / g.G, grid = std::min(units, occ * sms);
        const int per_sm = (grid + sms - 1) / sms, per_cta = (units + grid - 1) / grid;
        double eff = (double)units / ((double)sms * per_sm * per_cta);
        eff *= (double)nch / KS / ((nch + KS - 1) / KS);
        cs.push_back({g, eff, per_sm * W, (nch + KS - 1) / KS});
      }
    }
    std::sort(cs.begin(), cs.end(), [](const C &a, const C &b) {
      const int ea = (int)(a.eff * 50 + 1e-9), eb = (int)(b.eff * 50 + 1e-9);
      if (ea != eb) return ea > eb;
      if (a.wps != b.wps) return a.wps > b.wps;
      return a.nloc > b.nloc;
    });
    std::vector<Geom> r;
    for (const C &c : cs)
      if ((int)r.size() < count) r.push_back(c.g);
    return r;
  }

  /* The m = 1 sweep candidates of (fmt, xm) on the current shape: every
   * FULL one-group TMA/REG entry with 128 registers x its 3 best balanced
   * geometries. */
  std::vector<std::pair<const KernelEntry *, Geom>> candidates(int xm) {
    std::vector<std::pair<const KernelEntry *, Geom>> c;
    for (const auto &e : ents) {
      if (e.fmt != fmt || e.xm != xm || e.ng != 1 || e.mode != kFull || e.pipe == kCPA || e.lut == 1) continue;
      if (e.lb) continue; /* run 1: every 80/64-register kernel spills and is slower */
      for (const Geom &g : balanced(e, 1, o.quick ? 1 : 3)) c.push_back({&e, g});
    }
    return c;
  }

  /* LOADS-only: balanced geometries x S x PDL: does anything read the
   * weights at the probe's rate, and does PDL lift the per-launch constant? */
  void loads_sweep(int xm) {
    for (const auto &e : ents) {
      if (e.fmt != fmt || e.xm != xm || e.mode != kLoads) continue;
      for (Geom g : balanced(e, 1, 3))
        for (int S : {2, 4}) {
          if (e.pipe == kREG && S != 2) continue;
          for (bool pdl : {false, true}) {
            g.S = e.pipe == kREG ? 1 : S;
            g.pdl = pdl;
            run("loads", e, g, 1, nullptr, true, false, "normal");
          }
        }
    }
  }

  /* Batched (and subtractive) geometry from an m = 1 winner: same rows per
   * CTA unit, same KS, same S, flags, PDL. */
  Geom translate(const Geom &g, int t_from, int t_to, int lb_to) const {
    Geom r = g;
    r.G = std::max(1, g.G * t_from / t_to);
    while (r.G * r.KS > lb_threads(lb_to) / 32 && r.G > 1) r.G /= 2;
    return r;
  }

  void sweep_format();
  void contract_checks();
  void chain_check(const KernelEntry &e, Geom g, int m);
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

/* Round 1's m = 1 winners (bench/results/h200-lab-2026-12-01.md, run 2),
 * re-measured as the baseline: shape, fmt, x bf16, xm, T, pipe, BS, G, KS,
 * S, persistent. */
struct R1 {
  int64_t n, k;
  int fmt, bf, xm, t, pipe, bs, G, KS, S, persist;
};
const R1 kRound1[] = {
    {28672, 8192, kNF4, 0, kS2, 2, kTMA, 1, 8, 2, 2, 0},   {28672, 8192, kNF4, 1, kS1, 2, kTMA, 1, 8, 2, 2, 1},
    {8192, 28672, kNF4, 0, kS2, 2, kTMA, 0, 1, 8, 2, 0},   {8192, 28672, kNF4, 1, kS1, 1, kTMA, 1, 4, 4, 2, 1},
    {14336, 4096, kNF4, 0, kS2, 2, kTMA, 1, 4, 4, 2, 0},   {14336, 4096, kNF4, 1, kS1, 2, kTMA, 1, 4, 4, 2, 0},
    {4096, 14336, kNF4, 0, kS2, 1, kTMA, 1, 2, 8, 2, 0},   {4096, 14336, kNF4, 1, kS1, 1, kTMA, 1, 2, 8, 4, 0},
    {4096, 4096, kNF4, 0, kS2, 1, kTMA, 1, 2, 8, 2, 0},    {4096, 4096, kNF4, 1, kS1, 1, kTMA, 1, 2, 8, 2, 1},
    {28672, 8192, kQ2G64, 0, kS2, 2, kTMA, 1, 8, 2, 2, 0}, {28672, 8192, kQ2G64, 1, kDirect, 1, kREG, 0, 16, 1, 1, 1},
    {8192, 28672, kQ2G64, 0, kS2, 1, kTMA, 1, 4, 4, 2, 1}, {8192, 28672, kQ2G64, 1, kDirect, 1, kREG, 0, 4, 4, 1, 0},
    {14336, 4096, kQ2G64, 0, kS2, 1, kTMA, 1, 8, 2, 4, 0}, {14336, 4096, kQ2G64, 1, kDirect, 1, kREG, 0, 4, 2, 1, 1},
    {4096, 14336, kQ2G64, 0, kS2, 1, kTMA, 1, 2, 8, 4, 0}, {4096, 14336, kQ2G64, 1, kDirect, 1, kREG, 0, 1, 8, 1, 1},
    {4096, 4096, kQ2G64, 0, kS2, 2, kCPA, 1, 1, 8, 3, 0},  {4096, 4096, kQ2G64, 1, kDirect, 1, kREG, 0, 1, 8, 1, 0},
    {28672, 8192, kQ2G128, 0, kS2, 2, kTMA, 1, 8, 2, 2, 1}, {28672, 8192, kQ2G128, 1, kDirect, 1, kREG, 0, 16, 1, 1, 0},
    {8192, 28672, kQ2G128, 0, kS2, 1, kTMA, 1, 4, 4, 2, 0}, {8192, 28672, kQ2G128, 1, kDirect, 1, kREG, 0, 4, 4, 1, 1},
    {14336, 4096, kQ2G128, 0, kS2, 2, kTMA, 1, 2, 4, 2, 0}, {14336, 4096, kQ2G128, 1, kDirect, 1, kREG, 0, 4, 2, 1, 1},
    {4096, 14336, kQ2G128, 0, kS2, 1, kTMA, 1, 2, 8, 4, 0}, {4096, 14336, kQ2G128, 1, kDirect, 1, kREG, 0, 1, 8, 1, 1},
    {4096, 4096, kQ2G128, 0, kS2, 2, kCPA, 1, 1, 8, 3, 0}, {4096, 4096, kQ2G128, 1, kDirect, 1, kREG, 0, 1, 8, 1, 0},
};

void Lab::sweep_format() {
  std::vector<Shape> shapes = o.shapes;
  if (shapes.empty()) shapes = {{28672, 8192}, {8192, 28672}, {14336, 4096}, {4096, 14336}, {4096, 4096}};
  for (const Shape &s : shapes) {
    printf("== %s %s: generating\n", shape_str(s).c_str(), fmt_name(o.fmt));
    fflush(stdout);
    load_weight(s, o.fmt, 2);
    const std::vector<int64_t> rows = sample_rows(s.n, 256);
    std::vector<std::pair<const KernelEntry *, Geom>> f32w; /* the f32 winners, for the norm rows */
    /* activation modes: bf16 x (NF4 one term, Q2_0 direct); f32 x (NF4 two
     * fp16 terms; Q2_0 two fp16 terms and three bf16 terms) */
    std::vector<std::pair<int, int>> modes = {{1, fmt == kNF4 ? kS1 : kDirect}, {0, kS2}};
    if (fmt != kNF4) modes.push_back({0, kB3});
    for (auto [bf, xm] : modes) {
      const int main_xm = fmt == kNF4 ? kS2 : kDirect;
      set_acts(16, bf, kNormal, false);
      const Ref ref = reference(w, acts, 16, false, 1e-5f, rows);
      /* 1. round 1's winner as it ran then (no early ring, no PDL) */
      if (xm != kB3)
        for (const R1 &b : kRound1)
          if (b.n == s.n && b.k == s.k && b.fmt == fmt && b.bf == bf) {
            const KernelEntry *e = find(fmt, b.xm, 1, b.t, b.pipe, kFull, b.bs, 0);
            Geom g{b.G, b.KS, b.S, b.persist != 0};
            g.flags = 0;
            if (e) run("r1", *e, g, 1, &ref, true, false, "normal");
          }
      /* 2. balanced geometries, early ring, no PDL */
      std::vector<Rec> sw;
      for (auto &c : candidates(xm)) sw.push_back(run("sweep", *c.first, c.second, 1, &ref, true, false, "normal"));
      /* 3. the best 3 per table (NF4: one-term, two-term) with PDL, then S */
      const KernelEntry *be = nullptr;
      Geom bg{};
      double best_us = 0;
      for (int lut : {0, 2}) {
        if (fmt != kNF4 && lut) continue;
        std::vector<const Rec *> ok;
        for (const Rec &r : sw)
          if (r.li.ok && r.pass && r.e->lut == lut) ok.push_back(&r);
        std::sort(ok.begin(), ok.end(), [](const Rec *a, const Rec *b) { return a->us < b->us; });
        const KernelEntry *le = nullptr;
        Geom lg{};
        double lus = 0;
        for (size_t i = 0; i < ok.size() && i < 3; ++i) {
          const Rec *r = ok[i];
          if (!le || r->us < lus) le = r->e, lg = r->g, lus = r->us;
          Geom g = r->g;
          g.pdl = true;
          const Rec q = run("pdl", *r->e, g, 1, &ref, true, false, "normal");
          if (q.li.ok && q.pass && q.us < lus) le = r->e, lg = g, lus = q.us;
        }
        if (!le) continue;
        for (int S : {3, 4}) { /* deeper rings at the best geometry */
          if (le->pipe == kREG) break;
          Geom g = lg;
          g.S = S;
          g.phases = fit_phases(*le, g, 1);
          if (g.phases == 0) continue;
          const Rec q = run("depth", *le, g, 1, &ref, true, false, "normal");
          if (q.li.ok && q.pass && q.us < lus) lg = g, lus = q.us;
        }
        /* ablation at the best: the other ring orders; PDL toggled */
        for (int fl : {0, (int)kEarlyOne, (int)kEarlyRing}) {
          if (fl == lg.flags || (fl == kEarlyOne && le->pipe == kREG)) continue;
          Geom g = lg;
          g.flags = fl;
          const Rec q = run("ablate", *le, g, 1, &ref, true, false, "normal");
          if (q.li.ok && q.pass && q.us < lus) lg = g, lus = q.us;
        }
        Geom g = lg;
        g.pdl = !lg.pdl;
        run("ablate", *le, g, 1, &ref, true, false, "normal");
        /* NF4: the contract needs the two-term table; it is the winner */
        if (fmt != kNF4 || lut == 2) be = le, bg = lg, best_us = lus;
      }
      if (!be) {
        printf("== %s %s %s: no passing variant\n", shape_str(s).c_str(), fmt_name(fmt), xmode_name(xm));
        continue;
      }
      printf("== winner %s %s: %s %.2f us\n", shape_str(s).c_str(), xmode_name(xm), entry_name(*be).c_str(), best_us);
      if (!bf) f32w.push_back({be, bg});
      /* 4. batched at the winner's KS, and at the KS of the best m = 1
       * variant with KS <= 2 (long units: B phases staged per unit stay
       * cheap; the m = 1 time at that KS is in the sweep): B per CTA
       * (phased as needed) or per warp, T = 1, 2 */
      std::vector<std::pair<const KernelEntry *, Geom>> bgeo = {{be, bg}};
      {
        const Rec *k2 = nullptr;
        for (const Rec &r : sw)
          if (r.li.ok && r.pass && r.g.KS <= 2 && r.e->lut == be->lut && (!k2 || r.us < k2->us)) k2 = &r;
        if (k2 && k2->g.KS != bg.KS) {
          Geom g = k2->g;
          g.pdl = bg.pdl;
          bgeo.push_back({k2->e, g});
        }
      }
      for (auto [we, wg] : bgeo)
        for (int m : {8, 16})
          for (int t : {1, 2})
            for (int bs : {1, 0}) {
              const KernelEntry *e = find(fmt, xm, ng_for(xm, m), t, kTMA, kFull, bs, be->lut);
              if (!e) continue;
              Geom g = translate(wg, we->t, t, 0);
              g.S = 2;
              g.flags = bs ? 0 : kEarlyRing;
              g.phases = fit_phases(*e, g, m);
              if (g.phases) run("batched", *e, g, m, &ref, true, true, "normal");
            }
      /* 5. subtractive at the winner's KS, T = 2, B per CTA: loads / +decode
       * / +math / full (main activation mode) */
      if (xm == main_xm) {
        for (int lut : {0, 2}) {
          if (fmt != kNF4 && lut) continue;
          for (const auto &e : ents)
            if (e.fmt == fmt && e.xm == xm && e.ng == 1 && e.lb == 0 &&
                ((e.mode == kLoads && lut == 0) || ((e.mode == kDecode || e.mode == kMath) && e.lut == lut))) {
              Geom g = translate(bg, be->t, e.t, 0);
              if (e.pipe != kREG) g.S = std::max(2, g.S);
              g.phases = fit_phases(e, g, 1);
              if (g.phases) run("sub", e, g, 1, nullptr, true, false, "normal");
            }
          const KernelEntry *f2 = find(fmt, xm, 1, 2, kTMA, kFull, 1, lut);
          if (f2) {
            Geom g = translate(bg, be->t, 2, 0);
            g.S = std::max(2, g.S);
            g.phases = fit_phases(*f2, g, 1);
            if (g.phases) run("sub", *f2, g, 1, &ref, true, false, "normal");
          }
        }
        if (s.n == 28672 || (s.n == 4096 && s.k == 4096)) loads_sweep(xm);
      }
      /* 6. adversarial activations: check only (NF4: both tables) */
      for (int pat : {kAdversarial, kExtreme}) {
        set_acts(1, bf, pat, false);
        const Ref ra = reference(w, acts, 1, false, 1e-5f, rows);
        run("adv", *be, bg, 1, &ra, false, false, pat == kAdversarial ? "adversarial" : "extreme");
      }
      /* 7. PDL chain (4096x4096: y of one matvec is x of the next) */
      if (s.n == s.k && s.n == 4096) {
        set_acts(16, bf, kNormal, false);
        chain_check(*be, bg, 1);
        const KernelEntry *e8 = find(fmt, xm, ng_for(xm, 8), 1, kTMA, kFull, 1, be->lut);
        if (e8) {
          Geom g = translate(bg, be->t, 1, 0);
          g.S = 2;
          g.phases = fit_phases(*e8, g, 8);
          if (g.phases) chain_check(*e8, g, 8);
        }
      }
    }
    /* fused RMSNorm at 28672x8192: the f32 winners */
    if (s.n == 28672 && s.k == 8192)
      for (auto [s2e, s2g] : f32w) {
        set_acts(16, false, kNormal, true);
        const Ref rn = reference(w, acts, 8, true, 1e-5f, rows);
        run("norm", *s2e, s2g, 1, &rn, true, false, "normal");
        const KernelEntry *e8 = find(fmt, s2e->xm, ng_for(s2e->xm, 8), 1, kTMA, kFull, 1, s2e->lut);
        if (e8) {
          Geom g = translate(s2g, s2e->t, 1, 0);
          g.S = 2;
          g.phases = fit_phases(*e8, g, 8);
          if (g.phases) run("norm", *e8, g, 8, &rn, true, true, "normal");
        }
      }
    write_json(o.out + "/" + fmt_name(o.fmt) + ".json", nullptr); /* kept if a later shape is cut off */
  }
  free_weight();
  contract_checks();
}

/* x of step i + 1 is y of step i (a decode step's chain of matvecs, ping-
 * pong buffers), 8 steps: launched with PDL in one graph against the same
 * chain launched plainly with a synchronize after each step. Anything that
 * read x or wrote y before griddepcontrol.wait would read a stale buffer
 * or overwrite one still being read: the results must be bit-identical. */
void Lab::chain_check(const KernelEntry &e, Geom g, int m) {
  const int L = 8;
  const LaunchInfo li = prepare(e, g, m);
  Rec r;
  r.group = "chain";
  r.shape = shape_str(sh);
  r.fmt = fmt_name(fmt);
  r.kernel = entry_name(e);
  r.e = &e;
  r.g = g;
  r.g.pdl = true;
  r.geom = geom_str(e, r.g);
  r.xdtype = acts.bf16 ? "bf16" : "f32";
  r.pattern = "normal";
  r.m = m;
  r.li = li;
  if (!li.ok) {
    recs.push_back(r);
    return;
  }
  const size_t es = acts.bf16 ? 2 : 4, bytes = (size_t)m * sh.k * es;
  void *buf[2][2];
  for (auto &pp : buf)
    for (auto &q : pp) CK(cudaMalloc(&q, bytes));
  std::vector<uint8_t> out[2];
  for (int pass = 0; pass < 2; ++pass) {
    void *const *b = buf[pass];
    CK(cudaMemcpy(b[0], d_x, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaMemset(b[1], 0xff, bytes));
    if (pass == 0) {
      for (int i = 0; i < L; ++i) {
        launch(e, li, params(e, g, li, m, b[i & 1], b[(i + 1) & 1], copies[i % copies.size()]), false);
        CK(cudaStreamSynchronize(st));
      }
    } else {
      Geom gp = g;
      gp.pdl = true;
      auto all = [&]() {
        for (int i = 0; i < L; ++i) {
          const cudaError_t le =
              launch_soft(e, li, params(e, gp, li, m, b[i & 1], b[(i + 1) & 1], copies[i % copies.size()]), true);
          if (le != cudaSuccess) return le;
        }
        return cudaSuccess;
      };
      cudaGraphExec_t ge = capture(all);
      r.stream_timed = ge == nullptr;
      CK(ge ? cudaGraphLaunch(ge, st) : all());
      CK(cudaStreamSynchronize(st));
      if (ge) CK(cudaGraphExecDestroy(ge));
    }
    out[pass].resize(bytes);
    CK(cudaMemcpy(out[pass].data(), b[L & 1], bytes, cudaMemcpyDeviceToHost));
  }
  r.checked = 1;
  r.timed_out = timed_out();
  r.unwritten = count_unwritten(out[1].data(), m * sh.k, acts.bf16);
  r.pass = out[0] == out[1] && !r.timed_out && r.unwritten == 0;
  r.xv_ident = out[0] == out[1];
  for (auto &pp : buf)
    for (auto &q : pp) cudaFree(q);
  recs.push_back(r);
  printf("chain %s %s m%d %s: 8 steps with PDL %s the plain chain\n", r.shape.c_str(), r.kernel.c_str(), m,
         r.geom.c_str(), r.pass ? "bit-identical to" : "DIFFERS from");
  fflush(stdout);
}

/* The accuracy contract on correlated inputs (round 2, question 5): rows
 * of one repeated code and rows of random codes against all-positive x,
 * k up to 65536; plus the extreme pattern. NF4: one-term against two-term
 * table; Q2_0: direct, two fp16 terms, three bf16 terms. */
void Lab::contract_checks() {
  for (int64_t k : {8192, 65536}) {
    sh = {2048, k};
    w = make_weight_corr(o.fmt, sh.n, sh.k, 77 + k);
    fmt = o.fmt;
    const std::vector<uint8_t> lay = repack(w);
    wbytes = lay.size();
    uint8_t *p = nullptr;
    CK(cudaMalloc(&p, wbytes));
    CK(cudaMemcpy(p, lay.data(), wbytes, cudaMemcpyHostToDevice));
    copies.push_back(p);
    CK(cudaMalloc(&d_x, (size_t)16 * sh.k * 4));
    CK(cudaMalloc(&d_g, (size_t)sh.k * 4));
    CK(cudaMalloc(&d_y, (size_t)16 * sh.n * 4));
    CK(cudaMalloc(&d_y1, (size_t)sh.n * 4));
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < sh.n; r += 7) rows.push_back(r);
    for (int pat : {kPositive, kExtreme}) {
      if (pat == kExtreme && k != 8192) continue;
      for (int bf : {0, 1}) {
        set_acts(1, bf, pat, false);
        const Ref ref = reference(w, acts, 1, false, 1e-5f, rows);
        for (const auto &e : ents) {
          if (e.fmt != fmt || e.ng != 1 || e.mode != kFull || e.pipe != kTMA || e.t != 1 || e.lb || e.lut == 1)
            continue;
          if ((e.xm == kS1 || e.xm == kDirect) != (bf == 1)) continue;
          Geom g{2, 8, 2, true};
          g.phases = fit_phases(e, g, 1);
          if (g.phases) run("contract", e, g, 1, &ref, false, false, pat == kPositive ? "positive" : "extreme");
        }
      }
    }
    free_weight();
  }
}

void Lab::only(const std::string &spec) {
  int f = 0, xm = 0, ng = 1, t = 1, pipe = 0, mode = kFull, m = 1, xbf = 0, nrm = 0, bs = 0, lut = 0, lb = 0;
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
    if (key == "lb") lb = (int)v;
    if (key == "phases") g.phases = (int)v;
    if (key == "flags") g.flags = (int)v;
    pos = end + 1;
  }
  const KernelEntry *e = find(f, xm, ng, t, pipe, mode, bs, lut, lb);
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
            "\"unwritten\": %lld, \"batch_ident\": %d, \"xv_ident\": %d, \"timed_out\": %d, \"stream_timed\": %d, "
            "\"launch\": {\"ok\": %d, \"why\": ",
            r.m, r.norm, mode_name(r.mode), r.us, r.us_min, r.bytes, r.gbs, r.pct, r.checked, r.pass,
            std::isinf(r.worst) ? 1e30 : r.worst, (long long)r.fails, (long long)r.unwritten, r.batch_ident,
            r.xv_ident, r.timed_out, r.stream_timed, r.li.ok);
    json_str(f, r.li.why);
    fprintf(f, ", \"grid\": %d, \"block\": %d, \"occ\": %d, \"regs\": %d, \"local\": %d, \"smem\": %zu, "
               "\"static_smem\": %zu, \"units\": %d}}%s\n",
            r.li.grid, r.li.block, r.li.occ, r.li.regs, r.li.local, r.li.smem, r.li.static_smem, r.li.units,
            i + 1 < recs.size() ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
}

/* The short table: per shape, format, x dtype and activation mode: round
 * 1's winner re-measured (r1), the best passing m = 1 variant (NF4: of the
 * two-term table, which the contract needs), the best without and with
 * PDL, the best with the ring after the B staging (late-ring), NF4's best
 * one-term (fp16) table, batched and norm ratios, checks; then the
 * subtractive rows, loads-only bests, PDL chains and contract checks. */
void Lab::summary(FILE *f) const {
  auto xm_of = [](const Rec &r) { return r.e ? xmode_name(r.e->xm) : "?"; };
  /* the ring order of a key's best (contract family) m = 1 record */
  auto best_flags = [&](const std::string &k) {
    const Rec *b = nullptr;
    for (const Rec &r : recs)
      if (r.e && r.shape + " " + r.fmt + " " + r.xdtype + " " + xm_of(r) == k && r.li.ok && r.pass && r.m == 1 &&
          !r.norm && r.mode == kFull && r.pattern == "normal" && r.us > 0 && (r.fmt != "nf4" || r.e->lut == 2) &&
          r.group != "r1" && r.group != "sub" && r.group != "batched" && (!b || r.us < b->us))
        b = &r;
    return b ? b->g.flags : -1;
  };
  std::vector<std::string> keys;
  for (const Rec &r : recs) {
    if (r.group == "contract" || r.group == "loads" || !r.e) continue;
    const std::string k = r.shape + " " + r.fmt + " " + r.xdtype + " " + xm_of(r);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  auto ratio = [](const Rec *a, const Rec *b) {
    return a && b ? std::to_string(a->us / b->us).substr(0, 4) + "x" : std::string("-");
  };
  auto us = [](const Rec *a) { return a ? std::to_string(a->us).substr(0, 5) : std::string("-"); };
  for (const std::string &k : keys) {
    const Rec *r1 = nullptr, *best = nullptr, *nopdl = nullptr, *pdl = nullptr, *lut0 = nullptr, *b8 = nullptr,
              *b16 = nullptr, *nm1 = nullptr, *late = nullptr, *early1 = nullptr, *early = nullptr;
    int checks = 0, fails = 0, ident_bad = 0, xv_bad = 0, adv_ok = -1, ext_ok = -1;
    for (const Rec &r : recs) {
      if (!r.e || r.shape + " " + r.fmt + " " + r.xdtype + " " + xm_of(r) != k || !r.li.ok) continue;
      if (r.group == "contract" || r.group == "chain") continue;
      if (r.checked) checks++, fails += !r.pass;
      if (r.batch_ident == 0) ident_bad++;
      if (r.xv_ident == 0) xv_bad++;
      if (r.pattern == "adversarial") adv_ok = r.pass;
      if (r.pattern == "extreme") ext_ok = r.pass;
      if (r.mode != kFull || r.pattern != "normal" || !r.pass || r.us <= 0 || r.group == "sub") continue;
      auto better = [&](const Rec *&slot) {
        if (!slot || r.us < slot->us) slot = &r;
      };
      if (r.group == "r1") {
        r1 = &r;
        continue;
      }
      if (r.norm) {
        if (r.m == 1) better(nm1);
        continue;
      }
      if (r.group == "batched") {
        better(r.m == 8 ? b8 : b16);
        continue;
      }
      const bool contract = r.fmt != "nf4" || r.e->lut == 2;
      if (!contract) {
        better(lut0);
        continue;
      }
      if (r.group == "ablate" && r.g.pdl && best_flags(k) != r.g.flags) {
        (r.g.flags == 0 ? late : r.g.flags == kEarlyOne ? early1 : early) = &r;
        continue;
      }
      better(best);
      better(r.g.pdl ? pdl : nopdl);
    }
    if (!best) {
      fprintf(f, "%-28s no passing m=1 variant (r1 %s us)\n", k.c_str(), us(r1).c_str());
      continue;
    }
    fprintf(f, "%-28s r1 %6s  best %7.2f us %5.0f GB/s %5.1f%%  %-34s %-30s | no-pdl %s pdl %s ring late %s early1 %s "
            "early %s",
            k.c_str(), us(r1).c_str(), best->us, best->gbs, best->pct,
            best->kernel.substr(best->kernel.find('/') + 1).c_str(), best->geom.c_str(), us(nopdl).c_str(),
            us(pdl).c_str(), us(late).c_str(), us(early1).c_str(), us(early).c_str());
    if (lut0) fprintf(f, " | fp16-table %s", us(lut0).c_str());
    /* batched: over the best m = 1 time, and over the best m = 1 time at the
     * same KS (what bit-identity to m = 1 needs) */
    auto same_ks = [&](const Rec *b) -> const Rec * {
      const Rec *o1 = nullptr;
      if (!b) return nullptr;
      for (const Rec &r : recs)
        if (r.e && r.shape == b->shape && r.fmt == b->fmt && r.xdtype == b->xdtype && r.e->xm == b->e->xm &&
            r.e->lut == b->e->lut && r.m == 1 && !r.norm && r.mode == kFull && r.pattern == "normal" && r.pass &&
            r.us > 0 && r.g.KS == b->g.KS && r.group != "sub" && r.group != "r1" && (!o1 || r.us < o1->us))
          o1 = &r;
      return o1;
    };
    fprintf(f, " | m8 %s (KS%d: %s) m16 %s (KS%d: %s)", ratio(b8, best).c_str(), b8 ? b8->g.KS : 0,
            ratio(b8, same_ks(b8)).c_str(), ratio(b16, best).c_str(), b16 ? b16->g.KS : 0,
            ratio(b16, same_ks(b16)).c_str());
    if (nm1) fprintf(f, " norm %s", ratio(nm1, best).c_str());
    fprintf(f, " | checks %d/%d%s%s adv %s ext %s\n", checks - fails, checks, ident_bad ? " BATCH-DIFF" : "",
            xv_bad ? " XV-DIFF" : "", adv_ok < 0 ? "-" : adv_ok ? "ok" : "FAIL",
            ext_ok < 0 ? "-" : ext_ok ? "ok" : "FAIL");
  }
  for (const Rec &r : recs)
    if (r.group == "sub" && r.shape == "28672x8192" && r.li.ok)
      fprintf(f, "  sub %-11s %-44s %-30s %7.2f us %5.1f%%\n", r.shape.c_str(), r.kernel.c_str(), r.geom.c_str(), r.us,
              r.pct);
  for (const char *shp : {"28672x8192", "4096x4096"})
    for (bool pd : {false, true}) {
      const Rec *bl = nullptr;
      for (const Rec &r : recs)
        if (r.group == "loads" && r.shape == shp && r.li.ok && r.g.pdl == pd && (!bl || r.us < bl->us)) bl = &r;
      if (bl)
        fprintf(f, "  best loads-only %-11s %-3s %-40s %-30s %7.2f us %5.1f%%\n", bl->shape.c_str(), pd ? "pdl" : "",
                bl->kernel.c_str(), bl->geom.c_str(), bl->us, bl->pct);
    }
  for (const Rec &r : recs)
    if (r.group == "chain")
      fprintf(f, "  chain %-10s %-44s m%-2d %s\n", r.shape.c_str(), r.kernel.c_str(), r.m,
              !r.li.ok ? ("no launch: " + r.li.why).c_str() : r.pass ? "PDL chain bit-identical" : "PDL chain DIFFERS");
  for (const Rec &r : recs)
    if (r.group == "contract")
      fprintf(f, "  contract %-11s %-44s %-4s %-8s %s worst %.3g of tolerance%s\n", r.shape.c_str(), r.kernel.c_str(),
              r.xdtype.c_str(), r.pattern.c_str(), !r.li.ok ? "no launch" : r.pass ? "pass" : "FAIL", r.worst,
              r.li.ok ? "" : (" (" + r.li.why + ")").c_str());
}

void Lab::ncu_targets() const {
  if (o.ncu_file.empty()) return;
  /* the best and the worst passing m = 1 variant of the main activation
   * dtype at 28672x8192 (NF4: f32 x; Q2_0: bf16 x) */
  const Rec *best = nullptr, *worst = nullptr;
  for (const Rec &r : recs) {
    if (r.shape != "28672x8192" || r.m != 1 || r.mode != kFull || !r.pass || r.norm || r.pattern != "normal") continue;
    if (r.xdtype != (fmt == kNF4 ? "f32" : "bf16") || (r.group != "sweep" && r.group != "pdl")) continue;
    if (fmt == kNF4 && r.e->lut != 2) continue;
    if (!best || r.us < best->us) best = &r;
    if (!worst || r.us > worst->us) worst = &r;
  }
  FILE *f = fopen(o.ncu_file.c_str(), "a");
  if (!f || !best) {
    if (f) fclose(f);
    return;
  }
  for (const Rec *r : {best, worst}) {
    const KernelEntry *e = r->e;
    const Geom &g = r->g;
    fprintf(f,
            "%s-%s fmt=%d,xm=%d,ng=%d,t=%d,pipe=%d,mode=3,bs=%d,lut=%d,lb=%d,n=28672,k=8192,m=1,G=%d,KS=%d,S=%d,"
            "persist=%d,phases=%d,flags=%d,xbf16=%d\n",
            fmt_name(fmt), r == best ? "best" : "worst", e->fmt, e->xm, e->ng, e->t, e->pipe, e->bs, e->lut, e->lb, g.G,
            g.KS, g.S, g.persist, g.phases, g.flags, r->xdtype == "bf16");
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
        for (int xm : {kS2, f == kNF4 ? kS1 : kDirect, kB3}) {
          if (f == kNF4 && xm == kB3) continue;
          L.sh = s;
          L.fmt = f;
          const auto c = L.candidates(xm);
          total += (int)c.size();
          printf("%s %s %s: %zu candidates:", shape_str(s).c_str(), fmt_name(f), xmode_name(xm), c.size());
          for (auto &e : c)
            printf(" [t%d %s%s%s%s G%d KS%d R%d]", e.first->t, pipe_name(e.first->pipe), e.first->bs ? " bsmem" : "",
                   e.first->lut == 2 ? " lut2" : "", e.first->lb ? (" lb" + std::to_string(e.first->lb)).c_str() : "",
                   e.second.G, e.second.KS, e.second.phases);
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
