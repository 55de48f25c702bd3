#!/bin/bash
# v19 run 3 (issue 13): the change as it lands. Run 2 found the B swizzle
# 0.76-0.98x where a warp takes one tile and two or more column groups
# (B's loads are its loop), 1.01-1.06x where two tiles share each B load
# or one column group mostly reads one column (the extra address
# instruction); now only the former take it (sb_swizzled). The pack's
# module against OLD (-DQGC_EXP_B3G3=0 -DQGC_EXP_SBSWZ=0: v18's library)
# over the issue's default set and the norm's rows; the quick suite and
# verify first; then the record (gpu-pack-run.sh bench: bench.json,
# bench-norm.json, llama3-8b.json) if time is left. Outputs go to $OUT as
# they come (a run stopped by its limit keeps what it wrote).
# Predicted: every row 0.97-1.02x OLD but the batched rows of one tile per
# warp and 16-24 columns (f32 x Q2_0 at 8192 x 28672 and g128 m = 8, NF4
# f32 m = 8 and 16, bf16 m = 16 at 8192 x 28672): 0.7-0.97x.
# Here (the tree of this script's commit):
#   bench/cuda-module.sh /tmp/b90 OLD -DQGC_EXP_B3G3=0 -DQGC_EXP_SBSWZ=0; bench/cuda-module.sh /tmp/b90 base
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#     bench/gpu-pack-run.sh bench/results/v19/h200-run3.sh /tmp/mods/qgemv-cuda-OLD.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp/run3}
mkdir -p "$O"
t0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite.txt" | head -8
timeout 60 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
echo "verify rc=$? ($((SECONDS - t0)) s)"; tail -2 "$O/verify.txt"
AB_DEADLINE=$((SECONDS + 150)) OUT=$O/ab timeout 300 bash "$here/gpu-ab.sh" qgemv-cuda-OLD.so.xz \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab.txt"
AB_DEADLINE=$((SECONDS + 30)) OUT=$O/ab-norm timeout 100 bash "$here/gpu-ab.sh" qgemv-cuda-OLD.so.xz \
  --shape 28672x8192 --shape 8192x28672 --format all --dtype f32,bf16 --m 1,8 --rmsnorm \
  > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
if [ $SECONDS -lt 260 ]; then
  GPU_DEADLINE=60 OUT=$O/rec timeout 250 bash "$here/gpu-pack-run.sh" bench > "$O/rec.txt" 2>&1
  echo "record rc=$? ($((SECONDS - t0)) s)"; ls "$O/rec"
fi
echo "end ($((SECONDS - t0)) s)"
