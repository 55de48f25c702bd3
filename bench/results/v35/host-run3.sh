#!/bin/bash
# v35 run 3 (issue 12), the host CPU, ~150 s: two questions left by run 1.
# 1. Do the 16 vCPUs pair up on 8 cores? NF4 f32 m = 8 (FMA-bound) at 8
#    threads on vCPUs 0-7, on the even ones and on the odd ones (qgemv binds
#    thread i to the i-th vCPU of its set), twice in turn. Predicted, if
#    (2i, 2i + 1) share a core: even and odd about 1.5-2x faster than 0-7.
# 2. Q2_0 g128 m = 8 at 1 thread (AMX tiles) took about 20 or about 36 ms
#    (run 1-2): four passes of one library in a row, to see the two modes.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 bench/results/v35/host-run3.sh
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/host-run3.sh
set -u
O=${OUT:-/tmp}/run3
mkdir -p "$O"
t0=$SECONDS
b() { # NAME THREADS CPUS FORMAT M [WS]
  local f=$O/$1.txt
  QGEMV_NUM_THREADS=$2 timeout 60 taskset -c "$3" qgemv bench --backend cpu --shape 28672x8192 --format "$4" \
    --dtype f32 --m "$5" --min-time 0.2 --working-set "${6:-1200M}" --no-baseline > "$f" 2>&1
  echo "$1 rc=$? ($((SECONDS - t0)) s): $(grep -E '^-' "$f" | awk '{print $5, $6}' | tr '\n' ' ') $(grep -m1 -o 'bandwidth [0-9.]* GB/s' "$f")"
}
for r in 1 2; do
  b nf4-m8-t8-0-7-r$r 8 0-7 nf4 8
  b nf4-m8-t8-even-r$r 8 0,2,4,6,8,10,12,14 nf4 8
  b nf4-m8-t8-odd-r$r 8 1,3,5,7,9,11,13,15 nf4 8
done
for r in 1 2 3 4; do
  ((SECONDS - t0 > ${RUN3_CUTOFF:-120})) && break
  b q2g128-m8-t1-r$r 1 0 q2_0 8
done
echo "end ($((SECONDS - t0)) s)"
