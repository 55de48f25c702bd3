#!/bin/bash
# v29: the quantizer's serial phase with kept residuals and a tree over the
# blocks' P shares (B) against ed64158's (recomputed terms, rescans; A).
# A, B: build directories.
exec "$(dirname "$0")/cpu-dev-ab.sh" cpu-dev-q2 "${A:-/tmp/ci-trial1}" ed64158 "${B:-/tmp/bnew}" finish \
  --shape 4096x4096 --shape 4096x14336 --shape 8192x28672 --format q2_0,q2_0g64 --dtype f32 --m 1,8
