/* The kernel variants built into the lab: one entry per instantiation of
 * qmv<FMT, XMODE, NG, T, PIPE, MODE, BS, LUT, LB> (kernel.cuh). Run-time
 * parameters (G, KS, S, persistent grid, phases, early ring, PDL launch)
 * multiply them in the sweep. */
#ifndef LAB_REGISTRY_H
#define LAB_REGISTRY_H

#include <string>
#include <vector>

namespace lab {

struct KernelEntry {
  int fmt, xm, ng, t, pipe, mode;
  int bs;  /* 1: B staged once per CTA in shared memory */
  int lut; /* NF4: 1 = 256-byte-row table (PRMT address), 2 = two-term (hi + lo) */
  int lb;  /* launch bounds: 0 = 512 threads / 128 registers, 1 = 768 / 80, 2 = 1024 / 64 */
  const void *fn;
};

void register_nf4(std::vector<KernelEntry> &v);
void register_q2g64(std::vector<KernelEntry> &v);
void register_q2g128(std::vector<KernelEntry> &v);

const char *fmt_name(int fmt);
const char *xmode_name(int xm);
const char *pipe_name(int pipe);
const char *mode_name(int mode);
std::string entry_name(const KernelEntry &e);

}  // namespace lab

#endif
