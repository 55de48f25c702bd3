#!/bin/bash
# v29's CPU A/Bs: `qgemv bench` of two builds (build directories), in
# alternating runs, 2 threads, each run into
# OUT/PREFIX-NAME-runR.txt (R over ROUNDS, default "1 2"):
#   cpu-dev-ab.sh PREFIX DIR_A NAME_A DIR_B NAME_B [qgemv bench arguments]
# The arguments after the builds are added to --backend cpu --min-time 0.3
# --working-set 1200M --no-baseline.
set -u
[ $# -ge 5 ] || { echo "usage: cpu-dev-ab.sh PREFIX DIR_A NAME_A DIR_B NAME_B [bench args]" >&2; exit 2; }
prefix=$1 dir_a=$2 name_a=$3 dir_b=$4 name_b=$5
shift 5
for r in ${ROUNDS:-1 2}; do
  for side in a b; do
    if [ $side = a ]; then dir=$dir_a name=$name_a; else dir=$dir_b name=$name_b; fi
    QGEMV_NUM_THREADS=2 "$dir/tools/qgemv" bench --backend cpu --min-time 0.3 --working-set 1200M --no-baseline "$@" \
      > "${OUT:-.}/$prefix-$name-run$r.txt" 2>/dev/null
  done
done
