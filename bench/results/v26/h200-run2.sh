#!/bin/bash
# v26 run 2 (issue 13): the library's new plan (NEW: QGC_EXP_Q2_WIDE and
# QGC_EXP_ONE_CTA on; Q2_0's wide search keeps one tile per warp without
# a k-split only for at most 3/4 of the narrow pick's tiles) against HEAD
# (17a5c43). Q2_0's plans move at six shapes, each to the geometry v26
# run 1 measured as WIDE (11008, 12288 and 9216 x 4096, 10240 x 5120: a
# k-split of 2, one tile per warp; 18944 x 3584: 1 in 9 warps of one tile;
# 37888 x 3584: 1 in 9 of two); m = 16 was not measured. Predicted from
# run 1 (b/a0 there = HEAD over WIDE): m = 1 0.89-1.05x HEAD's time
# (9216 x 4096 g128 bf16 1.05), bf16 m = 8 0.92-1.16, f32 m = 8 0.59-0.92;
# m = 16 as m = 8. ONECTA alone moves launches at 14336 x 4096 and 13824 x
# 5120 m = 1 and 1024 x 4096 NF4 bf16 m = 8 (more shared memory asked,
# no second CTA could fit them by registers): predicted within 1%.
# The quick suite and verify first; a plan-sweep last (below).
# Here: bench/cuda-module.sh /tmp/b90 NEW (the tree as committed); make;
# cp /tmp/mods/qgemv-cuda-base.so.xz (17a5c43) /tmp/mods/qgemv-cuda-HEAD.so.xz; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/plan-sweep.sh bench/results/v26/h200-run2.sh \
#     /tmp/mods/qgemv-cuda-HEAD.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run2; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 230)) OUT=$O/ab timeout 290 bash "$here/gpu-ab.sh" qgemv-cuda-HEAD.so.xz \
  --shape 11008x4096 --shape 12288x4096 --shape 9216x4096 --shape 10240x5120 --shape 18944x3584 \
  --shape 37888x3584 --format q2_0,q2_0g64 --dtype bf16,f32 --m 1,8,16 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 70)) OUT=$O/ab1 timeout 110 bash "$here/gpu-ab.sh" qgemv-cuda-HEAD.so.xz \
  --shape 14336x4096 --shape 13824x5120 --format nf4,q2_0,q2_0g64 --dtype bf16,f32 --m 1 --graph \
  > "$O/ab-onecta.txt" 2> "$O/ab-onecta-log.txt"
OUT=$O/ab2 timeout 40 bash "$here/gpu-ab.sh" qgemv-cuda-HEAD.so.xz --shape 1024x4096 --format nf4 --dtype bf16 \
  --m 8 --graph >> "$O/ab-onecta.txt" 2>> "$O/ab-onecta-log.txt"
step ab-onecta; cat "$O/ab-onecta.txt"
# Last, NF4 f32 x batched at qgc_wave_fit's k-split of 2 (v25: 18944 x
# 3584 m = 8 1.07x, m = 16 1.08x slower than at 4): which per-call warps
# and tiles at that k-split (the bits stay), with the old k-split beside.
SWEEP_DEADLINE=$((520 - SECONDS)) SWEEP_BENCH_ARGS=--graph OUT=$O/sweep timeout $((560 - SECONDS)) \
  bash "$here/plan-sweep.sh" nf4f32ks2 > "$O/sweep-log.txt" 2>&1
step sweep; cat "$O/sweep/summary.txt"
