#!/bin/bash
# v11 run 1 (issue 13), on the H200 from a pack of branch nf4scales (sm_90
# only) with main's module and two variant modules of the branch:
#   bin/qgemv-cuda-main.so.xz   main (90887ec)
#   bin/qgemv-cuda-sync2.so.xz  branch, -DQGC_CHUNK_SYNC=2 (a CTA barrier every 2 chunks)
#   bin/qgemv-cuda-sync4.so.xz  branch, -DQGC_CHUNK_SYNC=4
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
# 1. test_cuda_backend (quick) on the branch;
# 2. gpu-ab: main, sync2, sync4 against the branch, NF4 m = 1 (3 passes);
# 3. gpu-ab: main against the branch, NF4 m = 8, 16 (2 passes);
# 4. ncu --set full of the branch, NF4 bf16 m = 1 28672x8192 (insn summary,
#    LSU raw metrics).
# Everything lands in $OUT/run1.tar.xz.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
mkdir -p "$O"
t0=$SECONDS
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:" "$O/suite.txt" | head -3
OUT=$O/ab1 AB_PASSES=3 timeout 200 bash "$here/gpu-ab.sh" qgemv-cuda-main.so.xz qgemv-cuda-sync2.so.xz qgemv-cuda-sync4.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format nf4 --dtype bf16,f32 --m 1 \
  > "$O/ab1-table.txt" 2> "$O/ab1-log.txt"
echo "ab1 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab1-table.txt"
OUT=$O/ab2 timeout 120 bash "$here/gpu-ab.sh" qgemv-cuda-main.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 4096x14336 --format nf4 --dtype bf16,f32 --m 8,16 \
  > "$O/ab2-table.txt" 2> "$O/ab2-log.txt"
echo "ab2 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab2-table.txt"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 110 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full --import-source no -o /tmp/rep-b -f \
  qgemv bench --backend cuda --shape 28672x8192 --format nf4 --dtype bf16 --m 1 --iters 5 --no-baseline > "$O/ncu.log" 2>&1
"$ncu" -i /tmp/rep-b.ncu-rep --page details > "$O/ncu-nf4.txt" 2>&1
"$ncu" -i /tmp/rep-b.ncu-rep --page source --print-source sass --csv > /tmp/src-b.csv 2>/dev/null &&
  python3 "$here/ncu-insn.py" /tmp/src-b.csv 30 > "$O/insn-nf4.txt" 2>&1
"$ncu" -i /tmp/rep-b.ncu-rep --page raw --csv 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
if len(rows) >= 3:
    for name, unit, val in zip(rows[0], rows[1], rows[2]):
        if any(s in name for s in ("l1tex__data", "lsu", "shared", "smsp__warps", "sm__inst", "duration", "pipe_")):
            print(name, unit, val)' > "$O/ncu-raw.txt" 2>&1
grep -E "Duration|Executed Instructions  |Registers Per|Achieved Occ" "$O/ncu-nf4.txt" | head -6
grep -E "wavefronts_mem_shared_op_ld.sum |lsu_wavefronts.avg.pct" "$O/ncu-raw.txt" | head -4
head -20 "$O/insn-nf4.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
echo "end ($((SECONDS - t0)) s)"
