#!/bin/bash
# v16 run 3 (issue 13): the norm with bf16 x and bf16 gamma at m = 1.
# Run 2 measured kDG (gamma in A, the default since 66cebc9) against kB3
# (three bf16 terms of x gamma in B): batched 2-3x faster, m = 1 0.78-0.94
# at three shapes but 1.12-1.20x slower at 28672 x 8192 (36.6 against
# 30.6 us, plain 26.4). kDG adds 4 packed multiplies per A fragment (~18
# of Q2_0's ~55 instructions per tile-block), which an issue-bound loop
# pays at every m. kB2 (QGC_EXP_NORM_B2): x gamma as kB3's first two cut
# terms, exact for bf16 x bf16 (the third is always zero): at m = 1 the
# loop is the direct mode's (two columns, one mma), only the staging and
# the epilogue differ. B2W: kB2 plus its own wide kernel (28 warps, as the
# plain direct mode takes at k-split 2).
# Predicted: m = 1 kB2 28-31 us at 28672 x 8192 and 8192 x 28672 (kDG
# 36.6, 37.2), B2W a further 1-2 us at 28672 x 8192; m = 8 kB2 within
# 10% of kDG (16 columns against 8 plus four multiplies), m = 16 10-30%
# slower (two launches of 16 columns).
# Then the timeline of both at m = 1 (TLDG: the pack's kernels; TLB2) and
# plain bf16 beside them.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/lab/timeline.py bench/results/v16/h200-run3.sh /tmp/mods/qgemv-cuda-{B2,B2W,TLB2,TLDG}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run3
rm -rf "$O"
mkdir -p "$O/tl"
t0=$SECONDS
for mod in B2 B2W TLB2 TLDG; do
  mkdir -p "$O/$mod"
  xz -dc "$here/qgemv-cuda-$mod.so.xz" > "$O/$mod/qgemv-cuda.so"
done
for mod in B2 B2W; do
  QGEMV_PLUGIN_PATH=$O/$mod QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite-$mod.txt" 2>&1
  echo "suite $mod rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite-$mod.txt" | head -8
done

AB_DEADLINE=$((SECONDS + 150)) OUT=$O/ab-norm timeout 330 bash "$here/gpu-ab.sh" qgemv-cuda-B2.so.xz qgemv-cuda-B2W.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format q2_0g64,q2_0 --dtype bf16 \
  --m 1,8,16 --rmsnorm > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"

bench=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
timeout 60 "${bench[@]}" --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 \
  --format q2_0g64,q2_0 --dtype bf16 --m 1,8,16 --csv "$O/plain.csv" > /dev/null 2>> "$O/log.txt"
echo "plain rc=$? ($((SECONDS - t0)) s)"; cut -d, -f3-9 "$O/plain.csv"

timeline() { # module, then cases "shape format plain|norm"
  local mod=$1; shift
  for c in "$@"; do
    set -- $c
    local name=$mod-$1-$2-$3 extra=()
    [ "$3" = norm ] && extra=(--rmsnorm)
    QGEMV_PLUGIN_PATH=$O/$mod QGEMV_CUDA_TIMELINE=$O/tl/$name.bin timeout 60 "${bench[@]}" --format "$2" --dtype bf16 \
      --shape "$1" --m 1 "${extra[@]}" --csv "$O/tl/$name.csv" > /dev/null 2>> "$O/log.txt"
    echo "$name: rc $? $(tail -n 1 "$O/tl/$name.csv" | cut -d, -f9,14,15) ($((SECONDS - t0)) s)"
  done
}
timeline TLDG "28672x8192 q2_0g64 plain" "28672x8192 q2_0g64 norm" "8192x28672 q2_0g64 plain" "8192x28672 q2_0g64 norm"
timeline TLB2 "28672x8192 q2_0g64 norm" "8192x28672 q2_0g64 norm"
python3 "$here/timeline.py" "$O"/tl/*.bin > "$O/tl-summary.txt" 2>&1
cat "$O/tl-summary.txt"
for mod in B2 B2W TLB2 TLDG; do rm -f "$O/$mod/qgemv-cuda.so"; done
tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
echo "end ($((SECONDS - t0)) s)"
