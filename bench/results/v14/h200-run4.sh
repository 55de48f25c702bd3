#!/bin/bash
# v14 run 4 (issue 13): Q2_0's three bf16 terms (f32 x; the norm, also with
# bf16 x) in a wide kernel of their own (-DQGC_EXP_WIDEB3=1: 28 warps of one
# tile at 72 registers, as the direct mode's), against the pack (1b283bc +
# the switch, off). The plan takes it where it takes the direct mode's
# wide kernel (one activation row at k-split 2, one wave: 28672 x 8192 on
# the H200; batched g64 over 3/4 of the SMs). Predicted: Q2_0 f32 x at
# 28672 x 8192 30.5 -> ~27.5 us, the norm 1.18x -> ~1.07x; g128 spills
# (148 bytes on sm_90), so probably slower there.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/results/v14/h200-run4.sh /tmp/mods/qgemv-cuda-WIDEB3.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run4
mkdir -p "$O/WIDEB3"
t0=$SECONDS
xz -dc "$here/qgemv-cuda-WIDEB3.so.xz" > "$O/WIDEB3/qgemv-cuda.so"
QGEMV_PLUGIN_PATH=$O/WIDEB3 QGEMV_TEST_QUICK=1 CK_FORK=no timeout 100 "$here/test_cuda_backend" > "$O/suite-WIDEB3.txt" 2>&1
echo "suite WIDEB3 rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|Failure|Error:" "$O/suite-WIDEB3.txt" | head -5
rm -f "$O/WIDEB3/qgemv-cuda.so"
AB_DEADLINE=60 OUT=$O/ab-f32 timeout 120 bash "$here/gpu-ab.sh" qgemv-cuda-WIDEB3.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --format q2_0g64,q2_0 --dtype f32 --m 1,8 \
  > "$O/ab-f32.txt" 2> "$O/ab-f32-log.txt"
echo "ab f32 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-f32.txt"
AB_DEADLINE=60 OUT=$O/ab-norm timeout 120 bash "$here/gpu-ab.sh" qgemv-cuda-WIDEB3.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --format q2_0g64,q2_0 --dtype bf16,f32 --m 1 --rmsnorm \
  > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run4.tar.xz" run4
echo "end ($((SECONDS - t0)) s)"
