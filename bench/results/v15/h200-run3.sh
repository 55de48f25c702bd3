#!/bin/bash
# v15 run 3 (issue 13): the record at COMMIT (the three-term staging
# without its test per element where a warp's values are all finite; the
# norm's sums of squares after the staging's barrier; NF4's two fp16 terms
# of an infinite x no longer NaN; the experiments off) from its sm_90
# pack: gpu-pack-run.sh check bench sanitize.
# there: COMMIT=<sha> OUT=$OUT bash .gpu/pack/bin/h200-run3.sh (after source .gpu/pack/env.sh)
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#   /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/ncu-insn.py bench/results/v15/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf /tmp/run3
QGEMV_BENCH_COMMIT=${COMMIT:?set COMMIT} OUT=/tmp/run3 GPU_DEADLINE=420 timeout 560 bash "$here/gpu-pack-run.sh" check bench sanitize
echo "record rc=$?"
grep -E "exit|SUMMARY|Checks|verify" /tmp/run3/log.txt | head -20
tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
