/* Instantiation list shared by inst_*.cu: per format and activation mode,
 *   FULL, 1 column group: TMA T = 1, 2, 4; CPA T = 2; REG T = 1, 2
 *   FULL, 2 column groups (m = 16 bf16, m = 8 f32): TMA T = 1, 2
 *   FULL, 4 column groups (m = 16 f32): TMA T = 1
 * and the subtractive modes of the main activation mode (NF4: f32 x,
 * Q2_0: bf16 x): LOADS/DECODE/MATH with TMA T = 2, LOADS with CPA and REG. */
#include "kernel.cuh"
#include "registry.h"

#define LAB_ENTRY(F, X, NG, T, P, M) \
  v.push_back({F, X, NG, T, P, M, (const void *)lab::qmv<F, X, NG, T, P, M>});

#define LAB_XMODE(F, X)                             \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kFull)      \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kFull)      \
  LAB_ENTRY(F, X, 1, 4, lab::kTMA, lab::kFull)      \
  LAB_ENTRY(F, X, 1, 2, lab::kCPA, lab::kFull)      \
  LAB_ENTRY(F, X, 1, 1, lab::kREG, lab::kFull)      \
  LAB_ENTRY(F, X, 1, 2, lab::kREG, lab::kFull)      \
  LAB_ENTRY(F, X, 2, 1, lab::kTMA, lab::kFull)      \
  LAB_ENTRY(F, X, 2, 2, lab::kTMA, lab::kFull)

#define LAB_SUBTRACT(F, X)                          \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kLoads)     \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kDecode)    \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kMath)      \
  LAB_ENTRY(F, X, 1, 2, lab::kCPA, lab::kLoads)     \
  LAB_ENTRY(F, X, 1, 2, lab::kREG, lab::kLoads)
