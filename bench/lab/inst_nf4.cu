#include "inst.cuh"
void lab::register_nf4(std::vector<KernelEntry> &v) {
  LAB_M1(lab::kNF4, lab::kS1, 0)
  LAB_M1(lab::kNF4, lab::kS2, 0)
  LAB_M1(lab::kNF4, lab::kS1, 2)
  LAB_M1(lab::kNF4, lab::kS2, 2)
  LAB_WARPS(lab::kNF4, lab::kS1, 2)
  LAB_WARPS(lab::kNF4, lab::kS2, 2)
  LAB_ENTRY(lab::kNF4, lab::kS2, 1, 2, lab::kTMA, lab::kFull, 1, 1, 0) /* round 1's 256-byte-row table */
  LAB_BATCH(lab::kNF4, lab::kS1, 2, 2)
  LAB_BATCH(lab::kNF4, lab::kS2, 2, 2)
  LAB_ENTRY(lab::kNF4, lab::kS2, 4, 1, lab::kTMA, lab::kFull, 1, 2, 0)
  LAB_ENTRY(lab::kNF4, lab::kS2, 4, 1, lab::kTMA, lab::kFull, 0, 2, 0)
  LAB_SUBTRACT(lab::kNF4, lab::kS2, 0)
  LAB_ENTRY(lab::kNF4, lab::kS2, 1, 2, lab::kTMA, lab::kDecode, 1, 2, 0)
  LAB_ENTRY(lab::kNF4, lab::kS2, 1, 2, lab::kTMA, lab::kMath, 1, 2, 0)
}
