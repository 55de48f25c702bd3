#!/bin/bash
# v25 run 3 (issue 13): the library's qgc_wave_fit (NEW2: NF4 over 8-16
# warps at the slots' k-split or half of it, CTAs on 2/3 of the SMs, and
# v24's 12 warps per call where fewer tiles; Q2_0 as v24) against HEAD
# (c301488), then the sanitizers on it.
# 1. The quick suite and verify.
# 2. NEW2 against HEAD at the five shapes whose NF4 plans changed, m = 1,
#    8, 16, --graph. Predicted from run 2: 18944 x 3584 m = 1 0.85, bf16
#    m = 8 0.85, f32 m = 8 1.08; 20480 x 5120 0.72-0.89; 37888 x 3584
#    m = 1 0.91, bf16 m = 8 0.92, f32 m = 8 1.00 (HEAD's 12 warps back);
#    22016 and 24576 x 4096 0.96-0.98, f32 m = 8 1.03; m = 16 not measured.
# 3. compute-sanitizer memcheck and racecheck of the quick suite.
# Here: bench/cuda-module.sh /tmp/b90 NEW2; make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/run-common.sh \
#     bench/gpu-ab.sh bench/results/v25/h200-run3.sh /tmp/mods/qgemv-cuda-HEAD.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run3; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 100)) OUT=$O/ab timeout 160 bash "$here/gpu-ab.sh" qgemv-cuda-HEAD.so.xz \
  --shape 18944x3584 --shape 20480x5120 --shape 37888x3584 --shape 22016x4096 --shape 24576x4096 \
  --format nf4 --dtype bf16,f32 --m 1,8,16 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
GPU_DEADLINE=$((560 - SECONDS)) OUT=$O/san timeout $((575 - SECONDS)) bash "$here/gpu-pack-run.sh" sanitize \
  > "$O/sanitize-log.txt" 2>&1
step sanitize; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:|exit" "$O/sanitize-log.txt" | head -12
