#!/bin/bash
# v14 run 2 (issue 13): two instruction cuts in Q2_0's loop against the
# pack's module (NF4's words one block ahead, now the library's), and the
# v13 module (73441df) against the pack.
# Q2MH (-DQGC_EXP_Q2MH=1): the decode's shifts by 6 and 12 as IMAD.HI (FMA
# pipe) instead of SHF (ALU pipe, which 64 LOP3 + 16 SHF per 4 tile-blocks
# keep ~75% busy at 28 warps; ncu v13: math-pipe stalls 26%). Predicted:
# 2-5% at Q2_0 m = 1 if the ALU pipe's throttle holds Q2_0.
# BADDR (-DQGC_EXP_BADDR=1): B's shared address as a hoisted lane base plus
# block x stride (1 IMAD where ptxas makes 3 per block). Predicted: 1-3%.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/results/v14/h200-run2.sh /tmp/mods/qgemv-cuda-{Q2MH,BADDR,v13}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O"
t0=$SECONDS
for mod in Q2MH BADDR; do
  mkdir -p "$O/$mod"
  xz -dc "$here/qgemv-cuda-$mod.so.xz" > "$O/$mod/qgemv-cuda.so"
  QGEMV_PLUGIN_PATH=$O/$mod QGEMV_TEST_QUICK=1 CK_FORK=no timeout 100 "$here/test_cuda_backend" > "$O/suite-$mod.txt" 2>&1
  echo "suite $mod rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|Failure|Error:" "$O/suite-$mod.txt" | head -5
  rm -f "$O/$mod/qgemv-cuda.so"
done

AB_DEADLINE=200 OUT=$O/ab timeout 330 bash "$here/gpu-ab.sh" qgemv-cuda-v13.so.xz qgemv-cuda-Q2MH.so.xz qgemv-cuda-BADDR.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format all --dtype bf16,f32 --m 1,8 \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab.txt"
# NF4's plan with the words one block ahead (registers 107 -> 108 in its
# m = 1 kernel): does another geometry win now? (QGEMV_CUDA_PLAN, pack's module)
for plan in "" w=16 w=12 t=1 t=1,w=16 ks=1 ks=4; do
  QGEMV_CUDA_PLAN=$plan timeout 60 qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet \
    --shape 28672x8192 --shape 8192x28672 --format nf4 --dtype bf16,f32 --m 1 --csv "$O/plan-${plan:-default}.csv" > /dev/null 2>> "$O/plan-log.txt"
  echo "plan '${plan}': rc $? $(tail -n +2 "$O/plan-${plan:-default}.csv" | cut -d, -f3,4,6,9 | tr '\n' ' ')"
done
tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
echo "end ($((SECONDS - t0)) s)"
