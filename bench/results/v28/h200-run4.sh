#!/bin/bash
# v28 run 4 (issue 13): PP = -DQGC_EXP_P_PAIR=1 (sbP's rows padded to an
# even count of columns; NF4 reads the 2^e of its two output columns in
# one LDS.64 where two LDS.32 took it, the second dead at m = 1 but
# issued: 20 -> 19.5 shared loads per tile-block). Predicted NF4 m = 1
# 1-2.5% faster if a predicated-off LDS costs the L1 pipe a request, else
# nothing. verify on PP, then PP against the library (01218cf's kernels,
# SP on) at 28672 x 8192 and 8192 x 28672, NF4, bf16 and f32, m = 1 and
# 8, three passes, --graph. (Only a measurement: the suite and the
# sanitizers have not run on PP; the switch stays off.)
# Here: bench/cuda-module.sh /tmp/b90 PP -DQGC_EXP_P_PAIR=1; ... base; then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/gpu-ab.sh \
#     bench/results/v28/h200-run4.sh /tmp/mods/qgemv-cuda-PP.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run4; source "$here/run-common.sh"
mkdir -p /tmp/m-PP; xz -dc "$here/qgemv-cuda-PP.so.xz" > /tmp/m-PP/qgemv-cuda.so
QGEMV_PLUGIN_PATH=/tmp/m-PP timeout 30 qgemv verify --backend cuda > "$O/verify-pp.txt" 2>&1
step verify-pp; tail -1 "$O/verify-pp.txt"
AB_PASSES=3 AB_DEADLINE=$((SECONDS + 110)) OUT=$O/ab timeout 170 bash "$here/gpu-ab.sh" qgemv-cuda-PP.so.xz \
  --shape 28672x8192 --shape 8192x28672 --format nf4 --dtype bf16,f32 --m 1,8 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab-pp; cat "$O/ab.txt"
