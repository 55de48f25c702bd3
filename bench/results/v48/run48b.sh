#!/bin/bash
# v48, call 2 (bench/NOTES.md v48): the automatic rules (512 threads where
# a thread has a round of items at 512; NF4 up to 24 rows a CTA) against
# main before the change (main.so.xz), under QGEMV_CUDA_LAYOUT=auto; the
# norm at 256 and 512 threads under share; racecheck of the share kernels
# (call 1's ran past its limit): `qgemv verify` under share at 512 threads,
# then the suite's quick share case in the time left. From the repository
# root after `source .gpu/pack/env.sh`, OUT set; LEFT: seconds this script
# may take (default 540).
set -u
B=.gpu/pack/bin
S=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
D=$OUT/r48b
mkdir -p "$D"
t0=$(date +%s)
left() { echo $((${LEFT:-540} - ($(date +%s) - t0))); }
step() { echo "== $(($(date +%s) - t0)) s: $*"; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$D/gpu.txt"

step "racecheck: qgemv verify, share, 512 threads"
QGEMV_CUDA_PLAN=st=512 QGEMV_CUDA_LAYOUT=share timeout 120 "$S" --tool racecheck --kernel-name kns=share_kernel \
  --error-exitcode 9 qgemv verify --backend cuda >"$D/racecheck-verify.txt" 2>&1
echo "racecheck verify rc $?"; tail -n 3 "$D/racecheck-verify.txt"

step "A/B under auto: a0 main, b the rules"
AB_PASSES=2 AB_DEADLINE=60 timeout 150 bash $B/gpu-ab.sh main.so.xz --shape 1024x4096 --shape 1536x4096 \
  --shape 2048x4096 --shape 2176x4096 --shape 3072x4096 --shape 3200x4096 --shape 4096x4096 --shape 1024x8192 \
  --shape 1024x14336 --format all --dtype f32,bf16 --m 1 --graph >"$D/ab-auto.txt" 2>"$D/ab-auto.err"
echo "ab auto rc $?"; cat "$D/ab-auto.txt"; mv "$OUT/ab.tar.xz" "$D/ab-auto.tar.xz"

step "A/B with the norm under share: a0 st=256, a1 st=512, b auto"
QGEMV_CUDA_LAYOUT=share AB_PASSES=1 timeout 100 bash $B/gpu-ab.sh @st=256 @st=512 \
  --shape 1024x4096 --shape 2048x4096 --shape 4096x4096 --shape 1024x14336 --rmsnorm --format all --dtype f32,bf16 \
  --m 1 --graph >"$D/ab-norm.txt" 2>"$D/ab-norm.err"
echo "ab norm rc $?"; cat "$D/ab-norm.txt"; mv "$OUT/ab.tar.xz" "$D/ab-norm.tar.xz"

t=$(($(left) - 15))
step "racecheck: the suite's quick share case (${t} s)"
if [ "$t" -gt 30 ]; then
  QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=share timeout "$t" "$S" --tool racecheck --kernel-name kns=share_kernel \
    --error-exitcode 9 $B/test_cuda_backend >"$D/racecheck.txt" 2>&1
  echo "racecheck rc $?"; tail -n 3 "$D/racecheck.txt"
fi
step done
