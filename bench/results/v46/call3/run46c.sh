#!/bin/bash
# v46 call 3: racecheck of the share kernels (main + share-norm, the pack's
# module); U = 8 (a0) against U = 4 (b) with QGEMV_CUDA_LAYOUT=share at
# larger shapes; the automatic forms at the same shapes
set -u
xz -d .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so.xz
source .gpu/pack/env.sh
S=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
mkdir -p /tmp/o6
echo "== $(($(date +%s)-t0)) s: racecheck"
QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=share timeout 240 "$S" --tool racecheck --kernel-name kns=share_kernel \
  --error-exitcode 9 .gpu/pack/bin/test_cuda_backend > /tmp/o6/racecheck.txt 2>&1
echo "racecheck rc $?" | tee -a /tmp/o6/racecheck.txt
tail -n 3 /tmp/o6/racecheck.txt
shapes="--shape 2176x4096 --shape 4096x4096 --shape 14336x4096 --shape 28672x8192"
echo "== $(($(date +%s)-t0)) s: A/B share U8 (a0) vs U4 (b)"
OUT=/tmp/o7 QGEMV_CUDA_LAYOUT=share AB_PASSES=2 AB_DEADLINE=110 timeout 250 bash .gpu/pack/bin/gpu-ab.sh u8.so.xz $shapes \
  --format all --dtype f32,bf16 --m 1 --graph 2>&1 | tail -34
cp /tmp/o7/ab.tar.xz $OUT/ab-u8.tar.xz
echo "== $(($(date +%s)-t0)) s: auto"
timeout 120 qgemv bench --backend cuda $shapes --format all --dtype f32,bf16 --m 1 --graph --no-baseline --min-time 0.05 \
  --working-set 512M --json /tmp/o6/auto.json > /tmp/o6/auto.txt 2>&1
echo "auto rc $?"
grep -E '^-|streaming' /tmp/o6/auto.txt
tar cJf $OUT/c3.tar.xz -C /tmp/o6 .
echo "== $(($(date +%s)-t0)) s: done"
