#!/bin/bash
# v16 run 5 (issue 13): the term modes' staging by cp.async
# (QGC_EXP_ASYNC_TERMS). Run 4: the raw modes' (direct, kDG) staging by
# cp.async, all of a thread's passes in flight before one wait, took
# batched bf16 launches 13-22% faster where they stage several passes
# (8192 x 28672 m = 8 53.1 -> 41.9 us, m = 16 95.1 -> 74.6; 28672 x 8192
# m = 16 58.0 -> 50.5) and one activation row's 0-3% slower: the pack now
# takes it for m > 1 (the library's). The term modes (NF4's fp16 terms,
# Q2_0's three bf16 terms: f32 x, the norm with f32 gamma) still wait for
# each pass's loads. ASYT1 fetches a unit's x (and gamma) by cp.async into
# the unit's own B slots (bf16 x 32 bytes, f32 64, gamma after it, where
# they fit the SPL x 32 bytes the terms take), every pass before one wait,
# then makes the terms there from the same values: m > 1. ASYT2 also at
# m = 1 where the staging takes several passes.
# Predicted: batched NF4 (bf16 and f32 x) and Q2_0 f32 x 5-20% faster at
# 8192 x 28672 and 28672 x 8192 m = 8, 16; ASYT2 m = 1 at 8192 x 28672
# 0-5% faster (f32 x, two loads per unit).
# First the quick suite with ASYT2 (every term mode on the GPU, batched
# and one row), then gpu-ab.sh ASYT1 ASYT2 against the pack.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/results/v16/h200-run5.sh /tmp/mods/qgemv-cuda-{ASYT1,ASYT2}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run5.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run5
rm -rf "$O"
mkdir -p "$O/ASYT2"
t0=$SECONDS
xz -dc "$here/qgemv-cuda-ASYT2.so.xz" > "$O/ASYT2/qgemv-cuda.so"
QGEMV_PLUGIN_PATH=$O/ASYT2 QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite-ASYT2.txt" 2>&1
echo "suite ASYT2 rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite-ASYT2.txt" | head -8
rm -f "$O/ASYT2/qgemv-cuda.so"

AB_DEADLINE=$((SECONDS + 100)) OUT=$O/ab timeout 260 bash "$here/gpu-ab.sh" qgemv-cuda-ASYT1.so.xz qgemv-cuda-ASYT2.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 4096x14336 --format nf4,q2_0g64 --dtype f32,bf16 --m 1,8,16 \
  > "$O/ab.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab.txt"
AB_DEADLINE=$((SECONDS + 40)) OUT=$O/ab-norm timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-ASYT1.so.xz \
  --shape 28672x8192 --shape 8192x28672 --format nf4,q2_0g64 --dtype f32,bf16 --m 1,8 --rmsnorm \
  > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run5.tar.xz" run5
echo "end ($((SECONDS - t0)) s)"
