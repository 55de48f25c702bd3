#!/bin/bash
# v12 run 3 (issue 13): is the 4 us from a CTA's entry to its first weight
# chunk the cold weight copy (its pages' translations, DRAM) rather than
# the bytes? The bench's working set (copies of the weight it rotates
# over) from 2 copies to 4 GB, with the pack's module, and the timeline
# module (run 2's) at 2 copies and at 4 GB.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 bench/lab/timeline.py bench/results/v12/h200-run3.sh \
#   /tmp/mods/qgemv-cuda-TIMELINE.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run3
mkdir -p "$O/tl" "$O/tlmod" "$O/ws"
t0=$SECONDS
xz -dc "$here/qgemv-cuda-TIMELINE.so.xz" > "$O/tlmod/qgemv-cuda.so"
bench=(qgemv bench --backend cuda --min-time 0.1 --no-baseline --quiet)
for ws in 100M 256M 512M 1G 4G; do
  for c in "q2_0g64 28672x8192" "q2_0g64 4096x4096" "nf4 28672x8192" "q2_0g64 8192x28672"; do
    set -- $c
    timeout 60 "${bench[@]}" --working-set $ws --format "$1" --dtype bf16 --shape "$2" --m 1 \
      --csv "$O/ws/$1-$2-$ws.csv" > /dev/null 2>> "$O/ws-log.txt"
    echo "ws $ws $1 $2: rc $? $(tail -n 1 "$O/ws/$1-$2-$ws.csv" | cut -d, -f9,16,17) ($((SECONDS - t0)) s)"
  done
done
for ws in 100M 4G; do
  for c in "q2_0g64 28672x8192" "nf4 28672x8192" "q2_0g64 4096x4096"; do
    set -- $c
    QGEMV_PLUGIN_PATH=$O/tlmod QGEMV_CUDA_TIMELINE=$O/tl/$1-$2-$ws.bin timeout 60 "${bench[@]}" --working-set $ws \
      --format "$1" --dtype bf16 --shape "$2" --m 1 > /dev/null 2>> "$O/tl-log.txt"
  done
done
python3 "$here/timeline.py" "$O"/tl/*.bin > "$O/tl-summary.txt" 2>&1
cat "$O/tl-summary.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run3.tar.xz" run3
echo "end ($((SECONDS - t0)) s)"
