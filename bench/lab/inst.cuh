/* Instantiation lists shared by inst_*.cu (round 2). Per format:
 *   LAB_M1(F, X)      m = 1 (and m = 8 bf16) kernels of one activation mode:
 *                     TMA T = 1, 2 with B staged per CTA (BS 1), TMA T = 2
 *                     with B per warp (BS 0); NF4 with the one-term (LUT 0)
 *                     and the two-term table (LUT 2)
 *   LAB_WARPS(...)    the same with 80 / 64 registers (24 / 32 warps per SM)
 *   LAB_BATCH(...)    several column groups (m = 16 bf16, m = 8, 16 f32):
 *                     TMA T = 1, 2, B per CTA (phased) or per warp
 *   LAB_SUBTRACT(...) LOADS through TMA T = 1, 2 (128 and 64 registers) and
 *                     REG T = 1; DECODE and MATH through TMA T = 2 BS 1. */
#include "kernel.cuh"
#include "registry.h"

#define LAB_ENTRY(F, X, NG, T, P, M, BS, LUT, LB) \
  v.push_back({F, X, NG, T, P, M, BS, LUT, LB, (const void *)lab::qmv<F, X, NG, T, P, M, BS, LUT, LB>});

#define LAB_M1(F, X, LUT)                                  \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kFull, 1, LUT, 0)  \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kFull, 1, LUT, 0)  \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kFull, 0, LUT, 0)

#define LAB_WARPS(F, X, LUT)                               \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kFull, 1, LUT, 1)  \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kFull, 1, LUT, 2)  \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kFull, 1, LUT, 1)

#define LAB_BATCH(F, X, NG, LUT)                            \
  LAB_ENTRY(F, X, NG, 1, lab::kTMA, lab::kFull, 1, LUT, 0)  \
  LAB_ENTRY(F, X, NG, 2, lab::kTMA, lab::kFull, 1, LUT, 0)  \
  LAB_ENTRY(F, X, NG, 2, lab::kTMA, lab::kFull, 0, LUT, 0)

#define LAB_SUBTRACT(F, X, LUT)                              \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kLoads, 0, 0, 0)     \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kLoads, 0, 0, 0)     \
  LAB_ENTRY(F, X, 1, 1, lab::kTMA, lab::kLoads, 0, 0, 2)     \
  LAB_ENTRY(F, X, 1, 1, lab::kREG, lab::kLoads, 0, 0, 0)     \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kDecode, 1, LUT, 0)  \
  LAB_ENTRY(F, X, 1, 2, lab::kTMA, lab::kMath, 1, LUT, 0)
