#!/bin/bash
# v13 run 3 (issue 13): the record at COMMIT (default 3fa3320: Q2_0's
# decode by one packed add; the experiments off) from its sm_90 pack:
# gpu-pack-run.sh check bench sanitize.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#   /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/ncu-insn.py bench/results/v13/h200-run3.sh
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QGEMV_BENCH_COMMIT=${COMMIT:-3fa3320} OUT=/tmp/run3 GPU_DEADLINE=420 timeout 560 bash "$here/gpu-pack-run.sh" check bench sanitize
echo "record rc=$?"
grep -E "exit|SUMMARY|Checks|verify" /tmp/run3/log.txt | head -20
tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
