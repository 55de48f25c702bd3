#!/bin/bash
# v18 run 2 (issue 12): the GPU machine's 16-core host with the CPU code
# of 0011eab (Q2_0 VNNI in 12 chains at m = 1, NF4 with one or two rows
# two blocks at once; v17 run 3 measured 6d00565, before them), threads
# 16, 8, 4, 2, 1, and beside it, thread count by thread count, ggml
# 0.21.0 built on the development machine for this host's ISA
# (-DGGML_NATIVE=OFF with AVX-512 VBMI/VNNI/BF16 and AMX on, OpenMP;
# bench/cpu-lab/ggml-drv.c linked against it): IQ4_NL repacked and TQ2_0
# at m = 1 and 8, Q4_0 in its AMX buffer at m = 1 and 16 threads.
# 28672 x 8192, weights rotated over 2 GB (the host's L3 is 300 MB class).
# Here: cmake -B build -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_OPENMP=ON -DGGML_AVX=ON
#   -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON
#   -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON -DGGML_AMX_TILE=ON -DGGML_AMX_INT8=ON -DGGML_AMX_BF16=ON
#   (in a copy of the ggml tree, /tmp/ggml-spr); make -C bench/cpu-lab ggml-drv GGML=/tmp/ggml-spr;
#   /tmp/ggspr = ggml-drv-spr + build/src/libggml*.so.0*, tarred to /tmp/ggspr.tar.xz;
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/results/v18/h200host-run2.sh /tmp/ggspr.tar.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200host-run2.sh
# (THREADS: the thread counts, default 16 8 4 2 1; HOST_DEADLINE: no thread
# count starts after that many seconds, default 500)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
rm -rf "$O"
mkdir -p "$O"
t0=$SECONDS
tar -C /tmp -xJf "$here/ggspr.tar.xz"
drv() { LD_LIBRARY_PATH=/tmp/ggspr timeout 90 /tmp/ggspr/ggml-drv-spr "$@" 2>&1 | tail -1; }
{ lscpu | grep -E "Model name|^CPU\(s\)|L3|Flags" | cut -c1-400; uptime; } > "$O/cpu-host.txt"
for T in ${THREADS:-16 8 4 2 1}; do
  ((SECONDS - t0 > ${HOST_DEADLINE:-500})) && { echo "deadline before T=$T"; break; }
  QGEMV_NUM_THREADS=$T timeout 150 qgemv bench --backend cpu --shape 28672x8192 --format all --dtype f32,bf16 --m 1,8 \
    --min-time 0.2 --no-baseline --json "$O/cpu-t$T.json" > "$O/cpu-t$T.txt" 2>&1
  echo "qgemv T=$T rc=$? ($((SECONDS - t0)) s) load $(cut -d' ' -f1-3 /proc/loadavg)"
  grep -E "^-|streaming" "$O/cpu-t$T.txt"
  for c in "iq4_nl 1" "tq2_0 0"; do
    set -- $c
    for m in 1 8; do
      ((SECONDS - t0 > ${HOST_DEADLINE:-500} + 40)) && break
      drv "$1" 28672 8192 $m $T "$2" 2048 0.5 | tee -a "$O/ggml-t$T.txt"
    done
  done
  [ $T = 16 ] && drv q4_0 28672 8192 1 16 2 2048 0.5 | tee -a "$O/ggml-t16.txt"
done
uptime >> "$O/cpu-host.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
echo "end ($((SECONDS - t0)) s)"
