#!/bin/bash
# v15 run 1 (issue 13): where the three-term staging's time goes (Q2_0 f32
# x and the fused RMSNorm), and whether the norm's sums of squares after
# the staging's barrier take their part off the critical path.
# TL15 (-DQGC_EXP_TIMELINE=1 at a18a790 + the staging's own points, slots
# 12-15: thread 0's and the CTA's last thread's values in registers,
# thread 0's terms stored, the norm's first barrier), on the six cases of
# v13 run 4 plus Q2_0 g128 f32; TLSSQL (the timeline with
# QGC_EXP_SSQ_LATE=1) and TLE0 (with QGC_EXP_EARLY=0: no ring stage
# before the wait, x and gamma ahead of the weights) on the norm cases.
# Then SSQL (QGC_EXP_SSQ_LATE=1): the quick suite, and gpu-ab.sh against
# the pack on --rmsnorm. Predicted (v13 run 4: the norm's stage 4.37 us
# against f32 plain's 3.33): SSQL 0.5-1 us off Q2_0 bf16's norm (1.18x ->
# ~1.15x) and NF4's, nothing on the plain rows.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/lab/timeline.py bench/results/v15/h200-run1.sh /tmp/mods/qgemv-cuda-{TL15,TLSSQL,TLE0,SSQL}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
mkdir -p "$O/tl"
t0=$SECONDS
for mod in TL15 TLSSQL TLE0 SSQL; do
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
timeline TL15 "q2_0g64 bf16 plain" "q2_0g64 bf16 norm" "q2_0g64 f32 plain" "q2_0g64 f32 norm" "q2_0 f32 plain" \
  "nf4 bf16 plain" "nf4 bf16 norm"
timeline TLSSQL "q2_0g64 bf16 norm" "q2_0g64 f32 norm" "nf4 bf16 norm"
timeline TLE0 "q2_0g64 bf16 norm" "q2_0g64 f32 plain" "nf4 bf16 norm"
python3 "$here/timeline.py" "$O"/tl/*.bin > "$O/tl-summary.txt" 2>&1
cat "$O/tl-summary.txt"

QGEMV_PLUGIN_PATH=$O/SSQL QGEMV_TEST_QUICK=1 CK_FORK=no timeout 100 "$here/test_cuda_backend" > "$O/suite-SSQL.txt" 2>&1
echo "suite SSQL rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|Failure|Error:" "$O/suite-SSQL.txt" | head -5
for mod in TL15 TLSSQL TLE0 SSQL; do rm -f "$O/$mod/qgemv-cuda.so"; done

AB_DEADLINE=120 OUT=$O/ab-norm timeout 240 bash "$here/gpu-ab.sh" qgemv-cuda-SSQL.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --format all --dtype bf16,f32 --m 1,8 --rmsnorm \
  > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
echo "end ($((SECONDS - t0)) s)"
