#!/bin/bash
# v22 run 3 (issue 13): NF4 in two column groups at two tiles per warp in
# CTAs of 14 warps (QGC_EXP_NG2T2, the pack's module) against one tile in
# 16 warps (qgemv-cuda-base.so.xz: e137623's plan), 28672 x 8192, the one
# H200 shape the plan moves (bf16 m = 16, f32 m = 8 and 16, the norm at
# m = 8).
# Predicted: about run 2's terms-in-k gain without its m = 1 cost (the
# same bits as m = 1): f32 m = 8 126 -> 100-110 us, bf16 m = 16 137 ->
# 115-125; m = 1 unchanged.
# Then ncu of NF4 f32 m = 8 with it.
# Here: bench/cuda-module.sh /tmp/b90 NG2T2 -DQGC_EXP_NG2T2=1 (the build's
# module), then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/gpu-pack-run.sh bench/gpu-ab.sh bench/ncu-insn.py bench/results/v22/h200-run3.sh \
#     /tmp/mods/qgemv-cuda-base.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run3
mkdir -p "$O"
t0=$SECONDS
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
}
trap finish EXIT
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; tail -3 "$O/suite.txt"
AB_PASSES=3 AB_DEADLINE=$((SECONDS + 60)) OUT=$O/ab timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-base.so.xz \
  --shape 28672x8192 --format nf4 --dtype bf16,f32 --m 1,8,16 > "$O/ab.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab.txt"
AB_DEADLINE=$((SECONDS + 30)) OUT=$O/ab-norm timeout 90 bash "$here/gpu-ab.sh" qgemv-cuda-base.so.xz \
  --shape 28672x8192 --format nf4 --dtype bf16,f32 --m 1,8,16 --rmsnorm > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
PROFILE_CASES="nf4 f32 28672x8192 8,nf4 bf16 28672x8192 16" GPU_DEADLINE=90 OUT=$O/prof timeout 150 \
  bash "$here/gpu-pack-run.sh" profile > "$O/prof-log.txt" 2>&1
echo "profile rc=$? ($((SECONDS - t0)) s)"; tail -22 "$O/prof-log.txt"
