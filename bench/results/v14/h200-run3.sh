#!/bin/bash
# v14 run 3 (issue 13): the record at COMMIT (NF4's code words one block
# ahead, Q2_0 direct's B address by one IMAD; the experiments off) from its
# sm_90 pack: gpu-pack-run.sh check bench sanitize.
# there: COMMIT=<sha> OUT=$OUT bash .gpu/pack/bin/h200-run3.sh (after source .gpu/pack/env.sh)
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#   /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/ncu-insn.py bench/results/v14/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QGEMV_BENCH_COMMIT=${COMMIT:?set COMMIT} OUT=/tmp/run3 GPU_DEADLINE=420 timeout 560 bash "$here/gpu-pack-run.sh" check bench sanitize
echo "record rc=$?"
grep -E "exit|SUMMARY|Checks|verify" /tmp/run3/log.txt | head -20
tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
