#!/bin/sh
# Runs the lab's measurements and writes them, with the machine, commit and
# commands, to bench/results/cpu-lab-<what>.txt. Each step waits (up to
# WAIT_MAX seconds) for the 1-minute load average to fall under LOAD_MAX,
# since the VM is shared and CPU timings move with other work.
#
#   bench/cpu-lab/run-all.sh [STEP...]     steps: uarch probe hot speed ggml
# Environment: LOAD_MAX (default 1.0), WAIT_MAX (default 1800), GGML_DRV
# (the ggml driver, ggml-drv.c; default bench/cpu-lab/ggml-drv), BUILD (the
# library's build directory, as for the GNUmakefile).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/bench/results
load_max=${LOAD_MAX:-1.0}
wait_max=${WAIT_MAX:-1800}
drv=${GGML_DRV:-$here/ggml-drv}
steps=${*:-uarch probe hot speed ggml}
make -s -C "$here" >/dev/null

. "$here/quiet.sh"

header() {
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
  echo "# commit $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet || echo ' (with uncommitted changes)')"
}

run() { # run FILE CMD...: appends the command and its output
  f=$1
  shift
  quiet >>"$f"
  echo "\$ $*" >>"$f"
  "$@" >>"$f" 2>&1 || echo "(exit $?)" >>"$f"
}

for s in $steps; do
  f=$out/cpu-lab-$s.txt
  header >"$f"
  case $s in
  uarch) run "$f" "$here/uarch" ;;
  probe)
    for t in 1 2; do for mb in 256 1024 4096; do run "$f" "$here/probe" $t $mb 9; done; done ;;
  hot)
    for fmt in q2g128 q2g64 nf4; do for m in 1 8; do
      run "$f" env QGEMV_NUM_THREADS=1 "$here/hot" $fmt 256 4096 $m $([ $m = 1 ] && echo 3000 || echo 400)
    done; done ;;
  speed)
    for shape in "28672 8192" "14336 4096" "4096 14336"; do for fmt in q2g128 q2g64 nf4; do for m in 1 8; do
      run "$f" "$here/speed" $fmt $shape $m 2 9
    done; done; done ;;
  ggml)
    [ -x "$drv" ] || { echo "no ggml driver at $drv" >>"$f"; continue; }
    for shape in "28672 8192" "14336 4096" "4096 14336"; do for m in 1 8; do
      run "$f" "$drv" iq4_nl $shape $m 2 1 1100 2
      run "$f" "$drv" q4_0 $shape $m 2 1 1100 2
      run "$f" "$drv" tq2_0 $shape $m 2 0 1100 2
      run "$f" "$drv" q2_0 $shape $m 2 0 1100 2
    done; done ;;
  *) echo "unknown step $s" >&2; exit 2 ;;
  esac
  echo "wrote $f"
done
