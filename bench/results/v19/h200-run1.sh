#!/bin/bash
# v19 run 1 (issue 13). (1) Q2_0's three bf16 terms (f32 x, the norm with
# f32 x or gamma) in three column groups (kB3, NG = 3: eight activation
# rows in 24 columns; the library's now, QGC_EXP_B3G3): the quick suite
# and qgemv verify with the pack's module, then A/B against
#   OLD      -DQGC_EXP_B3G3=0: the plan before (g64: two launches of 16
#            columns at m = 8, four at m = 16; g128: 32 columns at m = 8)
#   NOB      -DQGC_EXP_NOB=1 (v18's switch, fixed): B per CTA's words for a
#            chunk's first scale block only (y wrong): what B's shared
#            loads cost
# on the f32 rows (4 shapes, every format, m = 1, 8, 16), then OLD on the
# norm's f32 rows. Predicted: f32 m = 8 0.75-0.85x OLD's time (Q2_0 g64
# one launch instead of two; g128 24 columns instead of 32), m = 16
# 0.75-0.9x (two launches instead of four), m = 1 and NF4 unchanged.
# (2) The timeline of one f32 m = 8 launch (Q2_0 g64 and g128, 28672 x
# 8192) with a -DQGC_EXP_TIMELINE=1 module. (3) ncu --set full of the
# NG 3 launch (Q2_0 g64 f32 m = 8, 28672 x 8192) with ncu-insn.py.
# Here (the tree of this script's commit):
#   for v in "OLD -DQGC_EXP_B3G3=0" "NOB -DQGC_EXP_NOB=1" "TL -DQGC_EXP_TIMELINE=1" base; do
#     bench/cuda-module.sh /tmp/b90 $v; done
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#     bench/ncu-insn.py bench/lab/timeline.py bench/results/v19/h200-run1.sh \
#     /tmp/mods/qgemv-cuda-{OLD,NOB,TL}.so.xz
# (G3T2, -DQGC_EXP_B3G3_T2=1, and NOBDEC1 were built too but left out: the
# device tool carries at most 64 MiB with the tree)
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
rm -rf "$O"
mkdir -p "$O/TL"
t0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite.txt" | head -8
timeout 60 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
echo "verify rc=$? ($((SECONDS - t0)) s)"; tail -3 "$O/verify.txt"
AB_DEADLINE=$((SECONDS + 170)) OUT=$O/ab timeout 300 bash "$here/gpu-ab.sh" qgemv-cuda-OLD.so.xz qgemv-cuda-NOB.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 \
  --shape 4096x4096 --format all --dtype f32 --m 1,8,16 > "$O/ab-f32.txt" 2> "$O/ab-f32-log.txt"
echo "ab f32 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-f32.txt"
if [ $SECONDS -lt 400 ]; then
  AB_DEADLINE=$((SECONDS + 30)) OUT=$O/ab-norm timeout 100 bash "$here/gpu-ab.sh" qgemv-cuda-OLD.so.xz \
    --shape 28672x8192 --shape 8192x28672 --format q2_0,q2_0g64 --dtype f32 --m 1,8,16 --rmsnorm \
    > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
  echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
fi
xz -dc "$here/qgemv-cuda-TL.so.xz" > "$O/TL/qgemv-cuda.so"
for f in q2_0g64 q2_0; do
  QGEMV_PLUGIN_PATH=$O/TL QGEMV_CUDA_TIMELINE=$O/tl-$f-f32-m8.bin timeout 60 qgemv bench --backend cuda --shape 28672x8192 \
    --format $f --dtype f32 --m 8 --no-baseline --quiet > "$O/tl-$f-bench.txt" 2>&1
  python3 "$here/timeline.py" "$O/tl-$f-f32-m8.bin" > "$O/tl-$f-f32-m8.txt" 2>&1
done
echo "timeline ($((SECONDS - t0)) s)"; cat "$O"/tl-*-f32-m8.txt
rm -rf "$O/TL"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ $SECONDS -lt 500 ] && [ -n "$ncu" ]; then
  timeout 70 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full -o /tmp/r1ncu -f \
    qgemv bench --backend cuda --shape 28672x8192 --format q2_0g64 --dtype f32 --m 8 --iters 5 --no-baseline > "$O/ncu-g3.txt" 2>&1
  "$ncu" -i /tmp/r1ncu.ncu-rep --page details >> "$O/ncu-g3.txt" 2>&1
  "$ncu" -i /tmp/r1ncu.ncu-rep --page source --print-source sass --csv > /tmp/r1ncu.csv 2>/dev/null &&
    python3 "$here/ncu-insn.py" /tmp/r1ncu.csv 25 >> "$O/ncu-g3.txt" 2>&1
  echo "ncu ($((SECONDS - t0)) s)"; grep -E "Duration|Issue Slots Busy|Registers Per|Achieved Occupancy" "$O/ncu-g3.txt" | head
fi
tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
echo "end ($((SECONDS - t0)) s)"
