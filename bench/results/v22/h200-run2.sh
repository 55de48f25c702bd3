#!/bin/bash
# v22 run 2 (issue 13): NF4's two fp16 terms of x in k (QGC_EXP_S2K, the
# pack's module) against their columns (qgemv-cuda-base.so.xz: e137623).
# 1. test_cuda_backend (quick) and verify with the pack's module.
# 2. gpu-ab: NF4 f32, the five shapes, m = 1, 8, 16; the norm (bf16 and
#    f32 x) at three shapes, m = 1, 8.
#    Predicted: f32 m = 8 near bf16 m = 8 (28672 x 8192: 127 -> 80-90 us),
#    m = 16 one launch (255 -> 140-160 us); m = 1 1.00-1.05x (4 mma per
#    step where 2 were); the norm's m = 1 the same small cost.
# 3. issue 12's run 6 again (the host's CPU; v21/h200host-run6.sh).
# 4. ncu of NF4 f32 m = 8 at 28672 x 8192 with the new module.
# Here: /tmp/b90 at the change (bench/cuda-module.sh /tmp/b90 S2K);
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/gpu-ab.sh bench/ncu-insn.py \
#     bench/results/v21/h200host-run6.sh bench/results/v22/h200-run2.sh /tmp/mods/qgemv-cuda-base.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O"
t0=$SECONDS
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
}
trap finish EXIT
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; tail -3 "$O/suite.txt"
timeout 60 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
echo "verify rc=$? ($((SECONDS - t0)) s)"; tail -2 "$O/verify.txt"
AB_DEADLINE=$((SECONDS + 60)) OUT=$O/ab timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-base.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 \
  --format nf4 --dtype f32 --m 1,8,16 > "$O/ab.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab.txt"
AB_DEADLINE=$((SECONDS + 40)) OUT=$O/ab-norm timeout 100 bash "$here/gpu-ab.sh" qgemv-cuda-base.so.xz \
  --shape 28672x8192 --shape 14336x4096 --shape 4096x4096 --format nf4 --dtype bf16,f32 --m 1,8 --rmsnorm \
  > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
if ((SECONDS - t0 < 420)); then
  timeout 70 bash "$here/h200host-run6.sh" > "$O/host-run6.txt" 2>&1
  echo "run6 rc=$? ($((SECONDS - t0)) s)"; cat "$O/host-run6.txt"
fi
if ((SECONDS - t0 < 470)); then
  PROFILE_CASES="nf4 f32 28672x8192 8" GPU_DEADLINE=60 OUT=$O/prof timeout 90 \
    bash "$here/gpu-pack-run.sh" profile > "$O/prof-log.txt" 2>&1
  echo "profile rc=$? ($((SECONDS - t0)) s)"; tail -12 "$O/prof-log.txt"
fi
