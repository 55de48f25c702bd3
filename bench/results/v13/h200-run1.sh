#!/bin/bash
# v13 run 1 (issue 13): (1) the integer path (QGEMV_CUDA_PLAN=x=int)
# against the plan for Q2_0 bf16 at m = 1, 8, 16 after v11's prologue
# work; (2) what the decode costs: modules with QGC_EXP_DECODE=1 (no
# decode: the mma take the code words) and =2 (NF4: hi only, one 4-byte
# lookup of one wavefront per code byte) against the pack's module; (3) ncu
# of Q2_0 g64 bf16 m = 1 at 28672 x 8192, plan and x=int.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 bench/gpu-ab.sh bench/ncu-insn.py \
#   bench/results/v13/h200-run1.sh /tmp/mods/qgemv-cuda-{DEC1,DEC2}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
mkdir -p "$O"
t0=$SECONDS
bench=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)

# 1. x=int against the plan, two alternating passes
for pass in 1 2; do
  for plan in "" x=int; do
    QGEMV_CUDA_PLAN=$plan timeout 100 "${bench[@]}" --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 \
      --shape 4096x4096 --format q2_0g64,q2_0 --dtype bf16 --m 1,8,16 --csv "$O/plan-${plan:-default}-$pass.csv" \
      > /dev/null 2>> "$O/plan-log.txt"
    echo "plan '$plan' pass $pass rc=$? ($((SECONDS - t0)) s)"
  done
done
python3 - "$O" <<'PY' | tee "$O/xint-table.txt"
import csv, sys
o = sys.argv[1]
def load(f):
    try:
        return {(r["n"], r["k"], r["format"], r["m"]): float(r["median_s"]) * 1e6 for r in csv.DictReader(open(f)) if r["median_s"]}
    except (OSError, KeyError, ValueError) as e:
        print(f, e); return {}
d = {v: [load("%s/plan-%s-%d.csv" % (o, v, p)) for p in (1, 2)] for v in ("default", "x=int")}
print("n k format m: plan us (passes)  x=int us (passes)  x=int/plan")
for key in d["default"][0]:
    if all(key in r for v in d for r in d[v]):
        a = [r[key] for r in d["default"]]; b = [r[key] for r in d["x=int"]]
        print("%s %s %s m=%s: %s  %s  %.3f" % (key + ("/".join("%.1f" % x for x in a), "/".join("%.1f" % x for x in b), sum(b) / sum(a))))
PY

# 2. the decode's cost: DEC1 (none), DEC2 (NF4 hi only) against the pack
AB_DEADLINE=150 OUT=$O/ab timeout 260 bash "$here/gpu-ab.sh" qgemv-cuda-DEC1.so.xz qgemv-cuda-DEC2.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --format nf4,q2_0g64,q2_0 --dtype bf16 --m 1,8 \
  > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-table.txt"

# 3. ncu, Q2_0 g64 bf16 m = 1 at 28672 x 8192: the plan and x=int
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for v in plan int; do
  plan=""; [ $v = int ] && plan="x=int"
  QGEMV_CUDA_PLAN=$plan timeout 100 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full \
    --import-source no -o "/tmp/rep-$v" -f \
    qgemv bench --backend cuda --shape 28672x8192 --format q2_0g64 --dtype bf16 --m 1 --iters 5 --no-baseline \
    > "$O/ncu-$v.log" 2>&1
  "$ncu" -i "/tmp/rep-$v.ncu-rep" --page details > "$O/ncu-q2g64-$v.txt" 2>&1
  "$ncu" -i "/tmp/rep-$v.ncu-rep" --page source --print-source sass --csv > "/tmp/src-$v.csv" 2>/dev/null &&
    python3 "$here/ncu-insn.py" "/tmp/src-$v.csv" 30 > "$O/insn-q2g64-$v.txt" 2>&1
  grep -E "Duration|Executed Instructions  |Issue Slots Busy|Registers Per|Eligible Warps|Achieved Occ|DRAM Through" "$O/ncu-q2g64-$v.txt" | head -9
  echo "ncu $v done ($((SECONDS - t0)) s)"
done
tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
echo "end ($((SECONDS - t0)) s)"
