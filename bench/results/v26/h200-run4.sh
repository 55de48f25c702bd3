#!/bin/bash
# v26 run 4 (issue 13): two short calls on run 3's machine while it was
# still warm, with run 3's pack (NEW2). First `qgemv verify --backend cuda`;
# then Q2_0 bf16 x at m = 8, where NEW lost 1.04-1.17x against HEAD (run
# 2) with one tile per warp in 9 or 10 warps: the warps and tiles per warp
# at the k-split NEW takes (2 at 9216 x 4096 and 10240 x 5120, 1 at 18944
# x 3584). Output: h200-run4-q2-bf16-m8.txt. There: source .gpu/pack/env.sh; then
#   timeout 40 qgemv verify --backend cuda
#   bash h200-run4.sh
set -u
bench() {
  QGEMV_CUDA_PLAN=$2 timeout 20 qgemv bench --backend cuda --min-time 0.05 --working-set 512M --no-baseline \
    --quiet --graph --shape "$1" --format q2_0,q2_0g64 --dtype bf16 --m 8 --csv "$OUT/x.csv" > /dev/null 2>&1
  awk -F, -v p="$2" -v s="$1" 'NR > 1 { printf "%s %s %s m=%s %.2f\n", s, p, $5, $7, $9 * 1e6 }' "$OUT/x.csv"
}
for s in 9216x4096 10240x5120; do
  for p in ks=2,t=1,w=10 ks=2,w=8 ks=2,w=10 ks=2,w=12 ks=2,t=1,w=12 ks=2,t=1,w=8; do bench $s $p; done
done
for p in ks=1,t=1,w=9 ks=1,w=9 ks=1,t=1,w=12 ks=1,w=8 ks=1,t=1,w=16 ks=1,w=12; do bench 18944x3584 $p; done
