#include "inst.cuh"
void lab::register_nf4(std::vector<KernelEntry> &v) {
  LAB_XMODE(lab::kNF4, lab::kS1)
  LAB_XMODE(lab::kNF4, lab::kS2)
  LAB_ENTRY(lab::kNF4, lab::kS2, 4, 1, lab::kTMA, lab::kFull)
  LAB_SUBTRACT(lab::kNF4, lab::kS2)
}
