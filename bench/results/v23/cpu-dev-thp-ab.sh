#!/bin/bash
# v23 (issue 12): output cpu-dev-thp-off-ab.txt. Run on the development VM from a build in /tmp/b90.
# THP on (the library's MADV_HUGEPAGE advice) against THP off for the
# process (prctl PR_SET_THP_DISABLE, inherited across exec), alternating.
cd /tmp/b90
nothp() { python3 -c 'import ctypes, os, sys; assert ctypes.CDLL(None).prctl(41, 1, 0, 0, 0) == 0; os.execv(sys.argv[1], sys.argv[1:])' "$@"; }
b=(./tools/qgemv bench --backend cpu --shape 28672x8192 --format all --dtype f32 --m 1 --min-time 0.5 --working-set 1200M --no-baseline)
for round in 1 2; do
  for mode in thp nothp; do
    echo "== round $round $mode $(date +%T)"
    if [ $mode = thp ]; then QGEMV_NUM_THREADS=2 "${b[@]}" 2>&1 | grep -E '^-|streaming'
    else QGEMV_NUM_THREADS=2 nothp "${b[@]}" 2>&1 | grep -E '^-|streaming'; fi
  done
done
