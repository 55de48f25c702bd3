#include "inst.cuh"
void lab::register_nf4(std::vector<KernelEntry> &v) {
  LAB_XMODE(lab::kNF4, lab::kS1)
  LAB_XMODE(lab::kNF4, lab::kS2)
  LAB_LUT256(lab::kNF4, lab::kS1)
  LAB_LUT256(lab::kNF4, lab::kS2)
  LAB_ENTRY(lab::kNF4, lab::kS2, 4, 1, lab::kTMA, lab::kFull, 0, 0)
  LAB_SUBTRACT(lab::kNF4, lab::kS2)
  LAB_ENTRY(lab::kNF4, lab::kS2, 1, 2, lab::kTMA, lab::kDecode, 1, 1)
  LAB_ENTRY(lab::kNF4, lab::kS2, 1, 2, lab::kTMA, lab::kMath, 1, 1)
}
