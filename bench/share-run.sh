#!/bin/bash
# The share form on the GPU machine (issue 13, bench/NOTES.md v45): its
# suite case, the sanitizers on its kernels, `qgemv verify` with the
# automatic choice and with QGEMV_CUDA_LAYOUT=share, the LUT's suite case
# (its upload was refactored beside the share form's), then the m = 1
# bench at small shapes under the three layouts (the share form forced only
# where auto may not take it); "between": the shapes at the automatic
# rule's edge under auto and tiles; "large": the shapes at m = 1;
# "llama": llama3-8b's decode step. Run
# from the repository root after `source .gpu/pack/env.sh`, OUT set; what
# runs is chosen by SHARE_STEPS (default "check bench"). Everything lands in $OUT/share and
# in $OUT/share.tar.xz (the device tool brings back at most 8 files).
set -u
B=.gpu/pack/bin
S=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
D=$OUT/share
mkdir -p "$D"
steps=" ${SHARE_STEPS:-check bench} "
t0=$(date +%s)
step() { echo "== $(($(date +%s) - t0)) s: $*"; }
# join_rows HEADER FILE...: one line a table row of `qgemv bench` (shape,
# format, dtype; a form's name such as "share" dropped), then its median us
# in each FILE in turn
join_rows() {
  local header=$1
  shift
  awk -v header="$header" '$1 == "-" { for (i = 4; $i != "f32" && $i != "bf16"; i++); key = $2 " " $3 " " $i
       if (!(key in t)) order[n++] = key; t[key] = t[key] " " $(i + 2) }
       END { print header; for (i = 0; i < n; i++) print order[i] ":" t[order[i]] }' "$@"
}
# bench_under LAYOUT NAME SECONDS ARGS...: `qgemv bench` at m = 1 in graphs,
# no baseline, under QGEMV_CUDA_LAYOUT=LAYOUT, into $D/NAME-LAYOUT.{txt,json}
bench_under() {
  local lay=$1 name=$2 secs=$3
  shift 3
  QGEMV_CUDA_LAYOUT=$lay timeout "$secs" qgemv bench --backend cuda "$@" --format all --dtype f32,bf16 --m 1 \
    --graph --no-baseline --min-time 0.2 --working-set 256M --json "$D/$name-$lay.json" >"$D/$name-$lay.txt" 2>&1
  echo "bench $name $lay rc $?"
}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader

if [[ $steps == *" check "* ]]; then
  step "test_cuda_backend, case share"
  CK_FORK=no CK_RUN_CASE=share timeout 240 $B/test_cuda_backend >"$D/test-share.txt" 2>&1
  echo "test share rc $?"
  tail -n 3 "$D/test-share.txt"
  step "racecheck and memcheck of the share kernels (background), verify, the LUT case"
  for tool in racecheck memcheck; do
    (QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=share timeout 240 "$S" --tool $tool --kernel-name kns=share_kernel \
      --error-exitcode 9 $B/test_cuda_backend >"$D/$tool.txt" 2>&1
    echo "$tool rc $?" >>"$D/$tool.txt") &
  done
  qgemv verify --backend cuda >"$D/verify.txt" 2>&1
  echo "verify rc $?"
  QGEMV_CUDA_LAYOUT=share qgemv verify --backend cuda >"$D/verify-share.txt" 2>&1
  echo "verify share rc $?"
  QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=lut timeout 200 $B/test_cuda_backend >"$D/test-lut.txt" 2>&1
  echo "test lut rc $?"
  wait
  tail -n 2 "$D/racecheck.txt" "$D/memcheck.txt"
fi

if [[ $steps == *" bench "* ]]; then
  small="--shape 256x4096 --shape 512x4096 --shape 1024x4096"
  large="--shape 2048x4096 --shape 4096x4096 --shape 1024x14336" # where auto may not take the share form
  for lay in auto tiles share; do
    step "bench, QGEMV_CUDA_LAYOUT=$lay"
    shapes="$small $large"
    [ $lay = share ] && shapes=$large
    bench_under $lay m1 200 $shapes
  done
  grep -h streaming "$D"/m1-*.txt
  join_rows "shape format dtype: auto tiles share (us)" "$D/m1-auto.txt" "$D/m1-tiles.txt" "$D/m1-share.txt"
  step "bench, RMSNorm, auto and tiles"
  for lay in auto tiles; do bench_under $lay norm 100 --shape 1024x4096 --shape 256x4096 --rmsnorm; done
  join_rows "rmsnorm shape format dtype: auto tiles (us)" "$D/norm-auto.txt" "$D/norm-tiles.txt"
fi

if [[ $steps == *" between "* ]]; then
  # the shapes around the automatic rule's edge (16 rows a CTA: on 132 SMs
  # 2112 rows take the share form, 2176 the tiles; on an H200 the same)
  for lay in auto tiles; do
    step "bench at the rule's edge, QGEMV_CUDA_LAYOUT=$lay"
    bench_under $lay edge 120 --shape 1024x8192 --shape 1536x4096 --shape 2112x4096 --shape 2176x4096
  done
  join_rows "shape format dtype: auto tiles (us)" "$D/edge-auto.txt" "$D/edge-tiles.txt"
fi

if [[ $steps == *" large "* ]]; then
  # the shapes at m = 1 (the issue card's table), weights rotated
  # beyond L2 by the bench's default working set
  step "bench, the issue's shapes, m = 1"
  timeout 150 qgemv bench --backend cuda --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 \
    --shape 4096x14336 --shape 4096x4096 --shape 1024x4096 --format all --dtype f32,bf16 --m 1 --graph \
    --json "$D/large.json" >"$D/large.txt" 2>&1
  echo "bench large rc $?"
  grep -E '^-|streaming' "$D/large.txt"
fi

if [[ $steps == *" llama "* ]]; then
  step "llama3-8b's decode step, auto"
  timeout 120 qgemv bench --backend cuda --preset llama3-8b --format all --dtype bf16 --m 1 --graph --min-time 0.2 \
    --json "$D/llama.json" >"$D/llama.txt" 2>&1
  echo "bench llama rc $?"
  tail -n 12 "$D/llama.txt"
fi
step done
tar cJf "$OUT/share.tar.xz" -C "$OUT" share
