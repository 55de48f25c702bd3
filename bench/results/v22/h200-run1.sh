#!/bin/bash
# v22 run 1: issue 12's run 6 (v21/h200host-run6.sh: the host's CPU,
# QGEMV_CPU_BIND cores against none, 4 and 8 threads) and issue 13's
# profile of f32 x batched against bf16 x (28672 x 8192, m = 8: NF4 f32,
# NF4 bf16, Q2_0 g128 f32), v21's next look.
# Predicted: f32 m = 8 spends its extra time in B's staging of two fp16
# terms (NF4) or three bf16 terms (Q2_0) and in twice the mma per lookup,
# not in the loads: DRAM throughput well under the bf16 row's.
# Here: make in /tmp/b90 (configure --enable-werror --with-cuda-arch=sm_90)
# at e137623;
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/gpu-pack-run.sh bench/ncu-insn.py \
#     bench/results/v21/h200host-run6.sh bench/results/v22/h200-run1.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
mkdir -p "$O"
t0=$SECONDS
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
}
trap finish EXIT
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
lscpu > "$O/lscpu.txt" 2>&1; uptime > "$O/uptime.txt"
timeout 150 bash "$here/h200host-run6.sh" > "$O/host-run6.txt" 2>&1
echo "run6 rc=$? ($((SECONDS - t0)) s)"; cat "$O/host-run6.txt"
PROFILE_CASES="nf4 f32 28672x8192 8,nf4 bf16 28672x8192 8,q2_0g128 f32 28672x8192 8" \
  GPU_DEADLINE=$((500 - SECONDS + t0)) OUT=$O/prof timeout $((540 - SECONDS + t0)) \
  bash "$here/gpu-pack-run.sh" profile > "$O/prof-log.txt" 2>&1
echo "profile rc=$? ($((SECONDS - t0)) s)"; tail -40 "$O/prof-log.txt"
