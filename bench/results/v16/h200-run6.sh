#!/bin/bash
# v16 run 6 (issue 13): the record at COMMIT (59e4b19: batched raw-mode
# launches stage by cp.async, run 4's ASY for m > 1 only, not in the wide
# kernel): gpu-pack-run.sh check bench sanitize (the suites run both
# staging paths on the GPU: m = 1 through registers, batched by cp.async,
# misaligned x through registers; verify; memcheck and racecheck).
# Predicted against run 2's record (66cebc9): batched bf16 Q2_0 and the
# kDG norm 10-20% faster at 8192 x 28672 and at 28672 x 8192 m = 16, the
# rest within 2%.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#   /tmp/b90/tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/ncu-insn.py bench/results/v16/h200-run6.sh
# there: source .gpu/pack/env.sh; COMMIT=<sha> OUT=$OUT bash .gpu/pack/bin/h200-run6.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=${OUT:-/tmp/out6}
mkdir -p "$O"
t0=$SECONDS

# straight into OUT, bench first: a call cut short by the device budget
# still brings back what was written
QGEMV_BENCH_COMMIT=${COMMIT:?set COMMIT} OUT=$O GPU_DEADLINE=200 timeout 420 \
  bash "$here/gpu-pack-run.sh" bench check sanitize
echo "record rc=$? ($((SECONDS - t0)) s)"
grep -E "exit|SUMMARY|Checks|verify|ERROR SUMMARY" "$O/log.txt" | head -30
