#!/bin/bash
# v25 run 2 (issue 13): qgc_wave_fit over k-splits down to a quarter of
# the slots', 8-16 warps and one tile per warp for Q2_0 (NEW, the pack's
# module) against HEAD (c301488, run 1's pack).
# 1. The quick suite (test_fill_rows also at 18939 x 3584) and verify.
# 2. NEW against HEAD at every shape where the plans differ among 25 model
#    shapes (plan_print): the five of run 1's sweep and 10240 x 5120,
#    20480 x 5120, 24576 x 4096, 9216 x 4096, 25600 x 5120 (not measured
#    before); NF4 and Q2_0 g128, bf16 and f32, m = 1 and 8, --graph.
#    Predicted from run 1's sweep (b/a): 11008 x 4096 NF4 1.00, Q2_0 m = 1
#    1.00-1.02, f32 m = 8 0.66; 18944 x 3584 NF4 m = 1 0.85, bf16 m = 8
#    0.86, f32 m = 8 1.0-1.09; Q2_0 m = 1 0.88-0.95, f32 m = 8 0.6;
#    22016 x 4096 NF4 0.97; Q2_0 unknown (k-split 1 in 11 warps: not
#    swept; k-split 2 in 12 was 0.86-0.97); 37888 x 3584 NF4 m = 1 0.91,
#    Q2_0 0.86-0.95.
# 3. 22016 x 4096 Q2_0 g128 at k-split 2 in 12 warps (run 1's best) beside
#    the plan, for the k-split 1 question.
# Here: bench/cuda-module.sh /tmp/b90 NEW; make; then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     bench/run-common.sh bench/gpu-ab.sh bench/results/v25/h200-run2.sh /tmp/mods/qgemv-cuda-HEAD.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run2; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
for plan in "" "ks=2,w=12"; do
  QGEMV_CUDA_PLAN=$plan timeout 60 qgemv bench --backend cuda --min-time 0.05 --working-set 512M --no-baseline --quiet \
    --graph --shape 22016x4096 --format q2_0 --dtype bf16,f32 --m 1,8 --csv "$O/q2-22016-${plan:-plan}.csv" > /dev/null 2>&1
  step "22016 '$plan'"; awk -F, 'NR > 1 { printf "%s %s m=%s %.2f us\n", $5, $6, $7, $9 * 1e6 }' "$O/q2-22016-${plan:-plan}.csv"
done
AB_PASSES=2 AB_DEADLINE=$((SECONDS + 330)) OUT=$O/ab timeout 420 bash "$here/gpu-ab.sh" qgemv-cuda-HEAD.so.xz \
  --shape 11008x4096 --shape 18944x3584 --shape 22016x4096 --shape 37888x3584 --shape 12288x4096 \
  --shape 10240x5120 --shape 20480x5120 --shape 24576x4096 --shape 9216x4096 --shape 25600x5120 \
  --format nf4,q2_0 --dtype bf16,f32 --m 1,8 --graph > "$O/ab.txt" 2> "$O/ab-log.txt"
step ab; cat "$O/ab.txt"
