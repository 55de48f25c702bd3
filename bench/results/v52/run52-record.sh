#!/bin/bash
# v52: the record on whatever card came (the issue card's table is
# the H200's; v49's README figure is an H100's): m = 1 at the issue's
# shapes and llama3-8b's step (bench/share-run.sh "large llama"), then m =
# 8 and 16 at the four large shapes (the batched targets), all with main's
# module (base.so.xz). From the repository root, after `source
# .gpu/pack/env.sh`, OUT set:
#   timeout 560 bash bench/results/v52/run52-record.sh
set -u
mkdir -p /tmp/base52 && xz -dc .gpu/pack/bin/base.so.xz > /tmp/base52/qgemv-cuda.so
export QGEMV_PLUGIN_PATH=/tmp/base52
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
SHARE_STEPS="large llama" timeout 300 bash bench/share-run.sh
timeout 200 qgemv bench --backend cuda --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 \
  --format all --dtype f32,bf16 --m 8,16 --graph --no-baseline --json "$OUT/batched.json" >"$OUT/batched.txt" 2>&1
echo "bench batched rc $?"
grep -E '^-|streaming' "$OUT/batched.txt"
