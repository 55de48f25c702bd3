#!/bin/bash
# v17 run 4 (issue 13): run 3's GPU sweep again (run 3 wrote one CSV per
# plan and the device tool returns 8 files a call, so they were lost): the
# CSVs now go back in one tarball, the table in summary.txt.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 bench/results/v17/h200-run4.sh
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp/out4}
mkdir -p "$O/sweep"
t0=$SECONDS
# (1) the GPU sweep: sweep() as plan-sweep.sh's, one group of our own
bench=(qgemv bench --backend cuda --min-time 0.05 --working-set 512M --no-baseline --quiet)
n=0
for plan in "" "b=warp" "b=warp,t=1" "b=cta,t=1" "b=cta,phases=2" "b=cta,phases=4" "t=1" "w=8" "w=12" "w=16" "ks=4"; do
  n=$((n + 1))
  QGEMV_CUDA_PLAN=$plan timeout 60 "${bench[@]}" --shape 28672x8192 --shape 8192x28672 --format q2_0g64,q2_0,nf4 \
    --dtype f32 --m 8 --csv "$O/sweep/sweep-$n.csv" > /dev/null 2>> "$O/sweep/stderr.txt"
  echo "plan '${plan:-plan}': $(tail -n +2 "$O/sweep/sweep-$n.csv" 2>/dev/null | awk -F, '{printf "%s ", $0}' | head -c 0)rc=$?"
  printf '%s\t%s\n' "$n" "${plan:-plan}" >> "$O/sweep/sweep-plans.txt"
  ((SECONDS - t0 > 170)) && break
done
echo "sweep done ($((SECONDS - t0)) s)"
python3 - "$O" > "$O/summary.txt" <<'PY'
import csv, glob, os, sys
o = sys.argv[1]
plans = dict(l.rstrip('\n').split('\t') for l in open(os.path.join(o, 'sweep/sweep-plans.txt')))
rows = {}
for f in sorted(glob.glob(os.path.join(o, 'sweep/sweep-*.csv'))):
    n = os.path.basename(f)[6:-4]
    for r in csv.DictReader(open(f)):
        key = (r.get('n'), r.get('k'), r.get('format'), r.get('dtype'), r.get('m'))
        t = '%.1f' % (float(r['median_s']) * 1e6) if r.get('median_s') else r.get('error')
        rows.setdefault(key, []).append((plans.get(n, n), t))
for key, v in rows.items():
    print(' '.join(str(x) for x in key), ' | ', '  '.join(f'{p}:{t}' for p, t in v))
PY
cat "$O/summary.txt"
tar -C "$O" -cJf "$O/sweep.tar.xz" sweep && rm -rf "$O/sweep"
