#!/bin/bash
# The share form on the GPU machine (issue 13, bench/NOTES.md v45): its
# suite case, the sanitizers on its kernels, `qgemv verify` with the
# automatic choice and with QGEMV_CUDA_LAYOUT=share, the LUT's suite case
# (its upload was refactored beside the share form's), then the m = 1
# bench at small shapes under the three layouts. Run from the repository
# root after `source .gpu/pack/env.sh`, OUT set; what runs is chosen by
# SHARE_STEPS (default "check bench"). Everything lands in $OUT/share and
# in $OUT/share.tar.xz (the device tool brings back at most 8 files).
set -u
B=.gpu/pack/bin
S=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
D=$OUT/share
mkdir -p "$D"
steps=" ${SHARE_STEPS:-check bench} "
t0=$(date +%s)
step() { echo "== $(($(date +%s) - t0)) s: $*"; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader

if [[ $steps == *" check "* ]]; then
  step "test_cuda_backend, case share"
  CK_FORK=no CK_RUN_CASE=share timeout 240 $B/test_cuda_backend >"$D/test-share.txt" 2>&1
  echo "test share rc $?"
  tail -n 3 "$D/test-share.txt"
  step "racecheck of the share kernels (background), verify, the LUT case"
  (QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=share timeout 300 "$S" --tool racecheck --kernel-name kns=share_kernel \
    --error-exitcode 9 $B/test_cuda_backend >"$D/racecheck.txt" 2>&1
  echo "racecheck rc $?" >>"$D/racecheck.txt") &
  qgemv verify --backend cuda >"$D/verify.txt" 2>&1
  echo "verify rc $?"
  QGEMV_CUDA_LAYOUT=share qgemv verify --backend cuda >"$D/verify-share.txt" 2>&1
  echo "verify share rc $?"
  QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=lut timeout 240 $B/test_cuda_backend >"$D/test-lut.txt" 2>&1
  echo "test lut rc $?"
  wait
  tail -n 2 "$D/racecheck.txt"
  step "memcheck of the share kernels"
  QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=share timeout 240 "$S" --tool memcheck --kernel-name kns=share_kernel \
    --error-exitcode 9 $B/test_cuda_backend >"$D/memcheck.txt" 2>&1
  echo "memcheck rc $?"
  tail -n 2 "$D/memcheck.txt"
fi

if [[ $steps == *" bench "* ]]; then
  shapes="--shape 256x4096 --shape 512x4096 --shape 1024x4096 --shape 2048x4096 --shape 4096x4096 --shape 1024x14336"
  for lay in auto tiles share; do
    step "bench, QGEMV_CUDA_LAYOUT=$lay"
    QGEMV_CUDA_LAYOUT=$lay timeout 200 qgemv bench --backend cuda $shapes --format all --dtype f32,bf16 --m 1 \
      --graph --no-baseline --min-time 0.2 --working-set 256M --json "$D/m1-$lay.json" >"$D/m1-$lay.txt" 2>&1
    echo "bench $lay rc $?"
  done
  grep -h streaming "$D"/m1-*.txt
  # one line a row: shape format dtype, then us under auto, tiles, share
  awk '$1 == "-" { key = $2 " " $3 " " $4; if (!(key in t)) order[n++] = key; t[key] = t[key] " " $6 }
       END { print "shape format dtype: auto tiles share (us)"; for (i = 0; i < n; i++) print order[i] ":" t[order[i]] }' \
    "$D/m1-auto.txt" "$D/m1-tiles.txt" "$D/m1-share.txt"
  step "bench, RMSNorm, auto and tiles"
  for lay in auto tiles; do
    QGEMV_CUDA_LAYOUT=$lay timeout 100 qgemv bench --backend cuda --shape 1024x4096 --shape 256x4096 --format all \
      --dtype f32,bf16 --m 1 --rmsnorm --graph --no-baseline --min-time 0.2 --working-set 256M \
      --json "$D/norm-$lay.json" >"$D/norm-$lay.txt" 2>&1
    echo "bench norm $lay rc $?"
  done
  awk '$1 == "-" { key = $2 " " $3 " " $4; if (!(key in t)) order[n++] = key; t[key] = t[key] " " $6 }
       END { print "rmsnorm shape format dtype: auto tiles (us)"; for (i = 0; i < n; i++) print order[i] ":" t[order[i]] }' \
    "$D/norm-auto.txt" "$D/norm-tiles.txt"
  step "llama3-8b's decode step, auto"
  timeout 120 qgemv bench --backend cuda --preset llama3-8b --format all --dtype bf16 --m 1 --graph --min-time 0.2 \
    --json "$D/llama.json" >"$D/llama.txt" 2>&1
  echo "bench llama rc $?"
  tail -n 12 "$D/llama.txt"
fi
step done
tar cJf "$OUT/share.tar.xz" -C "$OUT" share
