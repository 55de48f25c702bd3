#!/bin/sh
# The issue 12 record: qgemv bench on the issue's shapes for this tree's
# build (AFTER_DIR, default the tree itself) and for a build of another
# commit (BEFORE_DIR: its build directory, e.g. main built in /tmp),
# alternating shape by shape so that both see the same machine, then the
# ggml driver (ggml-drv.c, GGML_DRV) on the same shapes.
# Each run waits (up to WAIT_MAX s) for the load average to fall under
# LOAD_MAX. Output: bench/results/cpu-issue12-{after,before}-<shape>.json
# and .txt, and cpu-issue12-ggml.txt.
#
#   AFTER_DIR=/tmp/bcpu BEFORE_DIR=/tmp/qmain BEFORE_COMMIT=a8e69ef bench/cpu-lab/record.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/bench/results
after=${AFTER_DIR:-$top}
before=${BEFORE_DIR:?BEFORE_DIR: the build of the commit to compare with}
load_max=${LOAD_MAX:-1.0}
wait_max=${WAIT_MAX:-1800}
drv=${GGML_DRV:-$here/ggml-drv}
shapes=${SHAPES:-28672x8192 14336x4096 4096x14336}

. "$here/quiet.sh"

bench() { # bench DIR COMMIT NAME SHAPE
  quiet >/dev/null
  env LD_LIBRARY_PATH="$1/.libs" QGEMV_BENCH_COMMIT="$2" "$1/tools/.libs/qgemv" bench --backend cpu --shape "$4" \
    --format all --dtype f32,bf16 --m 1,8 --min-time 0.5 --no-baseline --json "$out/cpu-issue12-$3-$4.json" \
    >"$out/cpu-issue12-$3-$4.txt" 2>&1 || echo "(exit $?)" >>"$out/cpu-issue12-$3-$4.txt"
}

after_commit=$(git -C "$top" rev-parse HEAD)
before_commit=${BEFORE_COMMIT:-unknown}
for s in $shapes; do
  bench "$after" "$after_commit" after "$s"
  bench "$before" "$before_commit" before "$s"
done

f=$out/cpu-issue12-ggml.txt
echo "# ggml $( [ -x "$drv" ] && echo "driver $drv" || echo "driver missing" ), 2 threads, weights rotated over > 1.1 GB" >"$f"
[ -x "$drv" ] || exit 0
for s in $shapes; do
  n=${s%x*}
  k=${s#*x}
  for m in 1 8; do
    for t in "iq4_nl 1" "q4_0 1" "tq2_0 0" "q2_0 0"; do
      set -- $t
      quiet >>"$f"
      "$drv" "$1" "$n" "$k" "$m" 2 "$2" 1100 2 >>"$f" 2>/dev/null || echo "(exit $?) $1 $n $k $m" >>"$f"
    done
  done
done
