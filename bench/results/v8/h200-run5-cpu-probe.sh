#!/bin/bash
# v8 run 5: the 16-core host's streaming read, by size (issue 12's 130 GB/s
# question: do 16 threads read more than the probe's ~112 GB/s from DRAM,
# or only from the 300 MB L3?). bench/cpu-lab/probe.c, then qgemv's own probe.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../env.sh"
lscpu | grep -E "Model name|^CPU\(s\)|L3|NUMA node\(s\)"; uptime
for mib in 4096 1024 512 256 128 64; do timeout 60 "$here/probe" 16 $mib 7; done
timeout 40 "$here/probe" 8 1024 7
QGEMV_NUM_THREADS=16 timeout 60 qgemv bench --backend cpu --shape 4096x4096 --format nf4 --dtype f32 --m 1 --min-time 0.05 --no-baseline 2>&1 | grep -iE "streaming|NF4"
uptime
