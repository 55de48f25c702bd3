#!/bin/bash
# The call v54 could not run, now the next session's first (bench/NOTES.md
# v54): b the library with v54's phase-0 rule (Q2_0's kernels of two tiles
# in two column groups and g128's of one tile and one group stage phase 0
# early too) against a0 lib53.so.xz (v53's library, as QGC_EXP_PH0=3: the
# rule's effect wherever it is timed), a1 s2x3.so.xz (QGC_EXP_S2X=3, v52's
# unrun plan rule: f32 x where a warp's whole stream fits its two ring
# stages issues the ring after x's first loads) and a2 lf128.so.xz
# (QGC_EXP_LF128=1: g128's x loads first, a 64-k part at a time); then the
# library under QGEMV_CUDA_PLAN w=8,phases=1 at 8192 x 28672 f32 (all of
# k's B in one phase). Checks first (outhash: the same bits; verify; the
# suite's gpu case with time to spare). Packed by
#   bash bench/pack-call.sh /tmp/b90 bench/results/v54/run56.sh lib53:-DQGC_EXP_PH0=3 \
#     s2x3:-DQGC_EXP_S2X=3 lf128:-DQGC_EXP_LF128=1
# There, after `source .gpu/pack/env.sh`, OUT set:
#   LEFT=480 timeout 500 bash .gpu/pack/bin/run56.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r56}; source "$here/run-common.sh"
# outhash against v53's library and verify always; the experiments'
# outhash and the suite's gpu case only with time to spare (call 1 ran
# the suite on v53's library)
outhash_same lib53
[ "$(left)" -gt 240 ] && outhash_same s2x3 lf128
timeout 30 qgemv verify --backend cuda >"$O/verify.txt" 2>&1; tail -n 1 "$O/verify.txt"
if [ "$(left)" -gt 400 ]; then
  QGEMV_TEST_QUICK=1 CK_RUN_CASE=gpu timeout 120 "$here/test_cuda_backend" >"$O/suite-gpu.txt" 2>&1
  tail -n 2 "$O/suite-gpu.txt"
fi
step "checks"
AB_MODULES=(lib53.so.xz s2x3.so.xz lf128.so.xz) # a0, a1, a2; b the library
# g128 at m = 1 (lf128; the rule's one-tile kernels where phased)
ab g128 60 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336 --shape 8192x28672 --format q2_0 --dtype f32 \
  --m 1 --graph
# all of k in one phase with 8 warps (132 CTAs) against the plan's 16 warps
# in 2 phases (Q2_0) and NF4's two tiles in 8 warps, 2 phases: v6's
# comparison (66.8 against 53.7 us for Q2_0 g64 then) with today's kernels
AB_MODULES=("@w=8,phases=1")
ab onephase 45 --shape 8192x28672 --format nf4,q2_0g64,q2_0 --dtype f32 --m 1 --graph
AB_MODULES=(lib53.so.xz s2x3.so.xz lf128.so.xz)
# the rule's two-tile kernels, batched
ab batched 30 --shape 28672x8192 --format q2_0g64,q2_0 --dtype f32 --m 16 --graph
ab g128norm 12 --shape 4096x4096 --shape 14336x4096 --shape 8192x28672 --format q2_0 --dtype f32,bf16 --m 1 --graph \
  --rmsnorm
# f32 x at the shapes where S2X=3's rule fires or not
ab s2x 1 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336 --format nf4,q2_0g64 --dtype f32 --m 1 --graph
