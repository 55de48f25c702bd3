#!/bin/bash
# v10 run 3 (issue 13), on the H200 from an sm_90 pack of branch s20: NF4
# loads each block's words and scales one block ahead (QGC_NF4_PREFETCH
# 2), NF4 two-column-group launches with B per CTA look up a quarter in
# registers, Q2_0 direct at k-split 2 and m = 1 takes the wide kernel.
# Other sm_90 modules: s0 (run 2's baseline: the shared table only, no
# prefetch, no wide default), P0 and P1 (this code with prefetch 0, 1):
#   source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
# 1. test_cuda_backend (quick); qgemv verify on P0 and P1;
# 2. gpu-ab.sh s0 P0 P1 (B = the pack): NF4, every issue-13 shape, bf16
#    and f32, m = 1, 8, 16; then s0 against the pack for Q2_0 bf16 m = 1;
# 3. ncu --set full of NF4 bf16 m = 1 at 28672x8192 (the pack).
# Everything lands in $OUT/run3.tar.xz.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run3
mkdir -p "$O"
t0=$SECONDS
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 200 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:" "$O/suite.txt" | head -3
for v in P0 P1; do
  mkdir -p "/tmp/mod-$v"
  xz -dc "$here/qgemv-cuda-$v.so.xz" > "/tmp/mod-$v/qgemv-cuda.so"
  QGEMV_PLUGIN_PATH=/tmp/mod-$v timeout 120 qgemv verify --backend cuda > "$O/verify-$v.txt" 2>&1
  echo "verify $v rc=$? ($((SECONDS - t0)) s)"; tail -1 "$O/verify-$v.txt"
done
OUT=$O/ab1 timeout 240 bash "$here/gpu-ab.sh" qgemv-cuda-s0.so.xz qgemv-cuda-P0.so.xz qgemv-cuda-P1.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 \
  --format nf4 --dtype bf16,f32 --m 1,8,16 > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"
OUT=$O/ab2 AB_PASSES=3 timeout 120 bash "$here/gpu-ab.sh" qgemv-cuda-s0.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 \
  --format q2_0g64,q2_0 --dtype bf16 --m 1 > "$O/ab-q2-table.txt" 2> "$O/ab-q2-log.txt"
echo "ab q2 rc=$? ($((SECONDS - t0)) s)"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 100 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full --import-source no -o /tmp/rep-p2 -f \
  qgemv bench --backend cuda --shape 28672x8192 --format nf4 --dtype bf16 --m 1 --iters 5 --no-baseline > "$O/ncu.log" 2>&1
"$ncu" -i /tmp/rep-p2.ncu-rep --page details > "$O/ncu-nf4.txt" 2>&1
"$ncu" -i /tmp/rep-p2.ncu-rep --page source --print-source sass --csv > /tmp/src-p2.csv 2>/dev/null &&
  python3 "$here/ncu-insn.py" /tmp/src-p2.csv 25 > "$O/insn-nf4.txt" 2>&1
grep -E "Duration|Executed Instructions  |Issue Slots Busy|Registers Per|L1/TEX Cache Throughput" "$O/ncu-nf4.txt" | head -6
head -16 "$O/insn-nf4.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
echo "end ($((SECONDS - t0)) s)"
cat "$O/ab-table.txt" "$O/ab-q2-table.txt"
