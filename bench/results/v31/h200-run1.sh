#!/bin/bash
# v31 run 1 (issue 12, the 16-core host). (1) AMX: does this VM run tile
# instructions (ggml's AMX Q4_0 at m = 8 died with SIGILL here, v21), and
# what do Q2_0's integer block sums cost on tiles against q2_vnni.c's at
# m = 1-16 (bench/cpu-lab/amx-probe.c, one thread, hot)? Predicted, if the
# tiles run: m = 8 3-4x cheaper than VNNI (the VNNI products grow with m,
# the tile product's time hardly does), m = 1 about even. (2) v30's open
# 4-thread question: bench/results/v30/h200-run3.sh, as written there.
# Here: make -C bench/cpu-lab amx-probe BUILD=/tmp/b90, then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/cpu-lab/amx-probe \
#     bench/results/v31/h200-run1.sh bench/results/v30/h200-run3.sh /tmp/libqgemv-{old,v29}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
( RUN=run1; source "$here/run-common.sh"
  lscpu > "$O/lscpu.txt"; grep -o 'amx[a-z_0-9]*' /proc/cpuinfo | sort | uniq -c > "$O/amx-flags.txt"
  uname -r > "$O/uname.txt"; cat "$O/amx-flags.txt"
  for i in 1 2; do
    taskset -c 2 "$here/amx-probe" 200 > "$O/amx-probe-$i.txt" 2>&1; step "amx-probe $i"; cat "$O/amx-probe-$i.txt"
  done )
OUT=${OUT:-/tmp} bash "$here/h200-run3.sh"
