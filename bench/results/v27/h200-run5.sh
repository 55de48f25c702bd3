#!/bin/bash
# v27 run 5 (issue 13): at the milestone shape, do two tiles per warp
# beat the plan's one (Q2_0 bf16 m = 1 at 28672 x 8192 takes ks=2,t=1 in
# 28 warps, 128 CTAs of 14 row groups)? Run 4's reading: a warp of one
# tile has one dependency chain per chunk; at 7 warps per scheduler that
# should be hidden, so predicted: ks=2,t=2,w=14 (the same 14 tiles per
# CTA in half the warps) within 3% of the plan, w=16 (16 tiles, 112 CTAs)
# slower. The library's module, two passes, --graph.
# Here: the build of run 1; bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/gpu-ab.sh \
#   bench/results/v27/h200-run5.sh; there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run5; source "$here/run-common.sh"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 150)) OUT=$O/ab timeout 240 bash "$here/gpu-ab.sh" @ks=2,t=2,w=14 \
  @ks=2,t=2,w=16 @ks=2,t=1,w=28 --shape 28672x8192 --format q2_0,q2_0g64 --dtype bf16,f32 --m 1 --graph \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
