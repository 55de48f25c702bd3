#!/bin/bash
# v25 run 6 (issue 13), NOT RUN (the budget left, 197 s, could not start a
# machine): the first call of the next session. Is Q2_0 direct's loss at
# one tile per warp in 10 warps a second CTA on an SM? Q2_0 direct (T = 1,
# B per CTA) uses 91 registers (ptxas -v, sm_90): two CTAs of 9 or 10
# warps fit an SM, 12 do not; the plan assumes 128 (one per SM) and
# launches fewer CTAs than SMs. ONECTA (-DQGC_EXP_ONE_CTA=1) asks such
# launches for half the SM's shared memory, so that none can join
# another. Predicted: under ONECTA `ks=2,t=1,w=10` at 9216 x 4096 bf16
# m = 1 near w=12's 7.5 us (10.3 in run 4) and ks=1,t=1,w=10 at 18944 x
# 3584 near 11.3 (16.2); the plan's rows and w=12 unchanged.
# Then WIDE (-DQGC_EXP_Q2_WIDE=1 -DQGC_EXP_ONE_CTA=1: run 2's search for
# Q2_0 with no second CTA per SM) against the pack's module at run 2's
# ten shapes, Q2_0 g64 and g128, m = 1 and 8. Predicted, if ONECTA holds:
# f32 m = 8 0.56-0.67 as in run 2, bf16 m = 1 within 5% of the library
# where run 2 lost 1.26-1.42x (9216 x 4096, 10240 and 20480 x 5120); the
# table's b/a0 is the library over WIDE (over 1: WIDE faster). Last, the sanitizers on the pack's module (run 3 ran them before Q2_0's
# tie rule).
# Here: bench/cuda-module.sh /tmp/b90 ONECTA -DQGC_EXP_ONE_CTA=1;
# bench/cuda-module.sh /tmp/b90 WIDE -DQGC_EXP_Q2_WIDE=1 -DQGC_EXP_ONE_CTA=1;
# bench/cuda-module.sh /tmp/b90 base (the pack's module: the library's);
# make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/run-common.sh \
#     bench/gpu-ab.sh bench/results/v25/h200-run6.sh /tmp/mods/qgemv-cuda-ONECTA.so.xz \
#     /tmp/mods/qgemv-cuda-WIDE.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run6.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run6; source "$here/run-common.sh"
mkdir -p "$O/one" && xz -dc "$here/qgemv-cuda-ONECTA.so.xz" > "$O/one/qgemv-cuda.so"
for mod in base one; do
  for sp in "9216x4096 ks=2,t=1,w=10" "9216x4096 ks=2,t=1,w=12" "18944x3584 ks=1,t=1,w=10" "18944x3584 ks=1,t=1,w=9" "9216x4096 "; do
    set -- $sp
    env $([ $mod = one ] && echo QGEMV_PLUGIN_PATH=$O/one) QGEMV_CUDA_PLAN="${2:-}" timeout 30 qgemv bench --backend cuda \
      --min-time 0.05 --working-set 512M --no-baseline --quiet --graph --shape "$1" --format q2_0 --dtype bf16 --m 1 \
      --csv "$O/$mod-$1-${2:-plan}.csv" > /dev/null 2>&1
    awk -F, -v m=$mod -v s="$1" -v p="${2:-plan}" 'NR > 1 { printf "%s %s %s %s m=%s %.2f us\n", m, s, p, $6, $7, $9 * 1e6 }' \
      "$O/$mod-$1-${2:-plan}.csv"
  done
done
step bench
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 130)) OUT=$O/ab timeout 190 bash "$here/gpu-ab.sh" qgemv-cuda-WIDE.so.xz \
  --shape 11008x4096 --shape 18944x3584 --shape 22016x4096 --shape 37888x3584 --shape 12288x4096 \
  --shape 10240x5120 --shape 20480x5120 --shape 24576x4096 --shape 9216x4096 --shape 25600x5120 \
  --format q2_0,q2_0g64 --dtype bf16,f32 --m 1,8 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
GPU_DEADLINE=$((560 - SECONDS)) OUT=$O/san timeout $((575 - SECONDS)) bash "$here/gpu-pack-run.sh" sanitize \
  > "$O/sanitize-log.txt" 2>&1
step sanitize; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:|exit" "$O/sanitize-log.txt" | head -12
