#!/bin/bash
# v28 run 3 (issue 13): the library with the scales paired (SP, run 2: the
# quick suite 36/36 and verify 24/24 as a module; NF4 28672 x 8192 bf16
# m = 1 0.978-0.98x, every other row within 1.6%) as the pack's own
# module: compute-sanitizer memcheck and racecheck on the suite, the
# kernels' registers and spills (sass), then the issue's five shapes at
# m = 1, every format, bf16 and f32 (JSON), as far as the time allows.
# Here: bench/cuda-module.sh /tmp/b90 base (SP is the default); then
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#     /tmp/b90/tests/.libs/test_hardening_cuda bench/run-common.sh bench/gpu-pack-run.sh \
#     bench/results/v28/h200-run3.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run3; source "$here/run-common.sh"
GPU_DEADLINE=470 OUT=$O/san timeout 540 bash "$here/gpu-pack-run.sh" sanitize sass > "$O/sanitize-log.txt" 2>&1
step sanitize; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:|passed|spill|local" "$O/sanitize-log.txt" | head -16
if [ $((SECONDS - t0)) -lt 470 ]; then
  timeout $((575 - (SECONDS - t0))) qgemv bench --backend cuda --shape 28672x8192 --shape 8192x28672 \
    --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --format all --dtype bf16,f32 --m 1 --min-time 0.1 \
    --json "$O/bench-m1.json" > "$O/bench-m1.txt" 2>&1
  step bench-m1; cat "$O/bench-m1.txt" | tail -35
fi
