#!/bin/bash
# v12 run 4 (issue 13): the ring's latency in the steady state (the
# timeline module with warp 0's chunks 4 and 8 stamped at issue and at
# ready: 16 slots), and a ring of 3 slots (QGC_EXP_STAGES=3) against the
# pack's 2 (the plan fits what the deeper ring allows).
# Here: bash ../shared/gpu/pack.sh /tmp/b90 ... bench/lab/timeline.py bench/results/v12/h200-run4.sh \
#   /tmp/mods/qgemv-cuda-{TIMELINE,STAGES}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run4.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run4
mkdir -p "$O/tl" "$O/tlmod"
t0=$SECONDS
xz -dc "$here/qgemv-cuda-TIMELINE.so.xz" > "$O/tlmod/qgemv-cuda.so"
bench=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
for c in "q2_0g64 bf16 28672x8192 1" "nf4 bf16 28672x8192 1" "q2_0g64 bf16 4096x4096 1" "q2_0g64 bf16 8192x28672 1" \
         "nf4 f32 8192x28672 1" "q2_0g64 bf16 28672x8192 8"; do
  set -- $c
  name=$1-$2-$3-m$4
  QGEMV_PLUGIN_PATH=$O/tlmod QGEMV_CUDA_TIMELINE=$O/tl/$name.bin timeout 60 "${bench[@]}" --format "$1" --dtype "$2" \
    --shape "$3" --m "$4" > /dev/null 2>> "$O/tl-log.txt"
done
python3 "$here/timeline.py" "$O"/tl/*.bin > "$O/tl-summary.txt" 2>&1
cat "$O/tl-summary.txt"
echo "tl done ($((SECONDS - t0)) s)"
AB_DEADLINE=80 OUT=$O/ab timeout 150 bash "$here/gpu-ab.sh" qgemv-cuda-STAGES.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x4096 --format all --dtype bf16,f32 --m 1 \
  > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-table.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run4.tar.xz" run4
echo "end ($((SECONDS - t0)) s)"
