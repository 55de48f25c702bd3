#!/bin/bash
# v22 run 4 (issue 13): the record of 52dcdbb (NF4 two column groups at two
# tiles per warp in 14 warps, QGC_EXP_NG2T2): gpu-pack-run.sh check bench
# (the suites, verify, bench.json, bench-norm.json, llama3-8b.json).
# Here: make in /tmp/b90 (configure --enable-werror --with-cuda-arch=sm_90)
# at 52dcdbb;
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/results/v22/h200-run4.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run4
mkdir -p "$O"
t0=$SECONDS
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/run4.tar.xz" run4
}
trap finish EXIT
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
QGEMV_BENCH_COMMIT=52dcdbb GPU_DEADLINE=500 OUT=$O/rec timeout 560 \
  bash "$here/gpu-pack-run.sh" check bench > "$O/rec-log.txt" 2>&1
echo "record rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|combinations|^==|rc=|exit" "$O/rec-log.txt" | head -24
grep -A12 "decode step" "$O/rec-log.txt" | head -14
