#!/bin/bash
# v48, call 2 (bench/NOTES.md v48): the automatic rules (512 threads where
# a thread has a round of items at 512; NF4 up to 24 rows a CTA) against
# main before the change (main.so.xz), under QGEMV_CUDA_LAYOUT=auto; the
# norm at 256 and 512 threads under share; racecheck of the share kernels
# (call 1's ran past its limit): `qgemv verify` under share at 512 threads,
# then the suite's quick share case in the time left. From the repository
# root after `source .gpu/pack/env.sh`, OUT set; LEFT: seconds this script
# may take (default 540). bench/run-common.sh, packed beside it, gives the
# set-up and packs /tmp/r48b into $OUT/r48b.tar.xz at exit.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r48b; source "$here/run-common.sh"
B=$here
S=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
left() { echo $((${LEFT:-540} - (SECONDS - t0))); }

# racecheck of `qgemv verify` under share at 512 threads
QGEMV_CUDA_PLAN=st=512 QGEMV_CUDA_LAYOUT=share timeout 120 "$S" --tool racecheck --kernel-name kns=share_kernel \
  --error-exitcode 9 qgemv verify --backend cuda >"$O/racecheck-verify.txt" 2>&1
step "racecheck, verify, share, 512 threads"
tail -n 3 "$O/racecheck-verify.txt"

# the rules under auto: a0 main, b the pack's
AB_PASSES=2 AB_DEADLINE=60 timeout 150 bash $B/gpu-ab.sh main.so.xz --shape 1024x4096 --shape 1536x4096 \
  --shape 2048x4096 --shape 2176x4096 --shape 3072x4096 --shape 3200x4096 --shape 4096x4096 --shape 1024x8192 \
  --shape 1024x14336 --format all --dtype f32,bf16 --m 1 --graph >"$O/ab-auto.txt" 2>"$O/ab-auto.err"
step "A/B under auto: a0 main, b the rules"
cat "$O/ab-auto.txt"; mv "$OUT/ab.tar.xz" "$O/ab-auto.tar.xz"

# the norm under share: a0 st=256, a1 st=512, b auto
QGEMV_CUDA_LAYOUT=share AB_PASSES=1 timeout 100 bash $B/gpu-ab.sh @st=256 @st=512 \
  --shape 1024x4096 --shape 2048x4096 --shape 4096x4096 --shape 1024x14336 --rmsnorm --format all --dtype f32,bf16 \
  --m 1 --graph >"$O/ab-norm.txt" 2>"$O/ab-norm.err"
step "A/B with the norm under share"
cat "$O/ab-norm.txt"; mv "$OUT/ab.tar.xz" "$O/ab-norm.tar.xz"

# racecheck of the suite's quick share case in the time left
t=$(($(left) - 15))
if [ "$t" -gt 30 ]; then
  QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=share timeout "$t" "$S" --tool racecheck --kernel-name kns=share_kernel \
    --error-exitcode 9 $B/test_cuda_backend >"$O/racecheck.txt" 2>&1
  step "racecheck, the suite's quick share case (${t} s)"
  tail -n 3 "$O/racecheck.txt"
fi
