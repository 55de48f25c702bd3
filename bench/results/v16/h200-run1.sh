#!/bin/bash
# v16 run 1 (issue 13). Three questions, one call:
# (1) NF4 f32 x batched measured 2-4.5% slower in v15's record than in
#     v14's: same-run A/B of a18a790's module (OLD) against the pack's
#     (HEAD's kernels) on NF4 f32 m = 1, 8, 16 at four shapes. Predicted:
#     within 1% (the v15 changes do not touch NF4's finite path; the
#     record's difference was run-to-run).
# (2) QGC_EXP_B3WARP (B per warp's three terms without the test per
#     element): quick suite with it, then A/B on Q2_0 f32 x, plain and
#     --rmsnorm, m = 1, 8, 16. Predicted: 10-30% off launches that take B
#     per warp with three terms (batched f32), nothing elsewhere.
# (3) What the integer path would give Q2_0's bf16 norm (1.16x): plain
#     bf16 Q2_0 with QGEMV_CUDA_PLAN=x=direct (the bf16 mma, as the norm's
#     three terms use) against the default (x=auto: the integer mma at
#     these shapes), and the norm. Predicted: direct 1.10-1.15x int at
#     m = 1 on 28672 x 8192 and 8192 x 28672, i.e. most of the norm's
#     excess is the mode, not the norm.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/results/v16/h200-run1.sh /tmp/mods/qgemv-cuda-{OLD,B3WARP}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
rm -rf "$O" && mkdir -p "$O/B3WARP" "$O/mode"
t0=$SECONDS
xz -dc "$here/qgemv-cuda-B3WARP.so.xz" > "$O/B3WARP/qgemv-cuda.so"
QGEMV_PLUGIN_PATH=$O/B3WARP QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite-b3warp.txt" 2>&1
echo "suite B3WARP rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite-b3warp.txt" | head -8
rm -f "$O/B3WARP/qgemv-cuda.so"

AB_DEADLINE=$((SECONDS + 130)) OUT=$O/ab-f32 timeout 300 bash "$here/gpu-ab.sh" qgemv-cuda-OLD.so.xz qgemv-cuda-B3WARP.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format nf4,q2_0g64,q2_0 --dtype f32 \
  --m 1,8,16 > "$O/ab-f32.txt" 2> "$O/ab-f32-log.txt"
echo "ab f32 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-f32.txt"
AB_DEADLINE=$((SECONDS + 70)) OUT=$O/ab-norm timeout 200 bash "$here/gpu-ab.sh" qgemv-cuda-B3WARP.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --format q2_0g64,q2_0 --dtype f32,bf16 --m 1,8,16 --rmsnorm \
  > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"

bench=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format q2_0g64,q2_0 --dtype bf16 --m 1,8,16)
for pass in 1 2; do
  for x in auto direct; do
    QGEMV_CUDA_PLAN=x=$x timeout 100 "${bench[@]}" --csv "$O/mode/$x-$pass.csv" > /dev/null 2>> "$O/mode-log.txt"
    echo "mode x=$x pass $pass rc=$? ($((SECONDS - t0)) s)"
  done
done
timeout 100 "${bench[@]}" --rmsnorm --csv "$O/mode/norm-1.csv" > /dev/null 2>> "$O/mode-log.txt"
echo "norm rc=$? ($((SECONDS - t0)) s)"
head -1 "$O/mode/auto-1.csv"
for f in "$O"/mode/*.csv; do echo "== $(basename "$f")"; cut -d, -f3-9 "$f" | tail -n +2; done > "$O/mode.txt"
cat "$O/mode.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
echo "end ($((SECONDS - t0)) s)"
