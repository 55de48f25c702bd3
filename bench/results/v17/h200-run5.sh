#!/bin/bash
# v17 run 5 (issue 13): run 2's mma_rate again with normal operands (run
# 2's were small integer bit patterns, mostly zero or subnormal as bf16
# and fp16, and its peak, 0.666 HMMA m16n8k16 per SM per clock, is above
# the datasheet's dense rate: does a tensor core take such operands
# faster?). bench/lab/mma_rate.cu now puts numbers in [1, 2) in A and B.
# Here: nvcc -O3 -gencode=arch=compute_90,code=sm_90 -o /tmp/lab/mma_rate bench/lab/mma_rate.cu
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/results/v17/h200-run5.sh /tmp/lab/mma_rate
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp/out5}
mkdir -p "$O"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$O/mma-rate-normal.txt" 2>&1
timeout 60 "$here/mma_rate" >> "$O/mma-rate-normal.txt" 2>&1
echo "mma_rate rc=$?"; cat "$O/mma-rate-normal.txt"
