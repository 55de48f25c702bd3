/* Read-bandwidth probes (probe.cu). */
#ifndef LAB_PROBE_H
#define LAB_PROBE_H

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace lab {

struct ProbeResult {
  std::string name, error;
  int warps_per_sm = 0, threads = 0;
  size_t grid = 0, smem = 0;
  double gbs_best = 0.0, gbs_median = 0.0;
};

std::vector<ProbeResult> run_probes(const cudaDeviceProp &prop, size_t bytes);

}  // namespace lab

#endif
