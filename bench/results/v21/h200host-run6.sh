#!/bin/bash
# v21 run 6 (issue 12), NOT RUN (this session's device time was spent; the next
# session's first step, about 120 s): QGEMV_CPU_BIND=none (the OS places the threads)
# against the default binding (one worker per vCPU, in order) on the
# 16-core host, 4 and 8 threads, NF4 and Q2_0 g128, f32 x, 28672 x 8192.
# Predicted from run 5: none near the best placement there (NF4 4 threads
# m = 8 13-14 ms against 18-21 bound), Q2_0 unchanged.
# Here: pack as run 2 plus this script (the build of the commit that adds
# QGEMV_CPU_BIND).
set -u
t0=$SECONDS
for c in "4 cores" "4 none" "8 none" "8 cores"; do
  set -- $c
  ((SECONDS - t0 > 90)) && break
  echo "== T=$1 QGEMV_CPU_BIND=$2"
  QGEMV_CPU_BIND=$2 QGEMV_NUM_THREADS=$1 timeout 45 qgemv bench --backend cpu --shape 28672x8192 --format nf4,q2_0 \
    --dtype f32 --m 1,8 --min-time 0.2 --working-set 2400M --no-baseline 2>&1 | grep -E "^(-|streaming)"
done
echo "end ($((SECONDS - t0)) s)"
