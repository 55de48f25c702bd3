#!/bin/bash
# v21 run 3 (issue 13): the record of 5706c68 (one row group at KS 8 for
# m = 1, NF4 f32 batched in 8 warps at KS 4) and the rule's A/B.
# 1. gpu-pack-run.sh check bench: the suites, verify, the record (bench.json,
#    bench-norm.json, llama3-8b.json) for the README.
# 2. The NF4 rule against V21A (3695774's module): 14336 x 4096 NF4 f32
#    m = 1, 8, 16, plain and norm (the norm does not take it: control).
#    Predicted from v20 run 3's override: m = 8 0.90x, m = 16 0.93x.
# Here: make in /tmp/b90 (configure --enable-werror --with-cuda-arch=sm_90)
# at 5706c68; V21A: bench/cuda-module.sh /tmp/b90 base at 3695774, renamed;
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/gpu-ab.sh \
#     bench/results/v21/h200-run3.sh /tmp/mods/qgemv-cuda-V21A.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
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
AB_DEADLINE=$((SECONDS + 20)) OUT=$O/ab timeout 90 bash "$here/gpu-ab.sh" qgemv-cuda-V21A.so.xz \
  --shape 14336x4096 --format nf4 --dtype f32 --m 1,8,16 > "$O/ab.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab.txt"
AB_DEADLINE=$((SECONDS + 10)) OUT=$O/ab-norm timeout 60 bash "$here/gpu-ab.sh" qgemv-cuda-V21A.so.xz \
  --shape 14336x4096 --format nf4 --dtype f32 --m 8 --rmsnorm > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
QGEMV_BENCH_COMMIT=5706c68 GPU_DEADLINE=$((480 - SECONDS + t0)) OUT=$O/rec timeout $((540 - SECONDS + t0)) \
  bash "$here/gpu-pack-run.sh" check bench > "$O/rec-log.txt" 2>&1
echo "record rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|combinations|^==|rc=" "$O/rec-log.txt" | head -20
grep -A30 "decode step" "$O/rec-log.txt" | head -8
