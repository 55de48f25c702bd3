#!/bin/bash
# v12 run 2 (issue 13): where a launch's time goes, stamped by the CTAs
# themselves (module built with -DQGC_EXP_TIMELINE=1: bench/lab/timeline.py
# reads its dumps), and NF4 with one step of four from the register planes
# at one column group with B per CTA (-DQGC_EXP_NF4PS1=1) against the pack.
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend bench/gpu-ab.sh \
#   bench/lab/timeline.py bench/results/v12/h200-run2.sh /tmp/mods/qgemv-cuda-{TIMELINE,NF4PS1}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O/tl" "$O/tlmod"
t0=$SECONDS
xz -dc "$here/qgemv-cuda-TIMELINE.so.xz" > "$O/tlmod/qgemv-cuda.so"
bench=(qgemv bench --backend cuda --min-time 0.05 --no-baseline --working-set 512M --quiet)
for c in "q2_0g64 bf16 28672x8192 1" "q2_0g64 bf16 14336x4096 1" "q2_0g64 bf16 4096x4096 1" "q2_0g64 bf16 8192x28672 1" \
         "q2_0 bf16 28672x8192 1" "q2_0g64 f32 28672x8192 1" "q2_0g64 bf16 28672x8192 8" \
         "nf4 bf16 28672x8192 1" "nf4 f32 28672x8192 1" "nf4 bf16 4096x4096 1" "nf4 bf16 8192x28672 1" "nf4 bf16 28672x8192 8"; do
  set -- $c
  name=$1-$2-$3-m$4
  QGEMV_PLUGIN_PATH=$O/tlmod QGEMV_CUDA_TIMELINE=$O/tl/$name.bin timeout 60 "${bench[@]}" --format "$1" --dtype "$2" \
    --shape "$3" --m "$4" --csv "$O/tl/$name.csv" > /dev/null 2>> "$O/tl-log.txt"
  echo "tl $name rc=$? ($((SECONDS - t0)) s)"
done
python3 "$here/timeline.py" "$O"/tl/*.bin > "$O/tl-summary.txt" 2>&1
cat "$O/tl-summary.txt"
for f in "$O"/tl/*.csv; do echo "$(basename "$f"): $(tail -n 1 "$f" | cut -d, -f3-9)"; done

AB_DEADLINE=150 OUT=$O/ab timeout 230 bash "$here/gpu-ab.sh" qgemv-cuda-NF4PS1.so.xz \
  --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 \
  --format nf4 --dtype bf16,f32 --m 1,8 > "$O/ab-table.txt" 2> "$O/ab-log.txt"
echo "ab rc=$? ($((SECONDS - t0)) s)"; cat "$O/ab-table.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
echo "end ($((SECONDS - t0)) s)"
