#!/bin/bash
# v9 run 1 (issue 13): where the instructions of the main kernels go.
# From a pack of HEAD (bench/NOTES.md v9), on the H200:
#   source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1-diag.sh
# 1. the sm_90 SASS of the module (xz), 2. ncu --set full of four launches
# at 28672x8192 with the per-SASS-instruction page (executed instructions,
# stall samples) as CSV (xz): NF4 bf16 m = 1, Q2_0 g64 bf16 m = 1 (direct),
# Q2_0 g128 bf16 m = 1 and m = 8 with x=int.
set -u
out=${OUT:-/tmp/gpu-out}
mkdir -p "$out"
cudabin=/usr/local/cuda/bin
tool() { command -v "$1" 2>/dev/null || echo "$cudabin/$1"; }
ncu=$(tool ncu)
"$ncu" --version | tail -1
"$(tool cuobjdump)" -sass -arch sm_90 "$QGEMV_PLUGIN_PATH/qgemv-cuda.so" | xz -3 > "$out/sass-sm90.txt.xz"
ls -l "$out/sass-sm90.txt.xz"
prof() { # name, plan, format, m
  local name=$1 plan=$2 fmt=$3 m=$4
  echo "== ncu $name ($fmt bf16 m=$m plan '$plan')"
  QGEMV_CUDA_PLAN=$plan timeout 120 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full \
    --import-source no -o "/tmp/rep-$name" -f \
    qgemv bench --backend cuda --shape 28672x8192 --format "$fmt" --dtype bf16 --m "$m" --iters 5 --no-baseline \
    > "$out/ncu-$name.log" 2>&1
  "$ncu" -i "/tmp/rep-$name.ncu-rep" --page details > "$out/ncu-$name.txt" 2>&1
  "$ncu" -i "/tmp/rep-$name.ncu-rep" --page source --print-source sass --csv 2> "$out/src-$name.err" |
    xz -3 > "$out/src-$name.csv.xz"
  grep -E "Duration|Executed Instructions  |Issue Slots Busy|Registers Per|Eligible Warps" "$out/ncu-$name.txt" | head -8
  ls -l "$out/src-$name.csv.xz"; head -c 300 "$out/src-$name.err"
}
prof nf4-m1 "" nf4 1
prof q2g64-m1 "" q2_0g64 1
prof q2g128int-m1 "x=int" q2_0 1
prof q2g128int-m8 "x=int" q2_0 8
# 3. NF4 lookups addressed by one PRMT (64 KB table of 32 copies at 256-byte
# entry stride; bin/qgemv-cuda-lut256.so.xz, sm_90, -DQGC_NF4_LUT256)
# against HEAD's module: its suite, then qgemv bench twice each.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p /tmp/lut256
xz -dc "$here/qgemv-cuda-lut256.so.xz" > /tmp/lut256/qgemv-cuda.so
HEADMOD=$QGEMV_PLUGIN_PATH
QGEMV_PLUGIN_PATH=/tmp/lut256 QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$out/lut256-suite.txt" 2>&1
echo "lut256 suite rc=$?"; grep -E "Checks:" "$out/lut256-suite.txt"
B=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
S="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096"
for pass in 1 2; do
  for mod in old new; do
    pp=$HEADMOD; [ $mod = new ] && pp=/tmp/lut256
    QGEMV_PLUGIN_PATH=$pp timeout 100 "${B[@]}" $S --format nf4 --dtype bf16,f32 --m 1,8,16 --csv $out/b-$mod-$pass.csv > /dev/null 2>&1
    echo "bench $mod pass $pass rc=$?"
  done
done
python3 - "$out" <<'PY'
import csv, sys
o = sys.argv[1]
def load(f):
    try: return {(r['n'], r['k'], r['format'], r['dtype'], r['m']): float(r['median_s']) * 1e6 for r in csv.DictReader(open(f)) if r['median_s']}
    except Exception as e: print(f, e); return {}
o1, n1, o2, n2 = (load("%s/b-%s-%d.csv" % (o, t, p)) for p in (1, 2) for t in ("old", "new"))
print("n k format dtype m: old (1/2)  new (1/2)  new/old")
for key in o1:
    if key in n1 and key in o2 and key in n2:
        a, b = (o1[key] + o2[key]) / 2, (n1[key] + n2[key]) / 2
        flag = "" if abs(b / a - 1) < 0.02 else "  <--"
        print("%s %s %s %s m=%s: %.1f/%.1f  %.1f/%.1f  %.3f%s" % (key + (o1[key], o2[key], n1[key], n2[key], b / a, flag)))
PY
QGEMV_PLUGIN_PATH=/tmp/lut256 prof nf4lut-m1 "" nf4 1
