#!/bin/bash
# The next session's first call (bench/NOTES.md v53): v53's library as one
# module. a0 old.so.xz (no loads first, no phase 0 early: the kernels
# before v52), a1 noph0.so.xz (v53's loads-first bound alone), b the
# library (the bound and phase 0 early). Checks first (outhash: the same
# bits with each; verify; the suite's gpu case, quick), then the A/Bs where
# v52 and v53 measured the pieces. Packed by prepare54.sh. There, after
# `source .gpu/pack/env.sh`, OUT set:
#   LEFT=540 timeout 560 bash .gpu/pack/bin/run54.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r54}; source "$here/run-common.sh"
outhash_same old noph0
timeout 30 qgemv verify --backend cuda >"$O/verify.txt" 2>&1; tail -n 1 "$O/verify.txt"
QGEMV_TEST_QUICK=1 CK_RUN_CASE=gpu timeout 120 "$here/test_cuda_backend" >"$O/suite-gpu.txt" 2>&1
tail -n 2 "$O/suite-gpu.txt"
step "checks"
AB_MODULES=(old.so.xz noph0.so.xz) # a0, a1; b the library
ab large 55 --shape 28672x8192 --shape 8192x28672 --format q2_0g64 --dtype bf16,f32 --m 1 --graph
ab norm 35 --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format q2_0g64 --dtype bf16,f32 \
  --m 1 --graph --rmsnorm
ab batched 12 --shape 28672x8192 --shape 8192x28672 --shape 4096x14336 --format q2_0g64 --dtype f32 --m 8 --graph
# NF4 on the tiles at m = 1: a weight for m up to 8 (at m = 1 alone the LUT runs)
ab nf4 3 --shape 8192x28672 --format nf4 --dtype f32 --m 1,8 --graph
