#!/bin/bash
# v11 run 2 (issue 13): where the per-launch constant goes. Pack of branch
# exp11 (= main 90887ec with three experiment macros, off), sm_90 only,
# with main's module and three variants of the branch:
#   qgemv-cuda-main.so.xz     main (the pack's twin: the noise)
#   qgemv-cuda-nowait.so.xz   -DQGC_EXP_NOWAIT=1: no griddepcontrol.wait
#                             (wrong in general; the bench's x never changes)
#   qgemv-cuda-early.so.xz    -DQGC_EXP_EARLY_ALL=1: the whole ring before
#                             the B staging
#   qgemv-cuda-skipbar.so.xz  -DQGC_EXP_SKIP_BAR=1: no epilogue barrier
#                             before the first unit's partials
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O"
t0=$SECONDS
B=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
OUT=$O/ab AB_PASSES=2 timeout 200 bash "$here/gpu-ab.sh" qgemv-cuda-main.so.xz qgemv-cuda-nowait.so.xz \
  qgemv-cuda-early.so.xz qgemv-cuda-skipbar.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format all --dtype bf16 --m 1 \
  > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-table.txt"
# the intercept: k and n scaling at one plan geometry (m = 1, bf16)
for pass in 1 2; do
  timeout 60 "${B[@]}" --shape 28672x2048 --shape 28672x4096 --shape 28672x8192 --shape 28672x16384 \
    --shape 7168x8192 --shape 14336x8192 --shape 57344x8192 --format nf4,q2_0 --dtype bf16 --m 1 \
    --csv "$O/scale-$pass.csv" > /dev/null 2>> "$O/scale-err.txt"
  QGEMV_CUDA_PLAN=ks=2 timeout 60 "${B[@]}" --shape 28672x2048 --shape 28672x4096 --shape 28672x8192 --shape 28672x16384 \
    --format nf4,q2_0 --dtype bf16 --m 1 --csv "$O/scale-ks2-$pass.csv" > /dev/null 2>> "$O/scale-err.txt"
done
echo "scaling done ($((SECONDS - t0)) s)"
python3 - "$O" <<'PY' | tee "$O/scale-table.txt"
import csv, sys
o = sys.argv[1]
for pre in ("scale", "scale-ks2"):
    rows = {}
    for p in (1, 2):
        try:
            for r in csv.DictReader(open("%s/%s-%d.csv" % (o, pre, p))):
                if r['median_s']:
                    rows.setdefault((r['format'], r.get('group', ''), int(r['n']), int(r['k'])), []).append(float(r['median_s']) * 1e6)
        except Exception as e: print(pre, p, e)
    print(pre)
    for key in sorted(rows):
        print("  %s g%s %dx%d: %s us" % (key + ("/".join("%.2f" % x for x in rows[key]),)))
PY
OUT=$O/sweep SWEEP_DEADLINE=80 timeout 140 bash "$here/plan-sweep.sh" wide28 > /dev/null 2>&1
echo "sweep rc=$? ($((SECONDS - t0)) s)"; cat "$O/sweep/summary.txt" 2>/dev/null | head -30
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for f in nf4 q2_0; do
  timeout 100 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full --import-source no -o /tmp/rep-$f -f \
    qgemv bench --backend cuda --shape 28672x8192 --format $f --dtype bf16 --m 1 --iters 5 --no-baseline > "$O/ncu-$f.log" 2>&1
  "$ncu" -i /tmp/rep-$f.ncu-rep --page details > "$O/ncu-$f.txt" 2>&1
  "$ncu" -i /tmp/rep-$f.ncu-rep --page source --print-source sass --csv > "$O/src-$f.csv" 2>/dev/null &&
    python3 "$here/ncu-insn.py" "$O/src-$f.csv" 40 > "$O/insn-$f.txt" 2>&1
  xz -T4 "$O/src-$f.csv"
  echo "ncu $f done ($((SECONDS - t0)) s)"
done
tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
echo "end ($((SECONDS - t0)) s)"
