#!/bin/bash
# v20 run 3 (issue 13): the plan's change as it lands: batched launches of
# bf16 x with B per warp at a k-split of 8 (4096 x 14336, 4096 x 4096 on
# the H200) in CTAs of one row group (8 warps, two CTAs per SM), as run 2's
# sweep found (w=8 4-11% faster at m = 8 and 16, every format). The quick
# suite and verify; the pack's module against V19 (60cb934's library) on
# the two shapes, every format, bf16 and f32, m = 1, 8, 16, and the norm's
# rows there (kDG takes the change too; not in run 2's sweep), with BA
# beside them: -DQGC_EXP_BAHEAD=1 on the pack's tree (B per warp's words a
# scale block ahead, Q2_0 direct at one tile per warp: run 2's ncu of
# 4096 x 14336 Q2_0 bf16 m = 8 had 38% of its samples on long scoreboard
# at the HMMA, the x loads' latency); then, for
# the notes, QGEMV_CUDA_PLAN overrides against the plan (the same module):
# w=8 at m = 1 and f32 batched at the k-split-8 shapes, and geometries for
# f32 batched at 14336 x 4096, where run 2's ks=2 ran NF4 m = 8 in 34 us
# against the plan's 44 (k-split 4, 224 units of CTAs).
# Predicted: the changed rows 0.89-0.96x V19, every other row 0.98-1.02x;
# kDG m = 8, 16 0.9-1.0x; BA 0.8-0.9x the pack on Q2_0 bf16 m = 8, 16.
# Here (the tree of this script's commit):
#   bench/cuda-module.sh /tmp/b90 BA -DQGC_EXP_BAHEAD=1; bench/cuda-module.sh /tmp/b90 base
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#     bench/results/v20/h200-run3.sh /tmp/mods/qgemv-cuda-{V19,BA}.so.xz
#   (V19: bench/cuda-module.sh /tmp/b90 base on 60cb934's tree, renamed)
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run3
mkdir -p "$O"
t0=$SECONDS
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
}
trap finish EXIT
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
echo "suite rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite.txt" | head -8
timeout 60 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
echo "verify rc=$? ($((SECONDS - t0)) s)"; tail -2 "$O/verify.txt"
AB_DEADLINE=$((SECONDS + 110)) OUT=$O/ab timeout 240 bash "$here/gpu-ab.sh" qgemv-cuda-V19.so.xz qgemv-cuda-BA.so.xz \
  --shape 4096x14336 --shape 4096x4096 --format all --dtype bf16,f32 --m 1,8,16 > "$O/ab.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab.txt"
AB_DEADLINE=$((SECONDS + 30)) OUT=$O/ab-norm timeout 100 bash "$here/gpu-ab.sh" qgemv-cuda-V19.so.xz \
  --shape 4096x14336 --shape 4096x4096 --format all --dtype bf16 --m 1,8,16 --rmsnorm > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
mkdir -p "$O/ov"
ov() { # NAME PLAN ARGS...
  local name=$1 plan=$2; shift 2
  [ $((SECONDS - t0)) -lt 420 ] || { echo "override $name '$plan': skipped (time)"; return; }
  QGEMV_CUDA_PLAN=$plan timeout 60 qgemv bench --backend cuda --min-time 0.05 --working-set 512M --no-baseline --quiet \
    "$@" --csv "$O/ov/$name.csv" > /dev/null 2>> "$O/ov/stderr.txt"
  awk -F, -v n="$name" -v p="${plan:-plan}" 'NR > 1 { gsub(/"/, ""); printf "%-10s %-22s %sx%s %s %s m=%s %.2f\n", n, p, $3, $4, $5, $6, $7, $9 * 1e6 }' \
    "$O/ov/$name.csv" >> "$O/ov/all.txt"
}
ks8="--shape 4096x14336 --shape 4096x4096 --format all"
ov ks8-m1 "" $ks8 --dtype bf16,f32 --m 1
ov ks8-m1-w8 w=8 $ks8 --dtype bf16,f32 --m 1
ov ks8-f32 "" $ks8 --dtype f32 --m 8,16
ov ks8-f32-w8 w=8 $ks8 --dtype f32 --m 8,16
w4="--shape 14336x4096 --format all --dtype f32 --m 8,16"
for plan in "" w=8 w=12 t=2 phases=1 phases=4 b=cta,t=2,w=8; do ov "w4-${plan:-plan}" "$plan" $w4; done
echo "overrides ($((SECONDS - t0)) s)"; cat "$O/ov/all.txt"
