#!/bin/bash
# v15 run 2 (issue 13): the three-term staging without its test per
# element. Run 1's timeline: thread 0's terms took 1.8-2.6 us after its
# values (Q2_0 g64 f32 plain and the norm; NF4's fp16 terms 0.2-0.4 us):
# b3_next's test for inf/NaN is a branch per element, ~1000 instructions
# per thread, 16 warps on 4 schedulers. The pack (a18a790 + v15's change:
# warps whose values are all finite take stage_next_b3_finite, one PRMT and
# two FADD per pair; the norm's sums of squares eight loads ahead) against
# OLD (a18a790's staging) and NSSQL (the pack + QGC_EXP_SSQ_LATE=1).
# Predicted: Q2_0 f32 x and the norm at 28672 x 8192 m = 1 1.5-2 us
# faster (f32 30.6 -> ~29, bf16 norm 31.8 -> ~30); NF4 and bf16 plain
# unchanged. TLNEW / TLNSSQL: the timeline of both (tl_after now orders
# its read after the loads).
# First the quick suite with the pack's module (with test_nonfinite_x:
# NaN and inf x through B per CTA, in phases, and B per warp).
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/lab/timeline.py bench/results/v15/h200-run2.sh /tmp/mods/qgemv-cuda-{OLD,NSSQL,TLNEW,TLNSSQL}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
rm -rf "$O"
mkdir -p "$O/tl"
t0=$SECONDS
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$here/test_cuda_backend" > "$O/suite-pack.txt" 2>&1
echo "suite pack rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|Failure|Error:|:F:|:E:" "$O/suite-pack.txt" | head -8
for mod in TLNEW TLNSSQL; do
  mkdir -p "$O/$mod"
  xz -dc "$here/qgemv-cuda-$mod.so.xz" > "$O/$mod/qgemv-cuda.so"
done
bench=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
timeline() { # module, then cases "format dtype plain|norm"
  local mod=$1; shift
  for c in "$@"; do
    set -- $c
    local name=$mod-$1-$2-$3 extra=()
    [ "$3" = norm ] && extra=(--rmsnorm)
    QGEMV_PLUGIN_PATH=$O/$mod QGEMV_CUDA_TIMELINE=$O/tl/$name.bin timeout 60 "${bench[@]}" --format "$1" --dtype "$2" \
      --shape 28672x8192 --m 1 "${extra[@]}" --csv "$O/tl/$name.csv" > /dev/null 2>> "$O/log.txt"
    echo "$name: rc $? $(tail -n 1 "$O/tl/$name.csv" | cut -d, -f9,14,15) ($((SECONDS - t0)) s)"
  done
}
timeline TLNEW "q2_0g64 bf16 plain" "q2_0g64 bf16 norm" "q2_0g64 f32 plain" "q2_0g64 f32 norm" "q2_0 f32 plain" \
  "nf4 bf16 norm"
timeline TLNSSQL "q2_0g64 bf16 norm" "q2_0g64 f32 norm" "nf4 bf16 norm"
python3 "$here/timeline.py" "$O"/tl/*.bin > "$O/tl-summary.txt" 2>&1
cat "$O/tl-summary.txt"
for mod in TLNEW TLNSSQL; do rm -f "$O/$mod/qgemv-cuda.so"; done

AB_DEADLINE=100 OUT=$O/ab-f32 timeout 200 bash "$here/gpu-ab.sh" qgemv-cuda-OLD.so.xz qgemv-cuda-NSSQL.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format q2_0g64,q2_0 --dtype f32 \
  --m 1,8 > "$O/ab-f32.txt" 2> "$O/ab-f32-log.txt"
echo "ab f32 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-f32.txt"
AB_DEADLINE=120 OUT=$O/ab-norm timeout 240 bash "$here/gpu-ab.sh" qgemv-cuda-OLD.so.xz qgemv-cuda-NSSQL.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --format all --dtype bf16,f32 --m 1,8 --rmsnorm \
  > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
echo "end ($((SECONDS - t0)) s)"
