#!/bin/bash
# small_share device run: writes only $OUT/ss.json and $OUT/log.txt (~3 min)
export PATH=$PATH:/usr/local/cuda/bin
B=.gpu/ss/small_share
{
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
timeout 300 $B --json $OUT/ss.json --deadline 240; echo "small_share exit $?"
echo "== ncu, 4096x4096, the first launch of each variant (no graph; ncu's clocks)"
M0=gpu__time_duration.sum,smsp__issue_active.avg.per_cycle_active,smsp__warps_eligible.avg.per_cycle_active,smsp__warps_active.avg.per_cycle_active,smsp__sass_inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
M=$M0,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second
for v in nf4-f32x@8x512 nf4l-f32x@8x512 nf4p1-f32x@8x512 nf4p16-f32x@8x512 nf4p32-f32x@8x512 nf4p32-r2-f32x@4x512 q2g64-f32x@8x256 q2g64l-f32x@8x256 q2g64l-r2-f32x@4x256; do
  echo "-- $v"
  r=$(timeout 60 ncu --metrics $M -k regex:'share_kernel|lean_kernel' -c 1 $B --no-time --shape 4096x4096 --variants $v 2>&1)
  echo "$r" | grep -q gpu__time_duration || { echo "(retry with the metrics seen before)"; M=$M0; r=$(timeout 60 ncu --metrics $M -k regex:'share_kernel|lean_kernel' -c 1 $B --no-time --shape 4096x4096 --variants $v 2>&1); }
  echo "$r" | grep -E '^\s+(gpu__|sm__|smsp__|l1tex__)|err/R|==ERR'
done
echo "== SASS opcode counts (whole kernel)"
cuobjdump -sass $B | python3 .gpu/ss/sass.py
} 2>&1 | tee $OUT/log.txt
