#!/bin/bash
# v16 run 4 (issue 13): the raw modes' staging by cp.async
# (QGC_EXP_ASYNC_STAGE, module ASY). Run 3's timeline: at 8192 x 28672
# m = 1 the staging takes 3.5 us for plain bf16 x and 5.5 us for the norm
# (kDG) after griddepcontrol.wait, against 1.9 / 2.4 us at 28672 x 8192:
# k = 28672 is 1792 units of 16 elements, 3.5 passes of 512 threads, and
# each pass waits for its own loads (x thread 0's last pass arrives 3.1 /
# 4.6 us after the wait), in a memory system the ring keeps busy. Batched
# launches stage m columns, so more passes (m = 8 at 28672 x 8192 in four
# phases: two passes each). ASY issues every unit's words by cp.async
# straight into the staged buffer and waits once; kDG's block sums of
# squares then come from the thread's own words.
# Predicted: plain bf16 and the kDG norm at 8192 x 28672 and 4096 x 14336
# m = 1 1.5-3 us faster; batched bf16 m = 8, 16 5-15% faster at every
# shape; 28672 x 8192 and 4096 x 4096 m = 1 unchanged (one pass).
# First the quick suite with ASY (the GPU checks of every raw launch kind;
# misaligned x keeps the old path), then gpu-ab.sh ASY against the pack
# (kDG, the library's), plain and --rmsnorm, then the timeline of TLASY
# beside run 3's TLDG.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/lab/timeline.py bench/results/v16/h200-run4.sh /tmp/mods/qgemv-cuda-{ASY,TLASY,TLDG}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run4
rm -rf "$O"
mkdir -p "$O/tl"
t0=$SECONDS
for mod in ASY TLASY TLDG; do
  mkdir -p "$O/$mod"
  xz -dc "$here/qgemv-cuda-$mod.so.xz" > "$O/$mod/qgemv-cuda.so"
done
QGEMV_PLUGIN_PATH=$O/ASY QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" > "$O/suite-ASY.txt" 2>&1
echo "suite ASY rc=$? ($((SECONDS - t0)) s)"; grep -E "Checks:|:F:|:E:" "$O/suite-ASY.txt" | head -8

shapes=(--shape 28672x8192 --shape 8192x28672 --shape 4096x14336 --shape 4096x4096 --format q2_0g64,q2_0 --dtype bf16
  --m 1,8,16)
AB_DEADLINE=$((SECONDS + 70)) OUT=$O/ab-plain timeout 200 bash "$here/gpu-ab.sh" "$O/ASY/qgemv-cuda.so" "${shapes[@]}" \
  > "$O/ab-plain.txt" 2> "$O/ab-plain-log.txt"
echo "ab plain rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-plain.txt"
AB_DEADLINE=$((SECONDS + 70)) OUT=$O/ab-norm timeout 200 bash "$here/gpu-ab.sh" "$O/ASY/qgemv-cuda.so" "${shapes[@]}" \
  --rmsnorm > "$O/ab-norm.txt" 2> "$O/ab-norm-log.txt"
echo "ab norm rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-norm.txt"

bench=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
timeline() { # module, then cases "shape m plain|norm"
  local mod=$1; shift
  for c in "$@"; do
    set -- $c
    local name=$mod-$1-m$2-$3 extra=()
    [ "$3" = norm ] && extra=(--rmsnorm)
    QGEMV_PLUGIN_PATH=$O/$mod QGEMV_CUDA_TIMELINE=$O/tl/$name.bin timeout 60 "${bench[@]}" --format q2_0g64 --dtype bf16 \
      --shape "$1" --m "$2" "${extra[@]}" --csv "$O/tl/$name.csv" > /dev/null 2>> "$O/log.txt"
    echo "$name: rc $? $(tail -n 1 "$O/tl/$name.csv" | cut -d, -f9,14,15) ($((SECONDS - t0)) s)"
  done
}
timeline TLASY "8192x28672 1 plain" "8192x28672 1 norm" "28672x8192 8 plain" "28672x8192 1 norm"
timeline TLDG "28672x8192 8 plain"
python3 "$here/timeline.py" "$O"/tl/*.bin > "$O/tl-summary.txt" 2>&1
cat "$O/tl-summary.txt"
for mod in ASY TLASY TLDG; do rm -f "$O/$mod/qgemv-cuda.so"; done
tar -C /tmp -cJf "${OUT:-/tmp}/run4.tar.xz" run4
echo "end ($((SECONDS - t0)) s)"
