#!/bin/bash
# v11 run 4 (issue 13): the record at COMMIT (default 395d0f3) from its
# pack (sm_90 + sm_121): gpu-pack-run.sh bench sanitize (run 3 ran check).
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QGEMV_BENCH_COMMIT=${COMMIT:-395d0f3} OUT=/tmp/run4 GPU_DEADLINE=300 timeout 560 bash "$here/gpu-pack-run.sh" bench sanitize
echo "record rc=$?"
grep -E "exit|SUMMARY" /tmp/run4/log.txt
tar -C /tmp -cJf "${OUT:-/tmp}/run4.tar.xz" run4
