#!/bin/bash
# v23 run 2 (issue 13), with 80f67a3's module (the library's kernels):
# 1. bench/lab/launch_gap: the small shapes' time per call on a stream
#    (as qgemv bench times it), the host's time to queue a call, and the
#    same calls in a CUDA graph (as engines run decode, and as issue 13's
#    ggml-cuda figures were taken). Predicted: if the host's launch path
#    (the plan, cudaLaunchKernelEx) costs about a kernel's time at 4096
#    rows, the graph is 10-30% faster there and equal at 28672 x 8192.
# 2. ncu of Q2_0 f32 x m = 8 at 28672 x 8192, g128 (24 columns, one tile
#    per warp) and g64 (two launches of 16 columns) (v22's queued
#    question: what holds Q2_0's f32 batched loop), and of one 4096 x 4096
#    bf16 m = 1 launch, NF4 and Q2_0 g128 (its time alone, under ncu,
#    against the stream's per-call time).
# Here: cc -std=c11 -O2 -Iinclude bench/lab/launch_gap.c -o /tmp/launch_gap \
#   -L/tmp/b90/.libs -lqgemv -ldl; then
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/gpu-pack-run.sh \
#     bench/ncu-insn.py /tmp/launch_gap bench/results/v23/h200-run2.sh \
#     /tmp/mods/qgemv-cuda-HEAD80.so.xz
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run2; source "$here/run-common.sh"
mkdir -p /tmp/m80 && xz -dc "$here/qgemv-cuda-HEAD80.so.xz" > /tmp/m80/qgemv-cuda.so
export QGEMV_PLUGIN_PATH=/tmp/m80
timeout 240 "$here/launch_gap" 400 7 > "$O/launch-gap.txt" 2> "$O/launch-gap-err.txt"
step launch_gap; cat "$O/launch-gap.txt"; tail -3 "$O/launch-gap-err.txt"
PROFILE_CASES="q2_0 f32 28672x8192 8,q2_0g64 f32 28672x8192 8,q2_0 bf16 4096x4096 1,nf4 bf16 4096x4096 1" \
  GPU_DEADLINE=300 OUT=$O/prof timeout 330 bash "$here/gpu-pack-run.sh" profile > "$O/prof-log.txt" 2>&1
step profile; tail -40 "$O/prof-log.txt"
