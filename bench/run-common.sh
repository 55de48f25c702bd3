#!/bin/bash
# The set-up every device run script repeats, sourced by it (the scripts
# in bench/results/vNN/, packed beside this file):
#   here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
#   RUN=run1; source "$here/run-common.sh"
# Gives O=/tmp/$RUN (made), t0 and step NAME (prints NAME, the last exit
# status and the seconds since the start), S (compute-sanitizer's path) and
# left (the seconds before ${LEFT:-540} since the start); writes $O/gpu.txt
# (the card and its clocks); at exit packs $O into ${OUT:-/tmp}/$RUN.tar.xz,
# the one file the device tool then brings back.
: "${RUN:?set RUN before sourcing run-common.sh}"
O=/tmp/$RUN
mkdir -p "$O"
t0=$SECONDS
step() { echo "$1 rc=$? ($((SECONDS - t0)) s)"; }
left() { echo $((${LEFT:-540} - (SECONDS - t0))); }
S=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/$RUN.tar.xz" "$RUN"
}
trap finish EXIT
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
