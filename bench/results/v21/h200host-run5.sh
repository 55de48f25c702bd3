#!/bin/bash
# v21 run 5 (issue 12): why NF4 on the 16-core host scales from 2 to 4
# threads by 1.04-1.2x (run 2: m = 1 6.48 -> 5.39 ms, m = 8 19.3 -> 18.5)
# where Q2_0 gains 1.6-2x. qgemv binds thread i to core i counting from
# the caller's; if the guest's vCPUs 0-3 share physical cores (SMT
# siblings the guest cannot see), NF4's FMA-bound loop would lose. The same
# NF4 run at 4 threads restricted to vCPUs 0-3, 0,4,8,12 and 0,2,4,6.
# Here: pack as run 2 (bench/results/v21/h200-run2.sh) plus this script.
set -u
O=/tmp/run5
mkdir -p "$O"
t0=$SECONDS
trap 'echo "end ($((SECONDS - t0)) s)"; tar -C /tmp -cJf "${OUT:-/tmp}/run5.tar.xz" run5' EXIT
grep . /sys/devices/system/cpu/cpu*/topology/thread_siblings_list /sys/devices/system/cpu/cpu*/topology/core_id > "$O/topology.txt" 2>&1
for cpus in 0-3 0,4,8,12 0,2,4,6; do
  ((SECONDS - t0 > 150)) && break
  QGEMV_NUM_THREADS=4 timeout 60 taskset -c "$cpus" qgemv bench --backend cpu --shape 28672x8192 --format nf4 \
    --dtype f32 --m 1,8 --min-time 0.2 --working-set 2400M --no-baseline > "$O/nf4-t4-$cpus.txt" 2>&1
  echo "cpus $cpus rc=$? ($((SECONDS - t0)) s)"; grep -E "^(-|streaming)" "$O/nf4-t4-$cpus.txt"
done
