#!/bin/bash
# v23 run 3 (issue 13): the host's cost of one launch by path (bench/lab/
# launch_cost.cu: an empty kernel with a 320-byte parameter block, 256
# CTAs of 256 threads, 50 KB of dynamic shared memory). Run 2 found the
# library's calls queue at 4.4-5.7 us each on this host, which is the
# whole per-call time on a stream at 1024 x 4096 and 4096 x 4096.
# Predicted: a bare launch 2-3 us; if so, 2 us of each call are ours.
# Here: nvcc -O2 -std=c++17 -arch=sm_90 bench/lab/launch_cost.cu -o /tmp/launch_cost -lcuda; then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh /tmp/launch_cost /tmp/launch_gap \
#     bench/results/v23/h200-run3.sh /tmp/mods/qgemv-cuda-HEAD80.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run3; source "$here/run-common.sh"
lscpu > "$O/lscpu.txt" 2>&1; uptime > "$O/uptime.txt"
timeout 60 "$here/launch_cost" 2000 > "$O/launch-cost.txt" 2>&1
step launch_cost; cat "$O/launch-cost.txt"
mkdir -p /tmp/m80 && xz -dc "$here/qgemv-cuda-HEAD80.so.xz" > /tmp/m80/qgemv-cuda.so
QGEMV_PLUGIN_PATH=/tmp/m80 timeout 120 "$here/launch_gap" 400 7 > "$O/launch-gap.txt" 2>&1
step launch_gap; cat "$O/launch-gap.txt"
