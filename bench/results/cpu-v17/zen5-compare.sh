#!/bin/bash
# The v17 same-machine comparison (bench/NOTES-cpu.md v17): qgemv, ggml, qgemv again; outputs in /tmp/ggcmp.
# same-machine comparison, 28672x8192, 2 threads: qgemv (HEAD build), ggml, qgemv again
cd /tmp/b90
O=/tmp/ggcmp; mkdir -p $O
QGEMV_BENCH_COMMIT=694cac7 tools/qgemv bench --backend cpu --shape 28672x8192 --format all --dtype f32,bf16 --m 1,8 --min-time 0.5 --no-baseline --json $O/qgemv-a.json > $O/qgemv-a.txt 2>&1
drv=/work/main/bench/cpu-lab/ggml-drv
: > $O/ggml.txt
for m in 1 8; do
  for t in "iq4_nl 1" "q4_0 1" "tq2_0 0"; do
    set -- $t
    timeout 300 $drv $1 28672 8192 $m 2 $2 1100 2 >> $O/ggml.txt 2>/dev/null || echo "(exit $?) $1 $m" >> $O/ggml.txt
  done
done
QGEMV_BENCH_COMMIT=694cac7 tools/qgemv bench --backend cpu --shape 28672x8192 --format all --dtype f32,bf16 --m 1,8 --min-time 0.5 --no-baseline --json $O/qgemv-b.json > $O/qgemv-b.txt 2>&1
echo done
