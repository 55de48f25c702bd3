#!/bin/bash
# v28 run 1 (issue 13). NF4 at m = 1 is latency-bound at 14 warps per SM
# (28672 x 8192 bf16: 53.6 us, issue 49% busy, 0.97 eligible warps per
# scheduler, 126 registers; v27). Two tiles per warp need only 72
# registers when the launch bounds ask for 28 warps (ptxas, no spills for
# one fp16 term), but a ring of 28 warps x 2 slots x 2 tiles of 2304-byte
# chunks is 258 KB. K128W = -DQGC_EXP_NF4_KC128=1 (NF4 chunks of 128 k:
# 1152 bytes, ring 129 KB) -DQGC_EXP_NF4_WIDE_T2=1 (NF4's wide kernels
# take two tiles per warp). Predicted: ks=4,t=2,w=28 (7 row groups x 4
# slices, 14 tiles per CTA, 128 CTAs: the plan's tiles per SM with twice
# the warps) 53.6 -> 44-48 us at bf16 m = 1 (the pipe from 75% toward
# 85-90% busy, v10's floor ~42 us); K128W under its own plan within 3% of
# the library (more chunks: one more wait and copy per 128 k).
# (1) correctness of K128W on the GPU: the quick suite (its
# test_wide_kernel asks NF4 for t=1,w=28, which K128W refuses: expected to
# fail there only), verify under the plan and under ks=4,t=2,w=28;
# (2) A/B at 28672 x 8192 NF4 m = 1, 8, 16, two passes, --graph (batched
# rows must keep m = 1's k-split: under ks=4,t=2,w=28 the plan runs them
# in launches of one column group, 8 columns each; @ks=4: the library's
# batched plans at that k-split, what a k-split of 4 costs them); (3) K128W's
# plan against the library's at the other shapes, m = 1, 8; (4) ncu of
# ks=4,t=2,w=28 and of the library's plan.
# Here: bench/cuda-module.sh /tmp/b90 K128W -DQGC_EXP_NF4_KC128=1
# -DQGC_EXP_NF4_WIDE_T2=1; bench/cuda-module.sh /tmp/b90 base; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/ncu-insn.py bench/results/v28/h200-run1.sh \
#     /tmp/mods/qgemv-cuda-K128W.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run1; source "$here/run-common.sh"
kdir=/tmp/k128w; mkdir -p $kdir; xz -dc "$here/qgemv-cuda-K128W.so.xz" > $kdir/qgemv-cuda.so
QGEMV_PLUGIN_PATH=$kdir QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite-k128w.txt" 2>&1
step suite-k128w; grep -E "^[0-9]+%|:F:|:E:" "$O/suite-k128w.txt" | head -12
QGEMV_PLUGIN_PATH=$kdir timeout 30 qgemv verify --backend cuda > "$O/verify-k128w.txt" 2>&1
step verify-k128w; tail -1 "$O/verify-k128w.txt"
QGEMV_PLUGIN_PATH=$kdir QGEMV_CUDA_PLAN=ks=4,t=2,w=28 timeout 30 qgemv verify --backend cuda > "$O/verify-k128w-w28.txt" 2>&1
step verify-k128w-w28; grep -i nf4 "$O/verify-k128w-w28.txt" | head -14; tail -1 "$O/verify-k128w-w28.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 120)) OUT=$O/ab timeout 180 bash "$here/gpu-ab.sh" @ qgemv-cuda-K128W.so.xz \
  qgemv-cuda-K128W.so.xz@ks=4,t=2,w=28 @ks=4 --shape 28672x8192 --format nf4 --dtype bf16,f32 --m 1,8,16 \
  --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab-w28; cat "$O/ab.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 80)) OUT=$O/ab2 timeout 140 bash "$here/gpu-ab.sh" qgemv-cuda-K128W.so.xz \
  --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --format nf4 \
  --dtype bf16,f32 --m 1,8 --graph > "$O/ab2.txt" 2> "$O/ab2-log.txt"
step ab-plan; cat "$O/ab2.txt"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
prof() { # NAME PLUGIN_DIR PLAN
  [ $((SECONDS - t0)) -lt 430 ] && [ -n "$ncu" ] || return 0
  QGEMV_PLUGIN_PATH=$2 QGEMV_CUDA_PLAN=$3 timeout 70 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 \
    --set full -o "/tmp/$1" -f qgemv bench --backend cuda --shape 28672x8192 --format nf4 --dtype bf16 --m 1 \
    --iters 5 --no-baseline > "$O/ncu-$1.txt" 2>&1
  "$ncu" -i "/tmp/$1.ncu-rep" --page details >> "$O/ncu-$1.txt" 2>&1
  "$ncu" -i "/tmp/$1.ncu-rep" --page source --print-source sass --csv > "/tmp/$1.csv" 2>/dev/null &&
    python3 "$here/ncu-insn.py" "/tmp/$1.csv" 30 >> "$O/ncu-$1.txt" 2>&1
  echo "ncu $1 ($((SECONDS - t0)) s)"
  grep -E "Duration|Issue Slots Busy|Registers Per|Achieved Occupancy|Eligible Warps|No Eligible" "$O/ncu-$1.txt" | head -8
}
prof w28 $kdir ks=4,t=2,w=28
prof k128plan $kdir ""
