#!/bin/bash
# v23 (issue 12): g128 alone and after the other formats, m = 1, f32 x, 2 threads,
# with AnonHugePages sampled every second (to /tmp/cpu-dev-thp-samples.txt, kept as cpu-dev-thp-samples.txt; output
# cpu-dev-thp-runs.txt). Run on the development VM from a build in /tmp/b90.
cd /tmp/b90
( while true; do echo "$(date +%T) $(awk '/AnonHugePages/{print $2}' /proc/meminfo)"; sleep 1; done ) > /tmp/cpu-dev-thp-samples.txt &
S=$!
run() { echo "== $(date +%T) $*"; QGEMV_NUM_THREADS=2 ./tools/qgemv bench --backend cpu --shape 28672x8192 --dtype f32 --m 1 --min-time 0.5 --working-set 1200M --no-baseline "$@" 2>&1 | grep -E '^-|streaming'; }
run --format q2_0
run --format all
run --format q2_0
run --format q2_0g64,q2_0
kill $S
