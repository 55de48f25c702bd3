#!/bin/bash
# v19 run 2 (issue 13). Run 1's ncu of the NG 3 launch: 49% of its shared
# wavefronts were excess. The staged B buffer keeps a column's 128 bytes
# in bank order, so the lanes of one t in columns g and g + 1 hit the same
# four banks: every B load (two LDS.128 per lane, block and column group)
# took twice its wavefronts. Now odd columns keep their two 16-byte halves
# swapped (sb_half, QGC_EXP_SBSWZ), and the plan takes NG 3 only where
# run 1 measured it faster. The pack's module (both) against
#   OLD  -DQGC_EXP_B3G3=0 -DQGC_EXP_SBSWZ=0: v18's library
#   SW0  -DQGC_EXP_SBSWZ=0: this plan, B in bank order
# over the issue's default set (5 shapes, every format, bf16 and f32,
# m = 1, 8, 16), then the norm's rows. Predicted: batched rows (B per
# CTA, 8-24 columns) 3-10% faster than SW0 (run 1's NOB, B's loads for
# one block of each chunk only, was 0.68-0.95 of the time), m = 1 within
# 2% (one to three columns: the lanes mostly share addresses). First the
# quick suite and verify with the pack's module (every staging path reads
# the new layout); compute-sanitizer last if time is left.
# Here (the tree of this script's commit):
#   for v in "OLD -DQGC_EXP_B3G3=0 -DQGC_EXP_SBSWZ=0" "SW0 -DQGC_EXP_SBSWZ=0" base; do
#     bench/cuda-module.sh /tmp/b90 $v; done
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#     bench/gpu-pack-run.sh bench/results/v19/h200-run2.sh /tmp/mods/qgemv-cuda-{OLD,SW0}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
rm -rf "$O"
mkdir -p "$O"
t0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite.txt" | head -8
timeout 60 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
echo "verify rc=$? ($((SECONDS - t0)) s)"; tail -2 "$O/verify.txt"
AB_DEADLINE=$((SECONDS + 200)) OUT=$O/ab timeout 330 bash "$here/gpu-ab.sh" qgemv-cuda-OLD.so.xz qgemv-cuda-SW0.so.xz \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab.txt"
if [ $SECONDS -lt 420 ]; then
  AB_DEADLINE=$((SECONDS + 40)) OUT=$O/ab-norm timeout 120 bash "$here/gpu-ab.sh" qgemv-cuda-OLD.so.xz \
    --shape 28672x8192 --shape 8192x28672 --format all --dtype f32,bf16 --m 1,8 --rmsnorm \
    > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
  echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
fi
if [ $SECONDS -lt 480 ]; then
  GPU_DEADLINE=100 OUT=$O/san timeout 110 bash "$here/gpu-pack-run.sh" sanitize > "$O/sanitize.txt" 2>&1
  echo "sanitize rc=$? ($((SECONDS - t0)) s)"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:|==" "$O/san/log.txt" | head
fi
tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
echo "end ($((SECONDS - t0)) s)"
