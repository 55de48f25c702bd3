#!/bin/bash
# v9 run 3 (issue 13): NF4's table in the dynamic shared memory (the pack's
# module, 84cd2cd) against the static table (bin/qgemv-cuda-static.so.xz,
# run 2's module; HEAD before this session did not fit the 64 MiB carry):
# qgemv bench NF4 on every issue-13 shape, two passes; then the record of
# the pack's module: gpu-pack-run.sh check bench sanitize. $OUT gets
# run3.tar.xz (A/B) and rec/ (the record's log and JSON).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run3
mkdir -p "$O" /tmp/m-static
xz -dc "$here/qgemv-cuda-static.so.xz" > /tmp/m-static/qgemv-cuda.so
NEW=$QGEMV_PLUGIN_PATH
t0=$SECONDS
B=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
S="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096"
for pass in 1 2; do
  for mod in static dyn; do
    pp=$NEW; [ $mod != dyn ] && pp=/tmp/m-$mod
    QGEMV_PLUGIN_PATH=$pp timeout 100 "${B[@]}" $S --format nf4 --dtype bf16,f32 --m 1,8,16 --csv $O/b-$mod-$pass.csv > /dev/null 2>&1
    echo "bench $mod pass $pass rc=$? ($((SECONDS - t0)) s)"
  done
done
python3 - "$O" <<'PY'
import csv, sys
o = sys.argv[1]
def load(f):
    try: return {(r['n'], r['k'], r['format'], r['dtype'], r['m']): float(r['median_s']) * 1e6 for r in csv.DictReader(open(f)) if r['median_s']}
    except Exception as e: print(f, e); return {}
d = {m: [load("%s/b-%s-%d.csv" % (o, m, p)) for p in (1, 2)] for m in ("static", "dyn")}
print("n k format dtype m: static (1/2) dyn (1/2)  dyn/static")
for key in d["static"][0]:
    try: v = {m: (d[m][0][key] + d[m][1][key]) / 2 for m in d}
    except KeyError: continue
    print("%s %s %s %s m=%s: %.1f/%.1f %.1f/%.1f  %.3f" % (key + (d["static"][0][key], d["static"][1][key], d["dyn"][0][key], d["dyn"][1][key], v["dyn"] / v["static"])))
PY
tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
QGEMV_BENCH_COMMIT=84cd2cd OUT=${OUT:-/tmp}/rec GPU_DEADLINE=$((540 - (SECONDS - t0))) bash "$here/gpu-pack-run.sh" check bench sanitize > /dev/null 2>&1
echo "record rc=$? ($((SECONDS - t0)) s)"
grep -E "########|Checks:|combinations|SUMMARY|passed" ${OUT:-/tmp}/rec/log.txt
