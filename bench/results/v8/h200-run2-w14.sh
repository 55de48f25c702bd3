#!/bin/bash
# v8 run 2: warps per CTA that fill the SMs. 28672 x 8192 (KS 2) takes 112
# CTAs of 16 warps on 132 SMs; w=14 (7 row groups) takes 128. Bench default
# against w=14 (bracketed: default, w14, default, w14), x=int and RMSNorm
# likewise; the suites with w=14 (odd W on every shape); ncu of both; the
# module's SASS for offline instruction counts. (As run, the files of
# w=14 had "=" in their names and did not come back, and the x=int / norm
# summary lines had a format error: both fixed since.)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../env.sh"
O=${OUT:-/tmp/out}
mkdir -p "$O"
t0=$SECONDS
B=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
for pass in 1 2; do
  for w in "" w=14; do
    tag=${w:-def}; tag=${tag/=/}
    QGEMV_CUDA_PLAN=$w timeout 90 "${B[@]}" --shape 28672x8192 --format all --dtype bf16,f32 --m 1,8,16 --csv $O/b-$tag-$pass.csv > /dev/null 2>&1
    echo "bench $tag pass $pass rc=$? ($((SECONDS - t0)) s)"
  done
done
for w in "" w=14; do
  tag=${w:-def}; tag=${tag/=/}
  QGEMV_CUDA_PLAN=x=int${w:+,$w} timeout 60 "${B[@]}" --shape 28672x8192 --format q2_0,q2_0g64 --dtype bf16 --m 1,8,16 --csv $O/int-$tag.csv > /dev/null 2>&1
  echo "bench x=int $tag rc=$? ($((SECONDS - t0)) s)"
  QGEMV_CUDA_PLAN=$w timeout 60 "${B[@]}" --shape 28672x8192 --format all --dtype bf16,f32 --m 1 --rmsnorm --csv $O/norm-$tag.csv > /dev/null 2>&1
  echo "bench norm $tag rc=$? ($((SECONDS - t0)) s)"
done
python3 - "$O" <<'PY'
import csv, sys, glob, statistics
o = sys.argv[1]
def load(f):
    try: return {(r['n'], r['k'], r['format'], r['dtype'], r['m']): float(r['median_s']) * 1e6 for r in csv.DictReader(open(f)) if r['median_s']}
    except Exception as e: print(f, e); return {}
d1, w1, d2, w2 = (load(f"{o}/b-{t}-{p}.csv") for p in (1, 2) for t in ("def", "w14"))
print("shape format dtype m: default (pass1/pass2)  w=14 (pass1/pass2)  ratio of means")
for key in d1:
    if key in w1 and key in d2 and key in w2:
        a, b = (d1[key] + d2[key]) / 2, (w1[key] + w2[key]) / 2
        print("%s x %s %-9s %-4s m=%-3s %7.1f/%7.1f  %7.1f/%7.1f  %.3f" % (key + (d1[key], d2[key], w1[key], w2[key], b / a)))
for name in ("int", "norm"):
    x, y = load(f"{o}/{name}-def.csv"), load(f"{o}/{name}-w14.csv")
    for key in x:
        if key in y: print("%-5s %-9s %-4s m=%-3s def %7.1f w14 %7.1f  %.3f" % ((name, key[2], key[3], key[4]) + (x[key], y[key], y[key] / x[key])))
PY
QGEMV_CUDA_PLAN=w=14 OUT=$O/c14 bash "$here/gpu-pack-run.sh" check > /dev/null 2>&1; echo "check w=14 rc=$? ($((SECONDS - t0)) s)"
grep -hE "Checks:|combinations failed" $O/c14/log.txt
grep -hE "^[^ ]*test_cuda_[a-z_]*.c:[0-9]+:[FE]:" $O/c14/log.txt | head -5
ncu=/usr/local/cuda/bin/ncu; [ -x $ncu ] || ncu=$(command -v ncu)
for w in "" w=14; do
  for fc in "q2_0 bf16" "nf4 bf16"; do
    set -- $fc
    tg=${w:-def}; tg=${tg/=/}
    QGEMV_CUDA_PLAN=$w timeout 60 $ncu --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full \
      qgemv bench --backend cuda --shape 28672x8192 --format $1 --dtype $2 --iters 5 --no-baseline > "$O/ncu-$1-$2-$tg.txt" 2>&1
    echo "ncu $1 $2 ${w:-def} rc=$? ($((SECONDS - t0)) s)"
    grep -E "^    (Duration|Executed Instructions|Registers Per|Grid Size|Block Size|Achieved Occupancy|Eligible Warps|Issued Warp|DRAM Throughput)" "$O/ncu-$1-$2-$tg.txt"
  done
done
cuobjdump=/usr/local/cuda/bin/cuobjdump; [ -x $cuobjdump ] || cuobjdump=$(command -v cuobjdump)
$cuobjdump -sass -arch sm_90 "$QGEMV_PLUGIN_PATH/qgemv-cuda.so" 2> $O/sass-err.txt | xz -6 > $O/sass-sm90.txt.xz
echo "sass rc=$? $(stat -c %s $O/sass-sm90.txt.xz) bytes ($((SECONDS - t0)) s)"
