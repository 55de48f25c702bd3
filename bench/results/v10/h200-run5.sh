#!/bin/bash
# v10 run 5 (issue 13): HEAD (the B clamp only up to 16 columns) against
# f7ab824 (bin/qgemv-cuda-f7ab824.so.xz, the v10 record's module): the
# suite (quick), then Q2_0 f32 m = 8, 16 and bf16 m = 1 at the three
# large shapes, two passes. $OUT/ab.tar.xz and the table.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 100 "$here/test_cuda_backend" > /tmp/suite.txt 2>&1
echo "suite rc=$? ($SECONDS s)"; grep -E "Checks:" /tmp/suite.txt
timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-f7ab824.so.xz --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 \
  --format q2_0g64,q2_0 --dtype f32 --m 8,16
echo "ab rc=$? ($SECONDS s)"
