#!/bin/bash
# v9 run 4 (issue 13): Q2_0's three bf16 terms staged one pass each (the
# pack's module) against 84cd2cd (bin/qgemv-cuda-84cd2cd.so.xz): qgemv bench
# f32 x on every issue-13 shape and RMSNorm at 28672x8192, two passes; then
# the record: gpu-pack-run.sh check bench sanitize. $OUT: run4.tar.xz and rec/.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run4
mkdir -p "$O" /tmp/m-old
xz -dc "$here/qgemv-cuda-84cd2cd.so.xz" > /tmp/m-old/qgemv-cuda.so
NEW=$QGEMV_PLUGIN_PATH
t0=$SECONDS
B=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
S="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096"
for pass in 1 2; do
  for mod in old new; do
    pp=$NEW; [ $mod = old ] && pp=/tmp/m-old
    QGEMV_PLUGIN_PATH=$pp timeout 100 "${B[@]}" $S --format q2_0g64,q2_0 --dtype f32 --m 1,8,16 --csv $O/b-$mod-$pass.csv > /dev/null 2>&1
    QGEMV_PLUGIN_PATH=$pp timeout 60 "${B[@]}" --shape 28672x8192 --shape 4096x4096 --format all --dtype bf16,f32 --m 1 --rmsnorm --csv $O/norm-$mod-$pass.csv > /dev/null 2>&1
    echo "bench $mod pass $pass rc=$? ($((SECONDS - t0)) s)"
  done
done
python3 - "$O" <<'PY'
import csv, sys
o = sys.argv[1]
def load(f):
    try: return {(r['n'], r['k'], r['format'], r['dtype'], r['m']): float(r['median_s']) * 1e6 for r in csv.DictReader(open(f)) if r['median_s']}
    except Exception as e: print(f, e); return {}
for kind in ("b", "norm"):
    o1, n1, o2, n2 = (load("%s/%s-%s-%d.csv" % (o, kind, t, p)) for p in (1, 2) for t in ("old", "new"))
    print("%s: n k format dtype m: old (1/2)  new (1/2)  new/old" % kind)
    for key in o1:
        if key in n1 and key in o2 and key in n2:
            a, b = (o1[key] + o2[key]) / 2, (n1[key] + n2[key]) / 2
            flag = "" if abs(b / a - 1) < 0.02 else "  <--"
            print("%s %s %s %s m=%s: %.1f/%.1f  %.1f/%.1f  %.3f%s" % (key + (o1[key], o2[key], n1[key], n2[key], b / a, flag)))
PY
tar -C /tmp -cJf "${OUT:-/tmp}/run4.tar.xz" run4
QGEMV_BENCH_COMMIT=$COMMIT OUT=${OUT:-/tmp}/rec GPU_DEADLINE=$((540 - (SECONDS - t0))) bash "$here/gpu-pack-run.sh" check bench sanitize > /dev/null 2>&1
echo "record rc=$? ($((SECONDS - t0)) s)"
grep -E "########|Checks:|combinations|SUMMARY|passed" ${OUT:-/tmp}/rec/log.txt
