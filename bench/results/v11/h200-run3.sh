#!/bin/bash
# v11 run 3 (issue 13), on the H200 from a pack of main with the batched
# Q2_0 g64 wide-kernel plan (sm_90 + sm_121), with sm_90 modules:
#   qgemv-cuda-main.so.xz    90887ec (before the plan change)
#   qgemv-cuda-nowait.so.xz  90887ec + -DQGC_EXP_NOWAIT=1 (no griddepcontrol.wait)

# (branch exp11). there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
# 1. gpu-ab 90887ec against the pack: Q2_0 g64 bf16 m = 2, 4, 8;
# 2. gpu-ab 90887ec, nowait against the pack: every format, bf16 m = 1;
# 3. gpu-pack-run.sh check (the suites, qgemv verify).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run3
mkdir -p "$O"
t0=$SECONDS
OUT=$O/ab1 timeout 200 bash "$here/gpu-ab.sh" qgemv-cuda-main.so.xz \
  --shape 28672x8192 --shape 14336x4096 --shape 8192x28672 --format q2_0g64 --dtype bf16 --m 2,4,8 \
  > "$O/ab1-table.txt" 2> "$O/ab1-log.txt"
echo "ab1 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab1-table.txt"
OUT=$O/ab2 timeout 200 bash "$here/gpu-ab.sh" qgemv-cuda-main.so.xz qgemv-cuda-nowait.so.xz \
  --shape 28672x8192 --shape 4096x4096 --format all --dtype bf16 --m 1 \
  > "$O/ab2-table.txt" 2> "$O/ab2-log.txt"
echo "ab2 rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab2-table.txt"
OUT=$O/check GPU_DEADLINE=150 timeout 170 bash "$here/gpu-pack-run.sh" check > /dev/null 2>&1
echo "check rc=$? ($((SECONDS - t0)) s)"
grep -E "Checks|verify|passed|FAIL|exit" "$O/check/log.txt" | head -20
tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
echo "end ($((SECONDS - t0)) s)"
