#!/bin/bash
# v13 run 4 (issue 13): where Q2_0's fused RMSNorm time goes (bf16 x:
# 1.16-1.20x the plain matvec, whose bf16 x takes the direct mode while
# the norm takes three bf16 terms), stamped by the CTAs (module TL13:
# -DQGC_EXP_TIMELINE=1 at 3fa3320), against the plain direct and f32
# cases; then ncu of NF4 bf16 m = 1 at 28672 x 8192 with the pack's module
# (run 2 profiled QGC_EXP_LUT256 only).
# Here: bash ../shared/gpu/pack.sh /tmp/b90 bench/ncu-insn.py bench/lab/timeline.py \
#   bench/results/v13/h200-run4.sh /tmp/mods/qgemv-cuda-TL13.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run4
mkdir -p "$O/tl" "$O/TL13"
t0=$SECONDS
xz -dc "$here/qgemv-cuda-TL13.so.xz" > "$O/TL13/qgemv-cuda.so"
bench=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
for c in "q2_0g64 bf16 plain" "q2_0g64 bf16 norm" "q2_0g64 f32 plain" "q2_0g64 f32 norm" "nf4 bf16 plain" "nf4 bf16 norm"; do
  set -- $c
  name=$1-$2-$3
  extra=(); [ "$3" = norm ] && extra=(--rmsnorm)
  QGEMV_PLUGIN_PATH=$O/TL13 QGEMV_CUDA_TIMELINE=$O/tl/$name.bin timeout 60 "${bench[@]}" --format "$1" --dtype "$2" \
    --shape 28672x8192 --m 1 "${extra[@]}" --csv "$O/tl/$name.csv" > /dev/null 2>> "$O/log.txt"
  echo "$name: rc $? $(tail -n 1 "$O/tl/$name.csv" | cut -d, -f9,14,15) ($((SECONDS - t0)) s)"
done
python3 "$here/timeline.py" "$O"/tl/*.bin > "$O/tl-summary.txt" 2>&1
cat "$O/tl-summary.txt"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 100 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full --import-source no -o /tmp/rep-nf4 -f \
  qgemv bench --backend cuda --shape 28672x8192 --format nf4 --dtype bf16 --m 1 --iters 5 --no-baseline > "$O/ncu.log" 2>&1
"$ncu" -i /tmp/rep-nf4.ncu-rep --page details > "$O/ncu-nf4.txt" 2>&1
"$ncu" -i /tmp/rep-nf4.ncu-rep --page source --print-source sass --csv > /tmp/src-nf4.csv 2>/dev/null &&
  python3 "$here/ncu-insn.py" /tmp/src-nf4.csv 30 > "$O/insn-nf4.txt" 2>&1
grep -E "Duration|Executed Instructions  |Issue Slots Busy|Registers Per|Eligible Warps|Achieved Occ|DRAM Through" "$O/ncu-nf4.txt" | head -9
head -36 "$O/insn-nf4.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run4.tar.xz" run4
echo "end ($((SECONDS - t0)) s)"
