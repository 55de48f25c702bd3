#!/bin/bash
# v49, call 4 (bench/NOTES.md v49): the share kernel with its thread count
# a template argument (the pack's module) against main before the runtime
# count (f2ffce2, main.so.xz) and the runtime count of v48 (rt.so.xz),
# under QGEMV_CUDA_LAYOUT=share at the automatic count; then its
# correctness: the suite's share case (quick, both contexts), `qgemv
# verify` under share at 256 and 512 threads, racecheck of verify at 256,
# memcheck of the quick share case. From the repository root after `source
# .gpu/pack/env.sh`, OUT set; LEFT (default 540). Packs /tmp/r49d into
# $OUT/r49d.tar.xz.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r49d; source "$here/run-common.sh"
B=$here
S=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
left() { echo $((${LEFT:-540} - (SECONDS - t0))); }

QGEMV_CUDA_LAYOUT=share AB_PASSES=2 AB_DEADLINE=170 timeout 220 bash $B/gpu-ab.sh main.so.xz rt.so.xz \
  --shape 1024x4096 --shape 1536x4096 --shape 2048x4096 --shape 2176x4096 --shape 4096x4096 --shape 1024x8192 \
  --shape 1024x14336 --format all --dtype f32,bf16 --m 1 --graph >"$O/ab-const.txt" 2>"$O/ab-const.err"
step "A/B under share: a0 main, a1 runtime count, b the count a template argument"
cat "$O/ab-const.txt"; mv "$OUT/ab.tar.xz" "$O/ab-const.tar.xz"

QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=share timeout 120 $B/test_cuda_backend >"$O/test-share.txt" 2>&1
step "the suite's share case, quick"
tail -n 2 "$O/test-share.txt"
for st in 256 512; do
  QGEMV_CUDA_PLAN=st=$st QGEMV_CUDA_LAYOUT=share timeout 60 qgemv verify --backend cuda >"$O/verify-$st.txt" 2>&1
  step "verify under share, st=$st"
  tail -n 1 "$O/verify-$st.txt"
done
QGEMV_CUDA_PLAN=st=256 QGEMV_CUDA_LAYOUT=share timeout 110 "$S" --tool racecheck --kernel-name kns=share_kernel \
  --error-exitcode 9 qgemv verify --backend cuda >"$O/racecheck-verify-256.txt" 2>&1
step "racecheck, verify, share, 256 threads"
tail -n 2 "$O/racecheck-verify-256.txt"
t=$(($(left) - 10))
if [ "$t" -gt 30 ]; then
  QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=share timeout "$t" "$S" --tool memcheck --kernel-name kns=share_kernel \
    --error-exitcode 9 $B/test_cuda_backend >"$O/memcheck.txt" 2>&1
  step "memcheck, the suite's quick share case (${t} s)"
  tail -n 2 "$O/memcheck.txt"
fi
