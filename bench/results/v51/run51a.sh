#!/bin/bash
# v51, call 1 (bench/NOTES.md v51): do x and gamma miss in L2 when a
# launch stages them? b, the pack's module (QGC_EXP_XPF=1): x's and
# gamma's lines asked of L2 at a launch's entry, before
# griddepcontrol.wait; a1 wef.so.xz (QGC_EXP_WEF=1): the weight stream
# evict-first in L2; a0 base.so.xz, main's. Every form (tiles, LUT,
# share), m = 1, graphs, plain and with the norm. Then qgemv verify with
# the pack's module and with wef, and the suite's gpu case (quick: its
# PDL chains x(i + 1) = y(i) check that the prefetch reads nothing stale)
# with the pack's. Packed beside gpu-ab.sh, run-common.sh, base.so.xz,
# wef.so.xz and test_cuda_backend.
# There, after `source .gpu/pack/env.sh`, OUT set:
#   LEFT=420 timeout 450 bash .gpu/pack/bin/run51a.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r51a}; source "$here/run-common.sh"
shapes="--shape 28672x8192 --shape 14336x4096 --shape 4096x4096 --shape 1024x4096"
common="$shapes --format nf4,q2_0g64 --dtype bf16,f32 --m 1 --graph"
AB_PASSES=2 AB_DEADLINE=$(($(left) - 260)) timeout $(($(left) - 230)) bash "$here/gpu-ab.sh" base.so.xz wef.so.xz \
  $common >"$O/ab-plain.txt" 2>"$O/ab-plain.err"
step "A/B plain: a0 main, a1 evict-first, b prefetch"
cat "$O/ab-plain.txt"; mv "$OUT/ab.tar.xz" "$O/ab-plain.tar.xz"
AB_PASSES=2 AB_DEADLINE=$(($(left) - 100)) timeout $(($(left) - 60)) bash "$here/gpu-ab.sh" base.so.xz wef.so.xz \
  $common --rmsnorm >"$O/ab-norm.txt" 2>"$O/ab-norm.err"
step "A/B norm: a0 main, a1 evict-first, b prefetch"
cat "$O/ab-norm.txt"; mv "$OUT/ab.tar.xz" "$O/ab-norm.tar.xz"
timeout 50 qgemv verify --backend cuda >"$O/verify.txt" 2>&1
step "verify (prefetch)"
tail -n 1 "$O/verify.txt"
mkdir -p /tmp/wef && xz -dc "$here/wef.so.xz" > /tmp/wef/qgemv-cuda.so
QGEMV_PLUGIN_PATH=/tmp/wef timeout 50 qgemv verify --backend cuda >"$O/verify-wef.txt" 2>&1
step "verify (evict-first)"
tail -n 1 "$O/verify-wef.txt"
QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=gpu timeout $(($(left) > 20 ? $(left) - 10 : 10)) "$here/test_cuda_backend" >"$O/test-gpu.txt" 2>&1
step "test_cuda_backend, case gpu (quick, prefetch)"
grep -E 'Checks|Failures|:F:|:E:' "$O/test-gpu.txt" | head -20
