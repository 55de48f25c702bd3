#!/bin/bash
# v20 run 1 (issue 13): the sanitizers on the landed library (60cb934 =
# v19's d75c031 kernels), which v19 could not fit; then, in what is left
# of the call, QGC_EXP_B3G3_T2 (24 columns at two tiles per warp, f32 x:
# 16 bytes of spill on sm_90, the plan fits 8 warps) against the pack on
# the f32 rows of the shapes where 24 columns lose by waves (28672 x 8192,
# 14336 x 4096). Predicted: T2 1.0-1.1x (8 warps, the spill), so it stays
# a switch. Everything goes into $OUT/run1.tar.xz (the device tool returns
# at most 8 files a call) and the log is printed.
# Here (the tree of this script's commit, /tmp/b90 configured sm_90):
#   bench/cuda-module.sh /tmp/b90 T2 -DQGC_EXP_B3G3_T2=1; bench/cuda-module.sh /tmp/b90 base
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#     bench/gpu-pack-run.sh bench/results/v20/h200-run1.sh /tmp/mods/qgemv-cuda-T2.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
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
GPU_DEADLINE=10 OUT=$O/san timeout 560 bash "$here/gpu-pack-run.sh" sanitize > "$O/sanitize.txt" 2>&1
echo "sanitize rc=$? ($((SECONDS - t0)) s)"
grep -E "^==|SUMMARY|Checks:|passed|exit" "$O/sanitize.txt" | grep -v "Warning" | head -20
left=$((575 - SECONDS + t0))
if [ $left -gt 40 ]; then
  AB_DEADLINE=$((SECONDS + left - 30)) OUT=$O/ab-t2 timeout $left bash "$here/gpu-ab.sh" qgemv-cuda-T2.so.xz \
    --shape 28672x8192 --shape 14336x4096 --format q2_0,q2_0g64 --dtype f32 --m 8,16 > "$O/ab-t2.txt" 2> "$O/ab-t2-log.txt"
  echo "ab t2 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-t2.txt"
fi
