#!/bin/bash
# v46 call 2: the rule's edge, the shapes, llama3-8b (the pack's module)
set -u
[ -f .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so.xz ] && xz -d .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so.xz
source .gpu/pack/env.sh
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/o5
OUT=/tmp/o5 SHARE_STEPS="between large llama" timeout 560 bash .gpu/pack/bin/share-run.sh 2>&1 | tail -75
cp /tmp/o5/share.tar.xz $OUT/run2.tar.xz
