#!/bin/bash
# v24 run 5 (issue 13): a k-split and warps for just over one wave of CTAs
# (QGC_EXP_WAVE_FIT, the pack's plan) against FINAL (17397af's module, run
# 3's record). Run 4's plan-sweep models found the plan 1.12-1.73x slower
# than k-split 4 in 12 warps at 11008 x 4096 and 18944 x 3584; the rule
# (qgc_wave_fit) takes that geometry there and at 12288 x 4096, 22016 x
# 4096 (Llama-2-7B's gate and up in one weight), 37888 x 3584 (Qwen2.5-7B's):
# the busiest SM's tiles fewest. The issue shapes' plans do not change.
# Predicted: 11008 x 4096 and 18944 x 3584 m = 1 0.80-0.90x, m = 8
# 0.67-0.97x (run 4); the other three 0.8-0.95x. The quick suite (with
# test_fill_rows at 11003 x 4096) and verify pass.
# Here: bench/cuda-module.sh /tmp/b90 WAVE (the pack's module); make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/results/v24/h200-run5.sh \
#     /tmp/mods/qgemv-cuda-FINAL.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run5; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 110)) OUT=$O/ab timeout 200 bash "$here/gpu-ab.sh" qgemv-cuda-FINAL.so.xz \
  --shape 11008x4096 --shape 18944x3584 --shape 12288x4096 --shape 22016x4096 --shape 37888x3584 \
  --format nf4,q2_0 --dtype bf16,f32 --m 1,8 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
