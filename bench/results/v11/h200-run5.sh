#!/bin/bash
# v11 run 5 (issue 13): the prologue's divisions made on the host (0907a53,
# sm_90 pack) against 395d0f3 (bin/qgemv-cuda-395d0f3.so.xz, sm_90 + sm_121; 8e9c91c after the message fix).
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run5
mkdir -p "$O"
t0=$SECONDS
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:" "$O/suite.txt" | head -3
OUT=$O/ab timeout 280 bash "$here/gpu-ab.sh" qgemv-cuda-395d0f3.so.xz \
  --shape 28672x8192 --shape 14336x4096 --shape 4096x4096 --format all --dtype bf16,f32 --m 1,8 \
  > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-table.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run5.tar.xz" run5
echo "end ($((SECONDS - t0)) s)"
