#!/bin/bash
# v13 run 2 (issue 13): two decode changes against the pack's module.
# QGC_EXP_LUT256: NF4's table entries 256 bytes apart (64 KB), one PRMT per
# lookup address instead of SHF + LOP3 (run 1: halving the table's
# wavefronts gained 3%, dropping the lookups 33%: the lookups' instructions
# cost, not their bytes). QGC_EXP_Q2ADD: Q2_0's bit pair p ORed into
# 2^(7-2p), so an add yields c - 1 (no multiplier register). First the
# quick suite with each module, then the A/B, then ncu of NF4 with LUT256.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/ncu-insn.py bench/results/v13/h200-run2.sh /tmp/mods/qgemv-cuda-{LUT256,Q2ADD}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O"
t0=$SECONDS
for mod in LUT256 Q2ADD; do
  mkdir -p "$O/$mod"
  xz -dc "$here/qgemv-cuda-$mod.so.xz" > "$O/$mod/qgemv-cuda.so"
  QGEMV_PLUGIN_PATH=$O/$mod QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite-$mod.txt" 2>&1
  echo "suite $mod rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|Failure|Error:" "$O/suite-$mod.txt" | head -5
done

AB_DEADLINE=170 OUT=$O/ab timeout 300 bash "$here/gpu-ab.sh" qgemv-cuda-LUT256.so.xz qgemv-cuda-Q2ADD.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format all --dtype bf16,f32 --m 1,8 \
  > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-table.txt"

ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
QGEMV_PLUGIN_PATH=$O/LUT256 timeout 100 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full \
  --import-source no -o /tmp/rep-lut -f \
  qgemv bench --backend cuda --shape 28672x8192 --format nf4 --dtype bf16 --m 1 --iters 5 --no-baseline \
  > "$O/ncu-lut.log" 2>&1
"$ncu" -i /tmp/rep-lut.ncu-rep --page details > "$O/ncu-nf4-lut256.txt" 2>&1
"$ncu" -i /tmp/rep-lut.ncu-rep --page source --print-source sass --csv > /tmp/src-lut.csv 2>/dev/null &&
  python3 "$here/ncu-insn.py" /tmp/src-lut.csv 30 > "$O/insn-nf4-lut256.txt" 2>&1
grep -E "Duration|Executed Instructions  |Issue Slots Busy|Registers Per|Eligible Warps|Achieved Occ|DRAM Through" "$O/ncu-nf4-lut256.txt" | head -9
head -40 "$O/insn-nf4-lut256.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
echo "end ($((SECONDS - t0)) s)"
