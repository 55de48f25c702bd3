#!/bin/bash
# v11 run 6 (issue 13): the staging and epilogue divisions by multiply, NF4 table from planes (ed0deec,
# sm_90 pack) against 8e9c91c (bin/qgemv-cuda-8e9c91c.so.xz, sm_90).
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run6.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run6
mkdir -p "$O"
t0=$SECONDS
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:" "$O/suite.txt" | head -3
OUT=$O/ab timeout 280 bash "$here/gpu-ab.sh" qgemv-cuda-8e9c91c.so.xz \
  --shape 28672x8192 --shape 14336x4096 --shape 4096x4096 --format all --dtype bf16,f32 --m 1,8 \
  > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-table.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run6.tar.xz" run6
echo "end ($((SECONDS - t0)) s)"
