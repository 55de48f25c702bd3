/* Instantiation lists shared by inst_*.cu. Per format and activation mode:
 *   FULL, 1 column group: TMA T = 1, 2 with B per warp (BS 0) or staged per
 *     CTA (BS 1); CPA T = 2 BS 1; REG T = 1 BS 0 (the register baseline)
 *   FULL, 2 column groups (m = 16 bf16, m = 8 f32): TMA T = 1, 2, BS 0
 *   FULL, 4 column groups (m = 16 f32): TMA T = 1, BS 0
 * NF4 adds the 256-byte-row table (LUT 1) for TMA T = 1, 2 BS 1. The
 * subtractive modes of the main activation mode (NF4: f32 x, Q2_0: bf16 x):
 * LOADS through TMA T = 1, 2, CPA T = 2, REG T = 1; DECODE and MATH through
 * TMA T = 2 BS 1. */
#include "kernel.cuh"
#include "registry.h"

#define LAB_ENTRY(F, X, NG, T, P, M, BS, LUT) \
  v.push_back({F, X, NG, T, P, M, BS, LUT, (const void *)lab::qmv<F, X, NG, T, P, M, BS, LUT>});

#define LAB_XMODE(F, X)                                  \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kFull, 0, 0)     \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kFull, 0, 0)     \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kFull, 1, 0)     \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kFull, 1, 0)     \
  LAB_ENTRY(F, X, 1, 2, lab::kCPA, lab::kFull, 1, 0)     \
  LAB_ENTRY(F, X, 1, 1, lab::kREG, lab::kFull, 0, 0)     \
  LAB_ENTRY(F, X, 2, 1, lab::kTMA, lab::kFull, 0, 0)     \
  LAB_ENTRY(F, X, 2, 2, lab::kTMA, lab::kFull, 0, 0)

#define LAB_LUT256(F, X)                                 \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kFull, 1, 1)     \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kFull, 1, 1)

#define LAB_SUBTRACT(F, X)                               \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kLoads, 0, 0)    \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kLoads, 0, 0)    \
  LAB_ENTRY(F, X, 1, 2, lab::kCPA, lab::kLoads, 0, 0)    \
  LAB_ENTRY(F, X, 1, 1, lab::kREG, lab::kLoads, 0, 0)    \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kDecode, 1, 0)   \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kMath, 1, 0)
