#!/bin/bash
# v20 run 2 (issue 13): where do the shapes of k-split 8 (4096 x 14336,
# 4096 x 4096; m = 1 at 34-36% of read, bf16 m = 8 1.5-1.8x m = 1, f32
# m = 8 2.1-4.4x) lose, and does another k-split or B mode win?
# (1) plan-sweep.sh groups ks (k-split 2-16 at every m, f32 and bf16,
# the four shapes of k-split 4 and 8) and batched_ks8 (bf16 m = 8, 16:
# B per CTA in phases, two tiles, 8 warps against the plan's B per warp).
# A shape's k-split is one for every m (the bits), so a change must win
# over m = 1, 8, 16 together. Predicted: ks=4 at 4096 x 14336 faster
# batched (B per CTA in phases fits), m = 1 within 5%.
# (2) timelines (-DQGC_EXP_TIMELINE=1) of 4096 x 14336 Q2_0 g128 bf16 m = 1
# and 8, NF4 bf16 m = 1: a launch's fixed parts against its loop.
# (3) ncu of 4096 x 14336 Q2_0 g128 bf16 m = 8 (B per warp), if time is left.
# Everything into $OUT/run2.tar.xz.
# Here (the tree of this script's commit):
#   bench/cuda-module.sh /tmp/b90 TL -DQGC_EXP_TIMELINE=1; bench/cuda-module.sh /tmp/b90 base
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/plan-sweep.sh bench/ncu-insn.py bench/lab/timeline.py \
#     bench/results/v20/h200-run2.sh /tmp/mods/qgemv-cuda-TL.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O"
t0=$SECONDS
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
}
trap finish EXIT
mkdir -p "$O/TL" && xz -dc "$here/qgemv-cuda-TL.so.xz" > "$O/TL/qgemv-cuda.so"
for c in "q2_0 bf16 1" "q2_0 bf16 8" "nf4 bf16 1"; do
  set -- $c
  QGEMV_PLUGIN_PATH=$O/TL QGEMV_CUDA_TIMELINE=$O/tl-$1-$2-m$3.bin timeout 60 qgemv bench --backend cuda \
    --shape 4096x14336 --format $1 --dtype $2 --m $3 --no-baseline --quiet > "$O/tl-$1-$2-m$3-bench.txt" 2>&1
  python3 "$here/timeline.py" "$O/tl-$1-$2-m$3.bin" > "$O/tl-$1-$2-m$3.txt" 2>&1
  rm -f "$O/tl-$1-$2-m$3.bin"
done
rm -rf "$O/TL"
echo "timeline ($((SECONDS - t0)) s)"; cat "$O"/tl-*-m?.txt
OUT=$O/sweep SWEEP_DEADLINE=$((450 - SECONDS + t0)) timeout $((520 - SECONDS + t0)) bash "$here/plan-sweep.sh" ks batched_ks8 \
  > "$O/sweep-log.txt" 2>&1
echo "sweep rc=$? ($((SECONDS - t0)) s)"; cat "$O/sweep/summary.txt"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ $((SECONDS - t0)) -lt 500 ] && [ -n "$ncu" ]; then
  timeout 60 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full -o /tmp/r2ncu -f \
    qgemv bench --backend cuda --shape 4096x14336 --format q2_0 --dtype bf16 --m 8 --iters 5 --no-baseline > "$O/ncu.txt" 2>&1
  "$ncu" -i /tmp/r2ncu.ncu-rep --page details >> "$O/ncu.txt" 2>&1
  "$ncu" -i /tmp/r2ncu.ncu-rep --page source --print-source sass --csv > /tmp/r2ncu.csv 2>/dev/null &&
    python3 "$here/ncu-insn.py" /tmp/r2ncu.csv 25 >> "$O/ncu.txt" 2>&1
  echo "ncu ($((SECONDS - t0)) s)"; grep -E "Duration|Issue Slots Busy|Registers Per|Achieved Occupancy" "$O/ncu.txt" | head
fi
