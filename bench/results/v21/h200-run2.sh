#!/bin/bash
# v21 run 2 (issues 13 and 12), on 3695774's library (the landed plan with
# one row group at KS 8 for m = 1).
# 1. Issue 13: plan-sweep.sh's new group `waves`: fewer warps per CTA for
#    batched launches at 28672 x 8192 (KS 2: the plan's 16 warps make 224
#    units, 1.7 waves on 132 SMs; 14 warps 256 units, 1.94 waves) and
#    8192 x 28672 (KS 4). Predicted: w=14 0.9-0.95x where the units are
#    the limit (f32 x, two or three column groups), no gain for bf16 x.
# 2. Issue 12: bench/cpu-vs-ggml.sh on the 16-core host: qgemv's CPU
#    backend against ggml 0.21.0 (built here for Sapphire Rapids: AVX-512
#    VBMI/VNNI/BF16, AMX-INT8, OpenMP, static) at threads 16, 8, 4, 2, 1,
#    28672 x 8192, m = 1 and 8, working sets of 2.4 GB (8x the 300 MB L3);
#    AMX Q4_0 also at 1.1 GB (issue 12's 130 GB/s question).
# Here:
#   ggml: cmake -B build-spr -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
#     -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
#     -DGGML_BMI2=ON -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON \
#     -DGGML_AVX512_BF16=ON -DGGML_AMX_TILE=ON -DGGML_AMX_INT8=ON -DGGML_OPENMP=ON \
#     -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF; make -C build-spr ggml-cpu ggml-base ggml
#   gcc -O2 -std=c11 -I$GGML/include -o /tmp/ggml-drv-spr bench/cpu-lab/ggml-drv.c \
#     -L$GGML/build-spr/src -lggml -lggml-cpu -lggml-base -lstdc++ -fopenmp -lpthread -lm
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/plan-sweep.sh bench/cpu-vs-ggml.sh \
#     bench/results/v21/h200-run2.sh /tmp/ggml-drv-spr
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O"
t0=$SECONDS
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
}
trap finish EXIT
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
lscpu > "$O/lscpu.txt" 2>&1; uptime > "$O/uptime.txt"
OUT=$O/sweep SWEEP_DEADLINE=150 timeout 200 bash "$here/plan-sweep.sh" waves > "$O/sweep-log.txt" 2>&1
echo "sweep rc=$? ($((SECONDS - t0)) s)"; cat "$O/sweep/summary.txt"
uptime >> "$O/uptime.txt"
GGML_DRV=$here/ggml-drv-spr OUT=$O/cpu DEADLINE=$((500 - SECONDS + t0)) timeout $((560 - SECONDS + t0)) \
  bash "$here/cpu-vs-ggml.sh" 16,8,4,2,1 28672x8192
echo "cpu rc=$? ($((SECONDS - t0)) s)"
