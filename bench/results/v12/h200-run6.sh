#!/bin/bash
# v12 run 6 (issue 13): the production kernel without its chunks' math
# (-DQGC_EXP_LOADS_ONLY=1: the ring, the staging, the epilogue; y wrong),
# stamped (-DQGC_EXP_TIMELINE=1), against the full kernel stamped the same
# way: does the ring alone reach the read bandwidth at the plan's
# geometry, and how long does a chunk take from issue to ready without
# the math?
# Here: bash ../shared/gpu/pack.sh /tmp/b90 bench/lab/timeline.py bench/results/v12/h200-run6.sh \
#   /tmp/mods/qgemv-cuda-{TIMELINE,TLLOADS}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run6.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run6
mkdir -p "$O/tl"
t0=$SECONDS
bench=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
for mod in TLLOADS TIMELINE; do
  mkdir -p "$O/$mod"
  xz -dc "$here/qgemv-cuda-$mod.so.xz" > "$O/$mod/qgemv-cuda.so"
  for c in "q2_0g64 bf16 28672x8192" "nf4 bf16 28672x8192" "q2_0g64 bf16 8192x28672" "nf4 f32 8192x28672" \
           "q2_0g64 bf16 14336x4096" "q2_0g64 bf16 4096x4096"; do
    set -- $c
    name=$mod-$1-$2-$3
    QGEMV_PLUGIN_PATH=$O/$mod QGEMV_CUDA_TIMELINE=$O/tl/$name.bin timeout 60 "${bench[@]}" --format "$1" --dtype "$2" \
      --shape "$3" --m 1 --csv "$O/tl/$name.csv" > /dev/null 2>> "$O/log.txt"
    echo "$name: rc $? $(tail -n 1 "$O/tl/$name.csv" | cut -d, -f9,14,15) ($((SECONDS - t0)) s)"
  done
done
python3 "$here/timeline.py" "$O"/tl/*.bin > "$O/tl-summary.txt" 2>&1
cat "$O/tl-summary.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run6.tar.xz" run6
echo "end ($((SECONDS - t0)) s)"
