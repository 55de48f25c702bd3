#!/bin/bash
# v17 run 1 (issue 13): NOTES v16's "first in the next session's device
# time": ncu of one f32 m = 8 launch each (Q2_0 g64, NF4) beside bf16 Q2_0
# g64 m = 8 at 28672 x 8192 (what f32 x's term columns cost per
# tile-block), then the sm_80-89 ring (-DQGC_FORCE_CP_ASYNC) with the
# batched cp.async staging: the quick suite, memcheck and racecheck.
# Here: bash /tmp/mkmod.sh cpasync -DQGC_FORCE_CP_ASYNC, then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/gpu-pack-run.sh bench/ncu-insn.py bench/results/v17/h200-run1.sh \
#     /tmp/mods/qgemv-cuda-cpasync.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp/out1}
mkdir -p "$O"
t0=$SECONDS
xz -dkf "$here/qgemv-cuda-cpasync.so.xz"
PROFILE_CASES="q2_0g64 f32 28672x8192 8,nf4 f32 28672x8192 8,q2_0g64 bf16 28672x8192 8" \
  OUT=$O GPU_DEADLINE=400 timeout 560 bash "$here/gpu-pack-run.sh" profile cpasync
echo "run1 rc=$? ($((SECONDS - t0)) s)"
grep -E "Checks|ERROR SUMMARY|exit|==" "$O/log.txt" | head -30
