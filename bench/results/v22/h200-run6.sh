#!/bin/bash
# v22 run 6 (issue 13): test_cuda_backend (full) at 52dcdbb's module with
# test_batched_wide_plan's new cases: NF4 at 28667 x 1024, bf16 x m = 16
# and f32 x m = 8, which take two column groups at two tiles per warp in
# 14 warps (QGC_EXP_NG2T2) on the H200, against the contract and row by
# row against m = 1, bit for bit.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/results/v22/h200-run6.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run6.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp}
CK_FORK=no CK_VERBOSITY=verbose timeout 240 "$here/test_cuda_backend" > "$O/h200-run6-suite.txt" 2>&1
echo "suite rc=$?"; grep -E "wide_plan|Checks:" "$O/h200-run6-suite.txt"
