#!/bin/bash
# v29: the activation quantizer's term 0 spread over the threads (B)
# against the quantizer serial before the kernels (A), both with the
# one-digit further terms. A, B: build directories (CPU only).
exec "$(dirname "$0")/cpu-dev-ab.sh" cpu-dev-q2-xfix "${A:-/tmp/bfused}" serial "${B:-/tmp/bnew}" par \
  --shape 4096x4096 --shape 4096x14336 --shape 8192x28672 --format q2_0,q2_0g64 --dtype f32 --m 1,8
