#!/bin/bash
# The set-up every device run script repeats, sourced by it (the scripts
# in bench/results/vNN/, packed beside this file):
#   here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
#   RUN=run1; source "$here/run-common.sh"
# Gives O=/tmp/$RUN (made), t0 and step NAME (prints NAME, the last exit
# status and the seconds since the start), S (compute-sanitizer's path) and
# left (the seconds before ${LEFT:-540} since the start); writes $O/gpu.txt
# (the card and its clocks); at exit packs $O into ${OUT:-/tmp}/$RUN.tar.xz,
# the one file the device tool then brings back. Two steps the call
# scripts share (modules: NAME.so.xz packed beside this file):
#   outhash_same MODULE...   bench/outhash.c with the pack's module and
#                            each MODULE; says which give the same bytes
#   ab NAME KEEP ARGS...     bench/gpu-ab.sh, AB_MODULES (an array of
#                            .so.xz names) against the pack's module, two
#                            passes, none started after KEEP percent of
#                            LEFT is all that is left; keeps $O/ab-NAME.*
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
pack_bin=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
outhash_same() {
  timeout 60 "$pack_bin/outhash" cuda > "$O/outhash-lib.txt" 2>&1
  local m
  for m in "$@"; do
    mkdir -p "/tmp/$m" && xz -dc "$pack_bin/$m.so.xz" > "/tmp/$m/qgemv-cuda.so"
    QGEMV_PLUGIN_PATH=/tmp/$m timeout 60 "$pack_bin/outhash" cuda > "$O/outhash-$m.txt" 2>&1
    cmp "$O/outhash-lib.txt" "$O/outhash-$m.txt" && echo "outhash $m: the same bits"
  done
}
ab() {
  local name=$1 keep=$((${LEFT:-540} * $2 / 100))
  shift 2
  AB_PASSES=2 AB_DEADLINE=$(($(left) - keep)) timeout $(($(left) - keep + 30)) bash "$pack_bin/gpu-ab.sh" \
    "${AB_MODULES[@]}" "$@" >"$O/ab-$name.txt" 2>"$O/ab-$name.err"
  step "A/B $name: ${AB_MODULES[*]} against the library"
  cat "$O/ab-$name.txt"; mv "${OUT:-/tmp}/ab.tar.xz" "$O/ab-$name.tar.xz" 2>/dev/null
}
