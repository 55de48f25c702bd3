#!/bin/bash
# v22 run 8 (issue 13): the suites and verify with 2df09db's module (its
# plan differs from 52dcdbb's only under QGEMV_CUDA_PLAN t=2), and verify
# under QGEMV_CUDA_PLAN=t=2,b=cta (NF4's two column groups at two tiles
# per warp at verify's shapes and m = 17, against the oracle).
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#   /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/results/v22/h200-run8.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run8.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp}
GPU_DEADLINE=200 OUT=/tmp/run8 timeout 240 bash "$here/gpu-pack-run.sh" check > "$O/h200-run8-check.txt" 2>&1
echo "check rc=$?"; grep -E "Checks:|combinations|exit" "$O/h200-run8-check.txt"
QGEMV_CUDA_PLAN=t=2,b=cta timeout 90 qgemv verify --backend cuda > "$O/h200-run8-verify-t2.txt" 2>&1
echo "verify t=2 rc=$?"; tail -3 "$O/h200-run8-verify-t2.txt"
