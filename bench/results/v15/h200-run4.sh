#!/bin/bash
# v15 run 4 (issue 13): the record at COMMIT (the three-term staging
# without its test per element where a warp's values are all finite; the
# norm's sums of squares after the staging's barrier; NF4's two fp16 terms
# of an infinite x no longer NaN, its table's hi toward zero; the
# experiments off) from its sm_90 pack: gpu-pack-run.sh check bench (run 3,
# at 9b2aef8, ran sanitize too: memcheck 0 errors, racecheck 0 errors; the
# kernels' code is the same since, only the table's values changed).
# there: COMMIT=<sha> OUT=$OUT bash .gpu/pack/bin/h200-run4.sh (after source .gpu/pack/env.sh)
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#   /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/ncu-insn.py bench/results/v15/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf /tmp/run4
QGEMV_BENCH_COMMIT=${COMMIT:?set COMMIT} OUT=/tmp/run4 GPU_DEADLINE=300 timeout 400 bash "$here/gpu-pack-run.sh" check bench
echo "record rc=$?"
grep -E "exit|SUMMARY|Checks|verify" /tmp/run4/log.txt | head -20
tar -C /tmp -cJf "${OUT:-/tmp}/run4.tar.xz" run4
