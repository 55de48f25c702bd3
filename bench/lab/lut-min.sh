#!/bin/bash
# lut-run.sh's first question only, for a call with little device time left:
# the lut sweep at 28672 x 8192 (NF4, Q2_0 g128, g64, LUT_MIN_S seconds a
# format, default 35) and the library beside it at that shape (qgemv bench
# --graph, f32 and bf16 x, m = 1). Outputs in $OUT: lut-min-FMT.txt, qgemv-min.txt.
#   run(command="source .gpu/pack/env.sh && bash .gpu/pack/bin/lut-min.sh", carry=[".gpu/pack"], timeout_s=170)
set -u
out=${OUT:-/tmp/lut-out}
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lut=${LUT:-$here/lut}
s=${LUT_MIN_S:-35}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
for f in nf4 q2g128 q2g64; do
  timeout $((s + 15)) "$lut" --fmts "$f" --shapes 28672x8192 --deadline "$s" > "$out/lut-min-$f.txt" 2>&1
  echo "lut $f rc $? ($SECONDS s)"
done
timeout 40 qgemv bench --backend cuda --shape 28672x8192 --format all --dtype f32,bf16 --m 1 --graph \
  --min-time 0.1 --working-set 512M --no-baseline > "$out/qgemv-min.txt" 2>&1
echo "qgemv bench rc $? ($SECONDS s)"
for f in nf4 q2g128 q2g64; do sed -n '/^best/,$p' "$out/lut-min-$f.txt"; grep -c ' pass\| FAIL' "$out/lut-min-$f.txt"; done
grep -E 'read|28672' "$out/qgemv-min.txt" | head -12
