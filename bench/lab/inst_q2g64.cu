#include "inst.cuh"
/* Q2_0 g64: direct (bf16 x) adds the register pipe (round 1's winner) and
 * its 80 / 64-register forms; f32 x / norm: two fp16 terms (S2, round 1)
 * and three bf16 terms (B3: exact, no range limit). */
void lab::register_q2g64(std::vector<KernelEntry> &v) {
  LAB_M1(lab::kQ2G64, lab::kDirect, 0)
  LAB_ENTRY(lab::kQ2G64, lab::kDirect, 1, 1, lab::kREG, lab::kFull, 0, 0, 0)
  LAB_ENTRY(lab::kQ2G64, lab::kDirect, 1, 1, lab::kREG, lab::kFull, 0, 0, 1)
  LAB_ENTRY(lab::kQ2G64, lab::kDirect, 1, 1, lab::kREG, lab::kFull, 0, 0, 2)
  LAB_ENTRY(lab::kQ2G64, lab::kDirect, 1, 2, lab::kTMA, lab::kFull, 1, 0, 1)
  LAB_M1(lab::kQ2G64, lab::kS2, 0)
  LAB_ENTRY(lab::kQ2G64, lab::kS2, 1, 2, lab::kCPA, lab::kFull, 1, 0, 0)
  LAB_M1(lab::kQ2G64, lab::kB3, 0)
  LAB_BATCH(lab::kQ2G64, lab::kDirect, 2, 0)
  LAB_ENTRY(lab::kQ2G64, lab::kDirect, 2, 1, lab::kREG, lab::kFull, 0, 0, 0)
  LAB_BATCH(lab::kQ2G64, lab::kS2, 2, 0)
  LAB_ENTRY(lab::kQ2G64, lab::kS2, 4, 1, lab::kTMA, lab::kFull, 1, 0, 0)
  LAB_ENTRY(lab::kQ2G64, lab::kS2, 4, 1, lab::kTMA, lab::kFull, 0, 0, 0)
  LAB_BATCH(lab::kQ2G64, lab::kB3, 3, 0)
  LAB_SUBTRACT(lab::kQ2G64, lab::kDirect, 0)
  LAB_ENTRY(lab::kQ2G64, lab::kDirect, 1, 1, lab::kREG, lab::kDecode, 0, 0, 0)
  LAB_ENTRY(lab::kQ2G64, lab::kDirect, 1, 1, lab::kREG, lab::kMath, 0, 0, 0)
}
