#!/bin/bash
# v17 run 2 (issue 13): (1) the tensor pipe's mma.sync rate on this card
# (bench/lab/mma_rate.cu: HMMA m16n8k16 per SM per clock by warps and
# chains), against which run 1's profiles put the batched launches at
# 0.11-0.17 HMMA/SM/clk; (2) WA (-DQGC_EXP_WIDE_ASYNC=1): the wide kernel's
# batched bf16 launches stage x by cp.async too (run 1: 13% of bf16 Q2_0
# g64 m = 8's samples wait at the register staging's store; ptxas reports
# 20/128 bytes of spill stores/loads in it on sm_90), the quick suite with
# it, then A/B against the pack on bf16 Q2_0.
# Here: bash /tmp/mkmod.sh WA -DQGC_EXP_WIDE_ASYNC=1; bash /tmp/mkmod.sh base;
#   nvcc -O3 -gencode=arch=compute_90,code=sm_90 -o /tmp/lab/mma_rate bench/lab/mma_rate.cu
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#     bench/results/v17/h200-run2.sh /tmp/lab/mma_rate /tmp/mods/qgemv-cuda-WA.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp/out2}
mkdir -p "$O/WA"
t0=$SECONDS
timeout 60 "$here/mma_rate" > "$O/mma-rate.txt" 2>&1
echo "mma_rate rc=$? ($((SECONDS - t0)) s)"; cat "$O/mma-rate.txt"
xz -dc "$here/qgemv-cuda-WA.so.xz" > "$O/WA/qgemv-cuda.so"
QGEMV_PLUGIN_PATH=$O/WA QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite-WA.txt" 2>&1
echo "suite WA rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite-WA.txt" | head -8
shapes=(--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096
  --format q2_0g64,q2_0 --dtype bf16 --m 1,8,16)
AB_DEADLINE=$((SECONDS + 150)) OUT=$O/ab timeout 330 bash "$here/gpu-ab.sh" "$O/WA/qgemv-cuda.so" "${shapes[@]}" \
  > "$O/ab-wa.txt" 2> "$O/ab-wa-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-wa.txt"
rm -rf "$O/WA"
