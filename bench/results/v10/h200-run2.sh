#!/bin/bash
# v10 run 2 (issue 13), on the H200 from an sm_90 pack of branch s20 with
# NF4's row-g+8 lookups of steps 0 and 2 in registers (QGC_NF4_PRMT_STEPS
# 0x5, a quarter of the table's lookups) and three sm_90 modules built with
# other masks: s0 (none: the shared table only, as main), s1 (step 0: an
# eighth), sF (every step: half):
#   source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
# 1. test_cuda_backend (quick) on the pack; qgemv verify on each module;
# 2. gpu-ab.sh s0 s1 sF (B = the pack, 0x5): NF4 on every issue-13 shape,
#    bf16 and f32, m = 1, 8, 16, then RMSNorm at 28672x8192;
# 3. ncu --set full of NF4 bf16 m = 1 at 28672x8192 for 0x5 and 0xF, with
#    the per-instruction summary and the LSU/ALU raw metrics.
# Everything lands in $OUT/run2.tar.xz.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O"
t0=$SECONDS
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 200 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:" "$O/suite.txt" | head -3
for v in s0 s1 sF; do
  mkdir -p "/tmp/mod-$v"
  xz -dc "$here/qgemv-cuda-$v.so.xz" > "/tmp/mod-$v/qgemv-cuda.so"
  QGEMV_PLUGIN_PATH=/tmp/mod-$v timeout 120 qgemv verify --backend cuda > "$O/verify-$v.txt" 2>&1
  echo "verify $v rc=$? ($((SECONDS - t0)) s)"; tail -2 "$O/verify-$v.txt"
done
OUT=$O/ab1 timeout 240 bash "$here/gpu-ab.sh" qgemv-cuda-s0.so.xz qgemv-cuda-s1.so.xz qgemv-cuda-sF.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 \
  --format nf4 --dtype bf16,f32 --m 1,8,16 > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"
OUT=$O/ab2 timeout 120 bash "$here/gpu-ab.sh" qgemv-cuda-s0.so.xz qgemv-cuda-s1.so.xz qgemv-cuda-sF.so.xz \
  --shape 28672x8192 --shape 4096x4096 --format nf4 --dtype bf16,f32 --m 1 --rmsnorm > "$O/ab-norm-table.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for v in s5 sF; do
  pp=$QGEMV_PLUGIN_PATH; [ $v = sF ] && pp=/tmp/mod-sF
  QGEMV_PLUGIN_PATH=$pp timeout 100 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full \
    --import-source no -o "/tmp/rep-$v" -f \
    qgemv bench --backend cuda --shape 28672x8192 --format nf4 --dtype bf16 --m 1 --iters 5 --no-baseline \
    > "$O/ncu-$v.log" 2>&1
  "$ncu" -i "/tmp/rep-$v.ncu-rep" --page details > "$O/ncu-nf4-$v.txt" 2>&1
  "$ncu" -i "/tmp/rep-$v.ncu-rep" --page source --print-source sass --csv > "/tmp/src-$v.csv" 2>/dev/null &&
    python3 "$here/ncu-insn.py" "/tmp/src-$v.csv" 25 > "$O/insn-nf4-$v.txt" 2>&1
  "$ncu" -i "/tmp/rep-$v.ncu-rep" --page raw --csv 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
if len(rows) >= 3:
    for name, unit, val in zip(rows[0], rows[1], rows[2]):
        if any(s in name for s in ("l1tex__data_pipe", "l1tex__data_bank", "pipe_alu", "pipe_fma", "issue_active", "duration", "l1tex__throughput")):
            print(name, unit, val)' > "$O/ncu-raw-$v.txt" 2>&1
  grep -E "Duration|Executed Instructions  |Issue Slots Busy|Registers Per|Eligible Warps|L1/TEX Cache Throughput" "$O/ncu-nf4-$v.txt" | head -8
  grep -E "lsu_wavefronts.avg.pct|pipe_alu_realtime.avg.pct|issue_active" "$O/ncu-raw-$v.txt" | head -5
  echo "ncu $v done ($((SECONDS - t0)) s)"
done
tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
echo "end ($((SECONDS - t0)) s)"
cat "$O/ab-table.txt" "$O/ab-norm-table.txt"
