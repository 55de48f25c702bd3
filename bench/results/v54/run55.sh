#!/bin/bash
# v54's first call (bench/NOTES.md v54): v53's library as one module (b)
# against a0 old.so.xz (QGC_EXP_LF=0 QGC_EXP_PH0=0: the kernels before
# v52) and a1 ph0all.so.xz (QGC_EXP_PH0=2: phase 0 staged early in every
# sm_90 kernel, g128, two tiles and column groups too). Checks first
# (outhash: the same bits with each; verify; the suite's gpu case, quick),
# then the A/Bs. Packed from 3def6e6's code by v53's prepare54.sh (`git show
# 96f46fd:bench/results/v53/prepare54.sh`; it built old and noph0), then
# noph0 swapped for ph0all (CUDA_MODULE_DIR=/tmp/mods55 bash
# bench/cuda-module.sh /tmp/b90 ph0all -DQGC_EXP_PH0=2, the value added
# in 82d3bbc) and this script added. At a later commit the same modules
# against that commit's library: bash bench/pack-call.sh /tmp/b90
# bench/results/v54/run55.sh old:-DQGC_EXP_LF=0,-DQGC_EXP_PH0=0
# ph0all:-DQGC_EXP_PH0=2. There, after `source .gpu/pack/env.sh`, OUT set:
#   LEFT=540 timeout 560 bash .gpu/pack/bin/run55.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r55}; source "$here/run-common.sh"
if [ "$(left)" -gt 400 ]; then
  outhash_same old ph0all
  timeout 30 qgemv verify --backend cuda >"$O/verify.txt" 2>&1; tail -n 1 "$O/verify.txt"
  QGEMV_TEST_QUICK=1 CK_RUN_CASE=gpu timeout 120 "$here/test_cuda_backend" >"$O/suite-gpu.txt" 2>&1
  tail -n 2 "$O/suite-gpu.txt"
  step "checks"
fi
AB_MODULES=(old.so.xz ph0all.so.xz) # a0, a1; b the library
ab large 55 --shape 28672x8192 --shape 8192x28672 --format q2_0g64,q2_0 --dtype bf16,f32 --m 1 --graph
ab batched 30 --shape 28672x8192 --shape 8192x28672 --format q2_0g64,q2_0 --dtype f32 --m 8 --graph
ab norm 10 --shape 28672x8192 --shape 8192x28672 --shape 4096x4096 --format q2_0g64 --dtype bf16,f32 \
  --m 1 --graph --rmsnorm
# NF4 on the tiles at m = 1: a weight for m up to 8 (at m = 1 alone the LUT runs)
ab nf4 2 --shape 8192x28672 --format nf4 --dtype f32 --m 1,8 --graph
