#!/bin/bash
# v26 run 3 (issue 13): NEW2 = NEW (run 2's module) plus NF4's per-call
# try of 8 warps where they stage B in one phase and the pick's warps in
# two, at no more tiles on the busiest SM. Its plans move at 22016 and
# 24576 x 4096 (k-split 2) and 11008, 12288 and 9216 x 4096 (k-split 4):
# f32 x m = 8 and 16, bf16 x m = 16. Predicted: 22016 and 24576 f32 0.91
# (run 2's sweep, the same geometry by override), the rest not measured
# (v24: one phase of 8 warps at k-split 4 beat two of 12 at 22016 x 4096
# f32 m = 8, 1.39x). Then the sanitizers on NEW2 (the library's module).
# Here: bench/cuda-module.sh /tmp/b90 NEW2 (the tree); make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/run-common.sh \
#     bench/gpu-ab.sh bench/results/v26/h200-run3.sh /tmp/mods/qgemv-cuda-NEW.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run3; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
shapes=(--shape 22016x4096 --shape 24576x4096 --shape 11008x4096 --shape 12288x4096 --shape 9216x4096)
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 45)) OUT=$O/ab timeout 80 bash "$here/gpu-ab.sh" qgemv-cuda-NEW.so.xz \
  "${shapes[@]}" --format nf4 --dtype f32 --m 8,16 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 25)) OUT=$O/ab2 timeout 50 bash "$here/gpu-ab.sh" qgemv-cuda-NEW.so.xz \
  "${shapes[@]}" --format nf4 --dtype bf16 --m 16 --graph >> "$O/ab.txt" 2>> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
GPU_DEADLINE=$((560 - SECONDS)) OUT=$O/san timeout $((575 - SECONDS)) bash "$here/gpu-pack-run.sh" sanitize \
  > "$O/sanitize-log.txt" 2>&1
step sanitize; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:|exit" "$O/sanitize-log.txt" | head -12
