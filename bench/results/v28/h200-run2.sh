#!/bin/bash
# v28 run 2 (issue 13). Run 1: NF4 at 28 warps of two tiles
# (ks=4,t=2,w=28, 72 registers) took the issue slots from 48% to 55% busy
# and the eligible warps from 1.0 to 1.9 per scheduler, but 55.8 against
# the library's 53.8 us (bf16 m = 1): it executes 19% more instructions
# (30.8 M against 26.0 M: the 128-k chunks +8.5%, twice the warps'
# prologues and the 4-slice combine the rest), and the L1/TEX pipe stays
# at 77% busy in all three launches (MIO stalls 19% at 28 warps). So NF4
# is held by its shared loads (21 per 16 x 64 tile-block), and the
# candidates cut those or the instructions around them:
# - SP (-DQGC_EXP_SCALE_PAIR=1): a chunk's scales as [block][g][g, g+8],
#   both rows' scales of a block in one load (NF4 21 -> 20 shared loads
#   per tile-block; Q2_0 one LDS.U16 fewer per tile-block). Predicted NF4
#   m = 1 2-4% faster, Q2_0 1-2%, every format and shape.
# - (PS1, -DQGC_EXP_NF4PS1=1, 1/8 of the lookups from registers (PRMT),
#   alone: not carried, the device tool takes 64 MiB.)
# - W2S1 (-DQGC_EXP_NF4_WIDE_T2=1 -DQGC_EXP_STAGES=1): the 28 warps with
#   256-k chunks and one ring slot per warp (129 KB): no chunk overhead,
#   each warp waits for its next chunk, 27 others run. Predicted 50-54 us.
# - K128WPS1: run 1's K128W with PS1 at 28 warps (the ALU latency of the
#   PRMT chains hidden by 7 warps per scheduler).
# Also the suite on SP (it moves every layout's scales) and verify of
# W2S1 under ks=4,t=2,w=28 (NF4 rows), and ncu of W2S1's w28 and SP.
# Here: bench/cuda-module.sh /tmp/b90 SP -DQGC_EXP_SCALE_PAIR=1; ... W2S1
# -DQGC_EXP_NF4_WIDE_T2=1 -DQGC_EXP_STAGES=1; ... PS1 -DQGC_EXP_NF4PS1=1;
# ... K128WPS1 -DQGC_EXP_NF4_KC128=1 -DQGC_EXP_NF4_WIDE_T2=1
# -DQGC_EXP_NF4PS1=1; ... base; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/ncu-insn.py bench/results/v28/h200-run2.sh \
#     /tmp/mods/qgemv-cuda-{SP,W2S1,K128WPS1}.so.xz (the carry holds three)
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run2; source "$here/run-common.sh"
unpack() { mkdir -p "/tmp/m-$1"; xz -dc "$here/qgemv-cuda-$1.so.xz" > "/tmp/m-$1/qgemv-cuda.so"; }
unpack SP; unpack W2S1
QGEMV_PLUGIN_PATH=/tmp/m-SP QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite-sp.txt" 2>&1
step suite-sp; grep -E "^[0-9]+%|:F:|:E:" "$O/suite-sp.txt" | head -8
QGEMV_PLUGIN_PATH=/tmp/m-SP timeout 30 qgemv verify --backend cuda > "$O/verify-sp.txt" 2>&1
step verify-sp; tail -1 "$O/verify-sp.txt"
QGEMV_PLUGIN_PATH=/tmp/m-W2S1 QGEMV_CUDA_PLAN=ks=4,t=2,w=28 timeout 30 qgemv verify --backend cuda \
  > "$O/verify-w2s1-w28.txt" 2>&1
step verify-w2s1-w28; grep -c "NF4.*pass" "$O/verify-w2s1-w28.txt"
AB_PASSES=3 AB_DEADLINE=$((SECONDS + 100)) OUT=$O/ab timeout 160 bash "$here/gpu-ab.sh" @ qgemv-cuda-SP.so.xz \
  qgemv-cuda-W2S1.so.xz@ks=4,t=2,w=28 qgemv-cuda-K128WPS1.so.xz@ks=4,t=2,w=28 \
  --shape 28672x8192 --format nf4 --dtype bf16,f32 --m 1 \
  --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab-nf4; cat "$O/ab.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 120)) OUT=$O/ab2 timeout 190 bash "$here/gpu-ab.sh" qgemv-cuda-SP.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --format all \
  --dtype bf16,f32 --m 1,8 --graph > "$O/ab2.txt" 2> "$O/ab2-log.txt"
step ab-sp; cat "$O/ab2.txt"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
prof() { # NAME PLUGIN_DIR PLAN
  [ $((SECONDS - t0)) -lt 440 ] && [ -n "$ncu" ] || return 0
  QGEMV_PLUGIN_PATH=$2 QGEMV_CUDA_PLAN=$3 timeout 70 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 \
    --set full -o "/tmp/$1" -f qgemv bench --backend cuda --shape 28672x8192 --format nf4 --dtype bf16 --m 1 \
    --iters 5 --no-baseline > "$O/ncu-$1.txt" 2>&1
  "$ncu" -i "/tmp/$1.ncu-rep" --page details >> "$O/ncu-$1.txt" 2>&1
  "$ncu" -i "/tmp/$1.ncu-rep" --page source --print-source sass --csv > "/tmp/$1.csv" 2>/dev/null &&
    python3 "$here/ncu-insn.py" "/tmp/$1.csv" 30 >> "$O/ncu-$1.txt" 2>&1
  echo "ncu $1 ($((SECONDS - t0)) s)"
  grep -E "Duration|Issue Slots Busy|L1/TEX Cache Throughput|Eligible Warps|warp instructions executed" "$O/ncu-$1.txt" | head -6
}
prof w2s1 /tmp/m-W2S1 ks=4,t=2,w=28
prof sp /tmp/m-SP ""
