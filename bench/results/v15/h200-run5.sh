#!/bin/bash
# v15 run 5 (issue 13): NF4's clamp of its first terms only in warps that
# hold an infinite value (stage_clamp's vote: a diff on d2c3d84, dropped
# after this run, so not in the tree), against the record's module
# (R4, d2c3d84: the clamp always, NF4 f32 x batched 2-4.5% slower than
# v14). The quick suite first (test_nonfinite_x covers the clamped path),
# then one A/B pass of NF4 f32 x. Predicted: batched NF4 f32 back to v14's
# times, the rest unchanged.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/results/v15/h200-run5.sh /tmp/mods/qgemv-cuda-R4.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run5
rm -rf "$O" && mkdir -p "$O"
t0=$SECONDS
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 80 "$here/test_cuda_backend" > "$O/suite-pack.txt" 2>&1
echo "suite pack rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite-pack.txt" | head -5
AB_PASSES=1 OUT=$O/ab timeout 45 bash "$here/gpu-ab.sh" qgemv-cuda-R4.so.xz \
  --shape 28672x8192 --shape 8192x28672 --format nf4 --dtype f32 --m 1,8 > "$O/ab.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run5.tar.xz" run5
