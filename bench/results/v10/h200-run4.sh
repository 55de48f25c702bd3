#!/bin/bash
# v10 run 4 (issue 13): the record of f7ab824 (sm_90 + sm_121 pack), after
# Q2_0 bf16 m = 1 against run 2's baseline s0 (sm_90; no wide default),
# three passes at 28672x8192 (the only issue-13 shape at k-split 2):
#   source .gpu/pack/env.sh; COMMIT=f7ab824 OUT=$OUT bash .gpu/pack/bin/h200-run4.sh
# $OUT: run4.tar.xz (the A/B) and rec/ (gpu-pack-run.sh check bench sanitize).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
t0=$SECONDS
OUT=/tmp/run4 AB_PASSES=3 timeout 100 bash "$here/gpu-ab.sh" qgemv-cuda-s0.so.xz \
  --shape 28672x8192 --format q2_0g64,q2_0 --dtype bf16 --m 1 2> /tmp/run4-log.txt
echo "ab rc=$? ($((SECONDS - t0)) s)"
cp /tmp/run4-log.txt "${OUT:-/tmp}/ab-log.txt"; cp /tmp/run4/ab.tar.xz "${OUT:-/tmp}/run4-ab.tar.xz" 2>/dev/null
QGEMV_BENCH_COMMIT=$COMMIT OUT=${OUT:-/tmp}/rec GPU_DEADLINE=$((470 - (SECONDS - t0))) bash "$here/gpu-pack-run.sh" check bench sanitize > /dev/null 2>&1
echo "record rc=$? ($((SECONDS - t0)) s)"
grep -E "########|Checks:|combinations|SUMMARY|passed" ${OUT:-/tmp}/rec/log.txt
