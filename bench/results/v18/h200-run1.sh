#!/bin/bash
# v18 run 1 (issue 13). (1) bench/lab/mma_rate with normal operands (v17
# run 5, not run then): the tensor pipe's peak. (2) The term modes'
# staging (NF4's fp16 terms, Q2_0's three bf16 terms: f32 x and the norm)
# with the loads ahead of their use (kernels_matvec.cuh stage_terms):
#   U2   -DQGC_EXP_STAGE_U=2: a thread's two units' loads in flight
#        together (QB = 1: NF4, Q2_0 g64), half the round trips per pass;
#   EB   -DQGC_EXP_STAGE_BAR=1: in phases, the CTA barrier that frees B
#        after the first loads, so that their latency overlaps the wait
#        for the slowest warp;
#   U2EB both; head: the module of 3de0dcb (before the split).
# v17 run 1's ncu of Q2_0 g64 f32 m = 8 (28672 x 8192): 10.9% of the
# samples wait on x's load in the staging (long scoreboard at its first
# use), 12.9% at barriers. Predicted: batched f32 and norm launches 5-15%
# faster where they stage in phases or several passes; m = 1 within 2%.
# The quick suite with U2EB first (every term mode, batched and one row).
# Then ncu of U2EB's Q2_0 g64 f32 m = 8 launch.
# Here (3de0dcb with bench/results/v18/stage-ahead.patch applied, patch -p1;
#   bench/cuda-module.sh, added later, does what /tmp/mkmod.sh did):
#   bench/cuda-module.sh /tmp/b90 U2 -DQGC_EXP_STAGE_U=2; ... EB -DQGC_EXP_STAGE_BAR=1;
#   ... U2EB -DQGC_EXP_STAGE_U=2 -DQGC_EXP_STAGE_BAR=1; bench/cuda-module.sh /tmp/b90 base
#   nvcc -O3 -gencode=arch=compute_90,code=sm_90 -o /tmp/lab/mma_rate bench/lab/mma_rate.cu
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh bench/ncu-insn.py \
#     bench/results/v18/h200-run1.sh /tmp/lab/mma_rate /tmp/mods/qgemv-cuda-{U2,EB,U2EB,head}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
rm -rf "$O"
mkdir -p "$O/U2EB"
t0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$O/mma-rate-normal.txt" 2>&1
timeout 60 "$here/mma_rate" >> "$O/mma-rate-normal.txt" 2>&1
echo "mma_rate rc=$? ($((SECONDS - t0)) s)"; cat "$O/mma-rate-normal.txt"
xz -dc "$here/qgemv-cuda-U2EB.so.xz" > "$O/U2EB/qgemv-cuda.so"
QGEMV_PLUGIN_PATH=$O/U2EB QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite-U2EB.txt" 2>&1
echo "suite U2EB rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite-U2EB.txt" | head -8
AB_DEADLINE=$((SECONDS + 170)) OUT=$O/ab timeout 330 bash "$here/gpu-ab.sh" qgemv-cuda-U2.so.xz qgemv-cuda-EB.so.xz \
  qgemv-cuda-U2EB.so.xz qgemv-cuda-head.so.xz --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 \
  --shape 4096x4096 --format all --dtype f32 --m 1,8,16 > "$O/ab-f32.txt" 2> "$O/ab-f32-log.txt"
echo "ab f32 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-f32.txt"
if [ $SECONDS -lt 420 ]; then
  AB_DEADLINE=$((SECONDS + 40)) OUT=$O/ab-norm timeout 120 bash "$here/gpu-ab.sh" qgemv-cuda-U2.so.xz qgemv-cuda-EB.so.xz \
    qgemv-cuda-U2EB.so.xz --shape 28672x8192 --shape 8192x28672 --format nf4,q2_0g64 --dtype f32,bf16 --m 1,8 --rmsnorm \
    > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
  echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
fi
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ $SECONDS -lt 480 ] && [ -n "$ncu" ]; then
  QGEMV_PLUGIN_PATH=$O/U2EB timeout 60 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full -o /tmp/r1ncu -f \
    qgemv bench --backend cuda --shape 28672x8192 --format q2_0g64 --dtype f32 --m 8 --iters 5 --no-baseline > "$O/ncu-u2eb.txt" 2>&1
  "$ncu" -i /tmp/r1ncu.ncu-rep --page details >> "$O/ncu-u2eb.txt" 2>&1
  "$ncu" -i /tmp/r1ncu.ncu-rep --page source --print-source sass --csv > /tmp/r1ncu.csv 2>/dev/null &&
    python3 "$here/ncu-insn.py" /tmp/r1ncu.csv 25 >> "$O/ncu-u2eb.txt" 2>&1
  echo "ncu ($((SECONDS - t0)) s)"; grep -E "Duration|Issue Slots Busy|Registers Per" "$O/ncu-u2eb.txt" | head
fi
rm -rf "$O/U2EB"
tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
echo "end ($((SECONDS - t0)) s)"
