#!/bin/bash
# v9 run 2 (issue 13): Q2_0's decode in one LOP3 per pair (the magic from
# Params) and NF4's table built by one thread per entry, against HEAD's
# module (bin/qgemv-cuda-head.so.xz): the suites with the new module;
# qgemv bench on every issue-13 shape, old, new, old, new; RMSNorm and
# llama3-8b old against new; ncu (per-instruction CSV) of the new Q2_0 g64
# and NF4 at m = 1. Everything lands in $OUT/run2.tar.xz (the device tool
# returns at most 8 files).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O" /tmp/oldmod
xz -dc "$here/qgemv-cuda-head.so.xz" > /tmp/oldmod/qgemv-cuda.so
NEW=$QGEMV_PLUGIN_PATH
t0=$SECONDS
OUT=$O/c bash "$here/gpu-pack-run.sh" check > /dev/null 2>&1; echo "check rc=$? ($((SECONDS - t0)) s)"
grep -hE "Checks:|combinations failed" $O/c/log.txt
grep -hE "^[^ ]*test_cuda_[a-z_]*.c:[0-9]+:[FE]:" $O/c/log.txt | head -5
B=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
S="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096"
for pass in 1 2; do
  for mod in old new; do
    pp=$NEW; [ $mod = old ] && pp=/tmp/oldmod
    QGEMV_PLUGIN_PATH=$pp timeout 150 "${B[@]}" $S --format all --dtype bf16,f32 --m 1,8,16 --csv $O/b-$mod-$pass.csv > /dev/null 2>&1
    echo "bench $mod pass $pass rc=$? ($((SECONDS - t0)) s)"
  done
done
for mod in old new; do
  pp=$NEW; [ $mod = old ] && pp=/tmp/oldmod
  QGEMV_PLUGIN_PATH=$pp timeout 60 "${B[@]}" --shape 28672x8192 --format all --dtype bf16,f32 --m 1 --rmsnorm --csv $O/norm-$mod.csv > /dev/null 2>&1
  echo "norm $mod rc=$? ($((SECONDS - t0)) s)"
  QGEMV_PLUGIN_PATH=$pp timeout 90 qgemv bench --backend cuda --preset llama3-8b --format all --dtype bf16 --min-time 0.2 --json $O/llama3-8b-$mod.json > $O/llama3-8b-$mod.txt 2>&1
  echo "llama3-8b $mod rc=$? ($((SECONDS - t0)) s)"; grep -iE "step|total" $O/llama3-8b-$mod.txt | head -6
done
python3 - "$O" <<'PY'
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
x, y = load(o + "/norm-old.csv"), load(o + "/norm-new.csv")
for key in x:
    if key in y: print("norm %s %s m=%s: old %.1f new %.1f %.3f" % (key[2], key[3], key[4], x[key], y[key], y[key] / x[key]))
PY
N=/usr/local/cuda/bin/ncu
for c in "q2_0g64 1" "nf4 1"; do
  set -- $c
  timeout 90 $N --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full -o /tmp/rep-$1 -f \
    qgemv bench --backend cuda --shape 28672x8192 --format $1 --dtype bf16 --m $2 --iters 5 --no-baseline > /dev/null 2>&1
  $N -i /tmp/rep-$1.ncu-rep --page details > $O/ncu-$1.txt 2>&1
  $N -i /tmp/rep-$1.ncu-rep --page source --print-source sass --csv > $O/src-$1.csv 2>/dev/null
  echo "ncu $1 ($((SECONDS - t0)) s)"; grep -E "Duration|Executed Instructions  |Issue Slots Busy|Registers Per" $O/ncu-$1.txt | head -5
done
tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
