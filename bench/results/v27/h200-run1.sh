#!/bin/bash
# v27 run 1 (issue 13). The library at v26's HEAD (2e0e80f; its CUDA code
# is efbf21e's plus the two switches, all on) has not run as a module:
# (1) the quick suite and verify on it; (2) it against NEW2 (the same with
# -DQGC_EXP_Q2_BF16_W12=0) where the 12 warps move plans: 9216 x 4096,
# 10240 x 5120, 18944 x 3584, Q2_0 bf16 x, m = 1, 2, 4, 8, 16 (predicted
# from v26 run 4's overrides: m = 8 b/a0 0.87-0.92, m = 1 and 16 1.00,
# m = 2 and 4 not measured); (3) why one tile per warp without a k-split
# costs about 1.25x per tile (v26): 20480 x 5120 Q2_0 g128 bf16 m = 1,
# overrides around ks=1,t=1,w=10 (WIDE's lost pick) and ks=2,t=2,w=12 (the
# plan), including two tiles per warp at a k-split of 1 (smaller units of
# more CTAs); then ncu --set full of the two, and of NF4 at 28672 x 8192
# bf16 m = 1 (the milestone shape: a fresh stall picture).
# Here: bench/cuda-module.sh /tmp/b90 NEW2 -DQGC_EXP_Q2_BF16_W12=0;
# bench/cuda-module.sh /tmp/b90 base; make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/ncu-insn.py bench/results/v27/h200-run1.sh \
#     /tmp/mods/qgemv-cuda-NEW2.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run1; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 100)) OUT=$O/ab timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-NEW2.so.xz \
  --shape 9216x4096 --shape 10240x5120 --shape 18944x3584 --format q2_0,q2_0g64 --dtype bf16 --m 1,2,4,8,16 \
  --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
# (3) overrides against the plan (B, the pack's module), two passes, --graph
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 100)) OUT=$O/ov timeout 150 bash "$here/gpu-ab.sh" @ks=2,t=2,w=12 \
  @ks=1,t=1,w=10 @ks=1,t=1,w=12 @ks=1,t=2,w=8 @ks=1,t=2,w=10 @ks=1,t=2,w=12 @ks=1,t=2,w=16 @ks=2,t=2,w=8 \
  @ks=2,t=1,w=12 @ks=2,t=1,w=16 --shape 20480x5120 --shape 25600x5120 --format q2_0 --dtype bf16 --m 1 \
  --graph > "$O/ov.txt" 2> "$O/ov-log.txt"
step overrides; cat "$O/ov.txt"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
prof() { # NAME PLAN SHAPE FORMAT
  [ $((SECONDS - t0)) -lt 480 ] && [ -n "$ncu" ] || return 0
  QGEMV_CUDA_PLAN=$2 timeout 70 "$ncu" --clock-control none -k regex:matvec_kernel -s 3 -c 1 --set full \
    -o "/tmp/$1" -f qgemv bench --backend cuda --shape "$3" --format "$4" --dtype bf16 --m 1 --iters 5 \
    --no-baseline > "$O/ncu-$1.txt" 2>&1
  "$ncu" -i "/tmp/$1.ncu-rep" --page details >> "$O/ncu-$1.txt" 2>&1
  "$ncu" -i "/tmp/$1.ncu-rep" --page source --print-source sass --csv > "/tmp/$1.csv" 2>/dev/null &&
    python3 "$here/ncu-insn.py" "/tmp/$1.csv" 30 >> "$O/ncu-$1.txt" 2>&1
  echo "ncu $1 ($((SECONDS - t0)) s)"
  grep -E "Duration|Issue Slots Busy|Registers Per|Achieved Occupancy|Eligible Warps|No Eligible" "$O/ncu-$1.txt" | head -8
}
prof q2ks1t1w10 ks=1,t=1,w=10 20480x5120 q2_0
prof q2ks2t2w12 ks=2,t=2,w=12 20480x5120 q2_0
prof nf4big "" 28672x8192 nf4
