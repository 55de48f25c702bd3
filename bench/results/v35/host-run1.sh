#!/bin/bash
# v35 run 1 (issue 12), on the GPU machine's host CPU: qgemv's CPU backend
# at 0500d63 (avx512amx the default, tiles from 8 rows) against ggml 0.21.0
# built here for Sapphire Rapids, in one run: bench/cpu-vs-ggml.sh at
# threads 16, 8, 4, 2, 1, 28672 x 8192, m = 1 and 8, f32 x, working sets
# of 2.4 GB (AMX Q4_0 also at 1.1 GB). Issue 12's host row is judged on it.
# Here:
#   (cd /tmp/ggml-src && cmake -B build-spr <v21/h200-run2.sh's flags> &&
#    make -C build-spr ggml-cpu ggml-base ggml)
#   gcc -O2 -std=c11 -I/tmp/ggml-src/include -o /tmp/ggml-drv-spr bench/cpu-lab/ggml-drv.c \
#     -L/tmp/ggml-src/build-spr/src -lggml -lggml-cpu -lggml-base -lstdc++ -fopenmp -lpthread -lm
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/cpu-vs-ggml.sh \
#     /tmp/ggml-drv-spr bench/results/v35/host-run1.sh
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/host-run1.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run1
mkdir -p "$O"
t0=$SECONDS
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/run1.tar.xz" run1
}
trap finish EXIT
nvidia-smi --query-gpu=name --format=csv > "$O/gpu.txt" 2>&1
lscpu > "$O/lscpu.txt" 2>&1; uptime > "$O/uptime.txt"
qgemv info > "$O/info.txt" 2>&1
grep -E 'Model name|^CPU\(s\)|L3' "$O/lscpu.txt"; grep -iE 'isa|level|avx512amx' "$O/info.txt" | head -8
GGML_DRV=$here/ggml-drv-spr OUT=$O/cpu DEADLINE=$((${RUN1_CUTOFF:-470} - SECONDS + t0)) \
  timeout $((${RUN1_CUTOFF:-470} + 60 - SECONDS + t0)) bash "$here/cpu-vs-ggml.sh" 16,8,4,2,1 28672x8192
echo "cpu rc=$? ($((SECONDS - t0)) s)"
uptime >> "$O/uptime.txt"
