#!/bin/bash
# v7 image-of-B device run: suites with img default/on, checkint with img=on, bench on/off, memcheck img=on.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../env.sh"
O=${OUT:-/tmp/out}
mkdir -p "$O"
t0=$SECONDS
OUT=$O/c bash "$here/gpu-pack-run.sh" check > /dev/null 2>&1; echo "check rc=$? ($((SECONDS - t0)) s)"
QGEMV_CUDA_PLAN=img=on OUT=$O/ci bash "$here/gpu-pack-run.sh" check > /dev/null 2>&1; echo "check img=on rc=$? ($((SECONDS - t0)) s)"
QGEMV_CUDA_PLAN=x=int,img=on OUT=$O/cx bash "$here/gpu-pack-run.sh" check > /dev/null 2>&1; echo "check x=int,img=on rc=$? ($((SECONDS - t0)) s)"
grep -hE "Checks:|combinations failed" $O/c/log.txt $O/ci/log.txt $O/cx/log.txt
grep -hE "^[^ ]*test_cuda_backend.c:[0-9]+:[FE]:" $O/c/log.txt $O/ci/log.txt $O/cx/log.txt | head -5
B=(qgemv bench --backend cuda --min-time 0.03 --no-baseline --working-set 512M)
S="--shape 28672x8192 --shape 8192x28672 --shape 4096x14336 --shape 4096x4096"
for img in off on; do
  QGEMV_CUDA_PLAN=img=$img timeout 120 "${B[@]}" $S --format all --dtype f32,bf16 --m 1,8,16 --csv $O/bench-img-$img.csv > /dev/null 2>&1
  echo "bench img=$img rc=$? ($((SECONDS - t0)) s)"
  QGEMV_CUDA_PLAN=x=int,img=$img timeout 60 "${B[@]}" $S --format q2_0,q2_0g64 --dtype bf16 --m 1,8,16 --csv $O/bench-int-img-$img.csv > /dev/null 2>&1
  echo "bench x=int,img=$img rc=$? ($((SECONDS - t0)) s)"
done
python3 - "$O" <<'PY'
import csv, sys
o = sys.argv[1]
def load(f):
    try: return {(r['n'], r['k'], r['format'], r['dtype'], r['m']): float(r['median_s']) * 1e6 for r in csv.DictReader(open(f)) if r['median_s']}
    except Exception as e: print(f, e); return {}
for a, b in (('bench-img-off.csv', 'bench-img-on.csv'), ('bench-int-img-off.csv', 'bench-int-img-on.csv')):
    x, y = load(f"{o}/{a}"), load(f"{o}/{b}")
    for key in x:
        if key in y: print("%-6s %-6s %-8s %-4s m=%-3s off %8.1f on %8.1f  %.2fx" % (key + (x[key], y[key], y[key] / x[key])))
PY
if [ $((SECONDS - t0)) -lt 330 ]; then
  cs=/usr/local/cuda/bin/compute-sanitizer
  QGEMV_CUDA_PLAN=img=on QGEMV_TEST_QUICK=1 CK_FORK=no timeout $((400 - (SECONDS - t0))) $cs --tool memcheck --report-api-errors no --error-exitcode 3 "$here/test_cuda_backend" > $O/memcheck-img.txt 2>&1
  echo "memcheck img=on rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|ERROR SUMMARY" $O/memcheck-img.txt
fi
