#!/bin/bash
# v10 run 1 (issue 13), on the H200 from a pack of branch s20 (bclamp +
# the wide kernel) with main's module (bin/qgemv-cuda-main.so.xz):
#   source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
# 1. test_cuda_backend (quick), which now checks the wide kernel's bits;
# 2. gpu-ab.sh: main (A) against the pack (B) with the default plans (so
#    B differs from A by bclamp only: no default plan takes the wide kernel);
# 3. the wide kernel (QGEMV_CUDA_PLAN w=28,t=1) against the plan's own
#    choice, bf16 m = 1 (and NF4 m = 8) at 28672x8192 and 14336x4096, three
#    alternating passes;
# 4. ncu --set full of NF4 bf16 m = 1 at 28672x8192, plan and wide, with the
#    per-instruction summary (ncu-insn.py).
# Everything lands in $OUT/run1.tar.xz (the device tool returns 8 files).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
mkdir -p "$O"
t0=$SECONDS
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 200 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|wide" "$O/suite.txt" | head -5
OUT=$O timeout 300 bash "$here/gpu-ab.sh" qgemv-cuda-main.so.xz > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"
B=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
for pass in 1 2 3; do
  for v in plan wide; do
    plan=""; [ $v = wide ] && plan="w=28,t=1"
    QGEMV_CUDA_PLAN=$plan timeout 60 "${B[@]}" --shape 28672x8192 --shape 14336x4096 --format all --dtype bf16 --m 1 \
      --csv "$O/w-$v-$pass.csv" > /dev/null 2>> "$O/w-err.txt"
    QGEMV_CUDA_PLAN=$plan timeout 60 "${B[@]}" --shape 28672x8192 --format nf4 --dtype bf16 --m 8 \
      --csv "$O/w8-$v-$pass.csv" > /dev/null 2>> "$O/w-err.txt"
  done
done
echo "wide sweep done ($((SECONDS - t0)) s)"
python3 - "$O" <<'PY' | tee "$O/wide-table.txt"
import csv, sys
o = sys.argv[1]
def load(f):
    try: return {(r['n'], r['k'], r['format'], r['dtype'], r['m']): float(r['median_s']) * 1e6 for r in csv.DictReader(open(f)) if r['median_s']}
    except Exception as e: print(f, e); return {}
for pre in ("w", "w8"):
    runs = {v: [load("%s/%s-%s-%d.csv" % (o, pre, v, p)) for p in (1, 2, 3)] for v in ("plan", "wide")}
    for key in runs["plan"][0]:
        if all(key in r for v in runs for r in runs[v]):
            a = [r[key] for r in runs["plan"]]; b = [r[key] for r in runs["wide"]]
            print("%s %s %s %s m=%s: plan %s  wide %s  %.3f" % (key + ("/".join("%.1f" % x for x in a), "/".join("%.1f" % x for x in b), sum(b) / sum(a))))
PY
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for v in plan wide; do
  plan=""; [ $v = wide ] && plan="w=28,t=1"
  QGEMV_CUDA_PLAN=$plan timeout 100 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full \
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
        if any(s in name for s in ("l1tex__data", "lsu", "shared", "smsp__warps", "sm__inst", "duration", "l1tex__throughput", "pipe_")):
            print(name, unit, val)' > "$O/ncu-raw-$v.txt" 2>&1
  grep -E "Duration|Executed Instructions  |Issue Slots Busy|Registers Per|Eligible Warps|L1/TEX Cache Throughput|Achieved Occ" "$O/ncu-nf4-$v.txt" | head -9
  echo "ncu $v done ($((SECONDS - t0)) s)"
done
tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
echo "end ($((SECONDS - t0)) s)"
cat "$O/ab-table.txt"
