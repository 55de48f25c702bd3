#!/bin/bash
# v14 run 1 (issue 13): two prepared changes against the pack's module
# (73441df + the QGC_EXP_NF4_PF switch, off).
# SSQ (-DQGC_EXP_SSQ_LOOP=1, v13): the fused RMSNorm's per-slice sums of
# squares in the chunk loop, off the staging's critical path. Predicted:
# 0.3-1 us off the norm at 28672 x 8192 (NF4 bf16 norm 1.054x -> ~1.04x).
# NF4PF1 / NF4PF2 (-DQGC_EXP_NF4_PF=1 / 2): NF4's next block's code words
# (and B words) loaded one block ahead, so a block's table lookups need not
# wait for a shared load of its word. Predicted: a few % at m = 1 if the
# chain word -> table -> mma is exposed at 14 warps; nothing if the
# shared-memory pipe's queue holds NF4 (v13).
# First the quick suite with each module, then the A/B tables.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/results/v14/h200-run1.sh /tmp/mods/qgemv-cuda-{SSQ,NF4PF1,NF4PF2}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
mkdir -p "$O"
t0=$SECONDS
for mod in SSQ NF4PF1 NF4PF2; do
  mkdir -p "$O/$mod"
  xz -dc "$here/qgemv-cuda-$mod.so.xz" > "$O/$mod/qgemv-cuda.so"
  QGEMV_PLUGIN_PATH=$O/$mod QGEMV_TEST_QUICK=1 CK_FORK=no timeout 100 "$here/test_cuda_backend" > "$O/suite-$mod.txt" 2>&1
  echo "suite $mod rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|Failure|Error:" "$O/suite-$mod.txt" | head -5
done

AB_DEADLINE=120 OUT=$O/ab-nf4 timeout 240 bash "$here/gpu-ab.sh" qgemv-cuda-NF4PF1.so.xz qgemv-cuda-NF4PF2.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format nf4 --dtype bf16,f32 --m 1,8 \
  > "$O/ab-nf4.txt" 2> "$O/ab-nf4-log.txt"
echo "ab nf4 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-nf4.txt"

AB_DEADLINE=120 OUT=$O/ab-norm timeout 240 bash "$here/gpu-ab.sh" qgemv-cuda-SSQ.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --format all --dtype bf16,f32 --m 1,8 --rmsnorm \
  > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"

AB_PASSES=1 OUT=$O/ab-plain timeout 120 bash "$here/gpu-ab.sh" qgemv-cuda-SSQ.so.xz \
  --shape 28672x8192 --shape 8192x28672 --format all --dtype bf16,f32 --m 1 \
  > "$O/ab-plain.txt" 2> "$O/ab-plain-log.txt"
echo "ab plain rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-plain.txt"
# SASS of the pack's module (no cuobjdump on the development machine), to
# read the hot loops between runs
cuob=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
"$cuob" -sass "$QGEMV_PLUGIN_PATH/qgemv-cuda.so" 2> "$O/sass-err.txt" | xz -T4 > "$OUT/pack-module.sass.xz"
ls -la "$OUT/pack-module.sass.xz"; head -3 "$O/sass-err.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1 --exclude='*.so'
echo "end ($((SECONDS - t0)) s)"
