#!/bin/bash
# v48, call 1 (bench/NOTES.md v48): the share form at 256 or 512 threads a
# CTA, one kernel taking the count at launch. Under QGEMV_CUDA_LAYOUT=share,
# in gpu-ab's alternating passes: a0 main's module before the change
# (main.so.xz, 256 threads), a1 the pack's at st=256, a2 at st=512, b at
# the automatic count; the tiles at the same shapes; the same A/B with the
# norm; the share suite case (both counts), racecheck/memcheck of the share
# kernels, `qgemv verify` under share at each count; on an H200 the
# issue's shapes and llama3-8b (share-run.sh). From the repository root
# after `source .gpu/pack/env.sh`, OUT set. AB_S: gpu-ab's deadline.
set -u
B=.gpu/pack/bin
S=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
D=$OUT/r48
mkdir -p "$D"
t0=$(date +%s)
step() { echo "== $(($(date +%s) - t0)) s: $*"; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$D/gpu.txt"
shapes="--shape 1024x4096 --shape 1536x4096 --shape 2048x4096 --shape 2176x4096 --shape 3072x4096
  --shape 4096x4096 --shape 1024x8192 --shape 1024x14336 --shape 4096x14336 --shape 14336x4096"

step "correctness (background: racecheck, memcheck of the share kernels, quick: both counts)"
for tool in racecheck memcheck; do
  (QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=share timeout 200 "$S" --tool $tool --kernel-name kns=share_kernel \
    --error-exitcode 9 $B/test_cuda_backend >"$D/$tool.txt" 2>&1
  echo "$tool rc $?" >>"$D/$tool.txt") &
done
CK_FORK=no CK_RUN_CASE=share timeout 240 $B/test_cuda_backend >"$D/test-share.txt" 2>&1
echo "test share rc $?"; tail -n 2 "$D/test-share.txt"
for st in 256 512; do
  QGEMV_CUDA_PLAN=st=$st QGEMV_CUDA_LAYOUT=share qgemv verify --backend cuda >"$D/verify-share-$st.txt" 2>&1
  echo "verify share st=$st rc $?"; tail -n 1 "$D/verify-share-$st.txt"
done
qgemv verify --backend cuda >"$D/verify.txt" 2>&1
echo "verify auto rc $?"; tail -n 1 "$D/verify.txt"
wait # the sanitizers, before anything is timed
tail -n 1 "$D/racecheck.txt" "$D/memcheck.txt"

step "A/B under share: a0 main (256), a1 st=256, a2 st=512, b auto"
QGEMV_CUDA_LAYOUT=share AB_PASSES=${AB_P:-2} AB_DEADLINE=${AB_S:-150} timeout 420 bash $B/gpu-ab.sh main.so.xz @st=256 \
  @st=512 $shapes --format all --dtype f32,bf16 --m 1 --graph >"$D/ab-share.txt" 2>"$D/ab-share.err"
echo "ab rc $?"; cat "$D/ab-share.txt"; mv "$OUT/ab.tar.xz" "$D/ab-share.tar.xz"

step "the tiles at the same shapes"
QGEMV_CUDA_LAYOUT=tiles timeout 150 qgemv bench --backend cuda $shapes --format all --dtype f32,bf16 --m 1 --graph \
  --no-baseline --min-time 0.1 --working-set 512M --csv "$D/tiles.csv" >"$D/tiles.txt" 2>&1
echo "tiles rc $?"; grep -E '^-|streaming' "$D/tiles.txt"

step "A/B with the norm: a0 st=256, a1 st=512, b auto"
QGEMV_CUDA_LAYOUT=share AB_PASSES=1 AB_DEADLINE=60 timeout 200 bash $B/gpu-ab.sh @st=256 @st=512 \
  --shape 1024x4096 --shape 2048x4096 --shape 4096x4096 --shape 1024x14336 --rmsnorm --format all --dtype f32,bf16 \
  --m 1 --graph >"$D/ab-norm.txt" 2>"$D/ab-norm.err"
echo "ab norm rc $?"; cat "$D/ab-norm.txt"; mv "$OUT/ab.tar.xz" "$D/ab-norm.tar.xz"

if grep -q H200 "$D/gpu.txt" && [ $(($(date +%s) - t0)) -lt ${RUN_BUDGET:-420} ]; then
  step "H200: the issue's shapes and llama3-8b (share-run.sh)"
  SHARE_STEPS="large llama" timeout 200 bash $B/share-run.sh
fi
step done
