#include "inst.cuh"
void lab::register_q2g64(std::vector<KernelEntry> &v) {
  LAB_XMODE(lab::kQ2G64, lab::kDirect)
  LAB_XMODE(lab::kQ2G64, lab::kS2)
  LAB_ENTRY(lab::kQ2G64, lab::kS2, 4, 1, lab::kTMA, lab::kFull, 0, 0)
  LAB_SUBTRACT(lab::kQ2G64, lab::kDirect)
}
