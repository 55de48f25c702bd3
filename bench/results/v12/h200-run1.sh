#!/bin/bash
# v12 run 1 (issue 13): does a second CTA per SM (the next launch's
# prologue beside this one's tail) or the whole ring before the staging
# shorten a launch? The pack: HEAD with the warp's row group and slice by
# shift (sm_90); modules: 7fe5bb5 (before the shift), QGC_EXP_COR (Q2_0's
# wide configuration on the 72-register instantiation at any warp count,
# occupancy at 72 registers), QGC_EXP_EARLY_ALL (p.early = the ring).
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#   bench/gpu-ab.sh bench/results/v12/h200-run1.sh /tmp/mods/qgemv-cuda-{7fe5bb5,COR,EARLY_ALL}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
mkdir -p "$O"
t0=$SECONDS
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 100 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:" "$O/suite.txt" | head -3

# 1. the shift and early-all against the pack, m = 1
AB_DEADLINE=110 OUT=$O/ab1 timeout 200 bash "$here/gpu-ab.sh" qgemv-cuda-7fe5bb5.so.xz qgemv-cuda-EARLY_ALL.so.xz \
  --shape 28672x8192 --shape 14336x4096 --shape 4096x4096 --format all --dtype bf16,f32 --m 1 \
  > "$O/ab1-table.txt" 2> "$O/ab1-log.txt"
echo "ab1 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab1-table.txt"

# 2. cor against the pack: the plan's own geometry, then w=14,t=1 (cor:
# two CTAs per SM; the pack: one, 128 registers)
for plan in "" "w=14,t=1"; do
  QGEMV_CUDA_PLAN=$plan AB_DEADLINE=60 OUT=$O/ab2${plan:+-w14} timeout 130 bash "$here/gpu-ab.sh" qgemv-cuda-COR.so.xz \
    --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format q2_0g64,q2_0 --dtype bf16 --m 1,8 \
    > "$O/ab2${plan:+-w14}-table.txt" 2> "$O/ab2${plan:+-w14}-log.txt"
  echo "ab2 '$plan' rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab2${plan:+-w14}-table.txt"
done

# 3. NF4 at two CTAs per SM with the pack's kernels (128 registers x 8 or
# 6 warps), against the plan's one CTA of 14 warps
for plan in "" "w=8,t=1" "w=6,t=2" "w=14,t=1"; do
  QGEMV_CUDA_PLAN=$plan timeout 60 qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet \
    --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --format nf4 --dtype bf16,f32 --m 1 \
    --csv "$O/nf4-${plan:-plan}.csv" > /dev/null 2>> "$O/nf4-log.txt"
  echo "nf4 '$plan' rc=$? ($((SECONDS - t0)) s)"
done
python3 - "$O" <<'PY'
import csv, glob, os, sys
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/nf4-*.csv")):
    plan = os.path.basename(f)[4:-4]
    for r in csv.DictReader(open(f)):
        if r["median_s"]:
            rows.setdefault((r["n"], r["k"], r["dtype"]), {})[plan] = float(r["median_s"]) * 1e6
for key, v in rows.items():
    print("nf4 %s %s %s: " % key + "  ".join("%s %.1f" % kv for kv in v.items()))
PY
tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
echo "end ($((SECONDS - t0)) s)"
