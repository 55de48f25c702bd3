#!/bin/bash
# v16 run 2 (issue 13): Q2_0's RMSNorm with bf16 x and bf16 gamma takes
# gamma into A (kDG: A = (code - 1) gamma, one packed multiply per A
# register, exact; B = x as stored, one term) where it took x gamma in
# three bf16 terms (kB3). Run 1 measured the norm at 1.16-1.17x the plain
# row at 28672 x 8192 m = 1, 1.41-1.49x at 8192 x 28672 and 4096 x 4096,
# 3.1-3.9x batched: the three-term mode, not the norm. Predicted: the norm
# bf16 near the plain direct row plus 4 multiplies per mma (+5-10% at
# m = 1), batched 2.5-3x faster; f32 rows unchanged.
# (1) gpu-ab.sh: BASE (the module before the change, 2446093's kernels)
#     against the pack's on --rmsnorm Q2_0 bf16 and f32 x, m = 1, 8, 16,
#     four shapes;
# (2) the record at COMMIT: gpu-pack-run.sh check bench sanitize (the
#     suites run kDG on the GPU: norm with bf16 gamma in test_combinations,
#     test_nonfinite_x through b=cta, phases=2, b=warp; verify).
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#   /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/ncu-insn.py bench/gpu-ab.sh \
#   bench/results/v16/h200-run2.sh /tmp/mods/qgemv-cuda-base.so.xz
# there: source .gpu/pack/env.sh; COMMIT=<sha> OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp/out2}
mkdir -p "$O"
t0=$SECONDS
AB_DEADLINE=$((SECONDS + 60)) OUT=$O/ab-norm timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-base.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format q2_0g64,q2_0 --dtype bf16,f32 \
  --m 1,8,16 --rmsnorm > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
rm -rf /tmp/run2
QGEMV_BENCH_COMMIT=${COMMIT:?set COMMIT} OUT=/tmp/run2 GPU_DEADLINE=250 timeout 400 \
  bash "$here/gpu-pack-run.sh" check bench sanitize
echo "record rc=$? ($((SECONDS - t0)) s)"
grep -E "exit|SUMMARY|Checks|verify|ERROR SUMMARY" /tmp/run2/log.txt | head -30
tar -C /tmp -cJf "$O/run2.tar.xz" run2
echo "end ($((SECONDS - t0)) s)"
