#!/bin/bash
# v17 run 3 (issues 13 and 12): (1) GPU: the plan's geometry for f32 x
# batched (run 1: Q2_0 g64 f32 m = 8 is two 16-column launches of 50 us,
# 22% occupancy at 120 registers, a quarter of the samples in the term
# staging): QGEMV_CUDA_PLAN overrides at 28672x8192 and 8192x28672, f32,
# m = 8; (2) CPU, the 16-core host (issue 12): qgemv bench --backend cpu at
# 28672x8192, threads 16, 8, 4, 2, 1 (the issue's table asks for them;
# v7 ran them at 4a31b61, before 9f11314's three digit planes for f32 x),
# then the weight prefetch 8 KiB ahead (libqgemv built with
# -DQG_PREFETCH_AHEAD=8192, packed as bin/pf8192/) against 4 KiB at 16
# threads, alternating.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 bench/plan-sweep.sh bench/results/v17/h200-run3.sh \
#   /tmp/pf8192.tar.xz   (tar of /tmp/pf8192/libqgemv.so.0*)
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp/out3}
mkdir -p "$O"
t0=$SECONDS
# (1) the GPU sweep: sweep() as plan-sweep.sh's, one group of our own
bench=(qgemv bench --backend cuda --min-time 0.05 --working-set 512M --no-baseline --quiet)
n=0
for plan in "" "b=warp" "b=warp,t=1" "b=cta,t=1" "b=cta,phases=2" "b=cta,phases=4" "t=1" "w=8" "w=12" "w=16" "ks=4"; do
  n=$((n + 1))
  QGEMV_CUDA_PLAN=$plan timeout 60 "${bench[@]}" --shape 28672x8192 --shape 8192x28672 --format q2_0g64,q2_0,nf4 \
    --dtype f32 --m 8 --csv "$O/sweep-$n.csv" > /dev/null 2>> "$O/sweep-stderr.txt"
  echo "plan '${plan:-plan}': $(tail -n +2 "$O/sweep-$n.csv" 2>/dev/null | awk -F, '{printf "%s ", $0}' | head -c 0)rc=$?"
  printf '%s\t%s\n' "$n" "${plan:-plan}" >> "$O/sweep-plans.txt"
  ((SECONDS - t0 > 170)) && break
done
echo "sweep done ($((SECONDS - t0)) s)"
python3 - "$O" <<'PY'
import csv, glob, os, sys
o = sys.argv[1]
plans = dict(l.rstrip('\n').split('\t') for l in open(os.path.join(o, 'sweep-plans.txt')))
rows = {}
for f in sorted(glob.glob(os.path.join(o, 'sweep-*.csv'))):
    n = os.path.basename(f)[6:-4]
    for r in csv.DictReader(open(f)):
        key = (r.get('n'), r.get('k'), r.get('format'), r.get('dtype'), r.get('m'))
        t = r.get('median_us') or r.get('median(us)') or r.get('median_s')
        rows.setdefault(key, []).append((plans.get(n, n), t))
for key, v in rows.items():
    print(' '.join(str(x) for x in key), ' | ', '  '.join(f'{p}:{t}' for p, t in v))
PY
# (2) the CPU on the host
mkdir -p "$here/pf8192" && tar -C "$here/pf8192" -xJf "$here/pf8192.tar.xz"
lscpu | grep -E "Model name|^CPU\(s\)|L3" > "$O/cpu-host.txt"
for T in 16 8 4 2 1; do
  ((SECONDS - t0 > 470)) && { echo "cpu: deadline before T=$T"; break; }
  QGEMV_NUM_THREADS=$T timeout 150 qgemv bench --backend cpu --shape 28672x8192 --format all --dtype f32,bf16 --m 1,8 \
    --min-time 0.2 --no-baseline --json "$O/cpu-t$T.json" > "$O/cpu-t$T.txt" 2>&1
  echo "cpu T=$T rc=$? ($((SECONDS - t0)) s)"; grep -E "^-|streaming" "$O/cpu-t$T.txt"
done
for r in 1 2; do
  for lib in base pf8192; do
    ((SECONDS - t0 > 540)) && break
    extra=$here/pf8192; [ $lib = base ] && extra=
    LD_LIBRARY_PATH=${extra:+$extra:}$LD_LIBRARY_PATH timeout 60 qgemv bench --backend cpu --shape 28672x8192 \
      --format all --dtype bf16 --m 1 --min-time 0.2 --no-baseline > "$O/cpu-pf-$lib-$r.txt" 2>&1
    echo "pf $lib round $r:"; grep -E "^-|streaming" "$O/cpu-pf-$lib-$r.txt"
  done
done
echo "run3 done ($((SECONDS - t0)) s)"
