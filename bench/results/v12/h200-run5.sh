#!/bin/bash
# v12 run 5 (issue 13): the record at COMMIT (default 03f57e1: the
# library's code as 7fe5bb5, the experiments off) from its sm_90 pack:
# gpu-pack-run.sh check bench sanitize.
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QGEMV_BENCH_COMMIT=${COMMIT:-03f57e1} OUT=/tmp/run5 GPU_DEADLINE=420 timeout 560 bash "$here/gpu-pack-run.sh" check bench sanitize
echo "record rc=$?"
grep -E "exit|SUMMARY|Checks|verify" /tmp/run5/log.txt | head -20
tar -C /tmp -cJf "${OUT:-/tmp}/run5.tar.xz" run5
