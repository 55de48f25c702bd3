#!/bin/bash
# v46 call 1: A/B of main, share-norm, share-cluster (B); ncu of B's share kernel; B's checks
set -u
xz -d .gpu/pack/root/usr/local/lib/qgemv/qgemv-cuda.so.xz
source .gpu/pack/env.sh
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
B=.gpu/pack/bin
t0=$(date +%s)
echo "== $(($(date +%s)-t0)) s: A/B norm"
mkdir -p /tmp/o1 /tmp/o2 /tmp/o3
OUT=/tmp/o1 AB_PASSES=2 timeout 150 bash $B/gpu-ab.sh main.so.xz sn.so.xz --shape 1024x4096 --shape 256x4096 --format all --dtype f32,bf16 --m 1 --rmsnorm --graph --no-baseline --min-time 0.2 --working-set 256M 2>&1 | tail -16
cp /tmp/o1/ab.tar.xz $OUT/ab-norm.tar.xz
echo "== $(($(date +%s)-t0)) s: A/B plain"
OUT=/tmp/o2 AB_PASSES=2 timeout 150 bash $B/gpu-ab.sh main.so.xz sn.so.xz --shape 1024x4096 --shape 2048x4096 --shape 1024x14336 --format all --dtype f32,bf16 --m 1 --graph --no-baseline --min-time 0.2 --working-set 256M 2>&1 | tail -22
cp /tmp/o2/ab.tar.xz $OUT/ab-plain.tar.xz
echo "== $(($(date +%s)-t0)) s: ncu"
for v in plain norm; do
  extra=; [ $v = norm ] && extra=--rmsnorm
  timeout 60 ncu --clock-control none --set full --kernel-name regex:share_kernel --launch-skip 40 --launch-count 1 \
    qgemv bench --backend cuda --shape 1024x4096 --format nf4 --dtype f32 --m 1 $extra --no-baseline --iters 100 \
    --working-set 256M > /tmp/o3/ncu-$v.txt 2>&1
  echo "ncu $v rc $?"
  grep -E "Duration|DRAM Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy|Memory Throughput" /tmp/o3/ncu-$v.txt | head -8
done
tar cJf $OUT/ncu.tar.xz -C /tmp/o3 .
echo "== $(($(date +%s)-t0)) s: checks"
mkdir -p /tmp/o4
OUT=/tmp/o4 SHARE_STEPS="check" timeout 300 bash $B/share-run.sh 2>&1 | tail -30
cp /tmp/o4/share.tar.xz $OUT/check.tar.xz
echo "== $(($(date +%s)-t0)) s: done"
