#!/bin/bash
# v31 run 2 (issue 12, the 16-core host; run 1 found AMX usable here, the
# plain tile sums 3.4x slower than VNNI at m = 1, 1.3x faster at m = 8).
# (1) amx-probe: the tile unit's rate by a product's rows (int8 and bf16:
# does a product of 3 rows cost less than one of 16?), and its five
# variants (the file's header), checked integer for integer, timed beside
# VNNI at m = 1-16: which costs hold the tiles back?
# Predicted: the stores-then-tile-load of B the largest, so ring well
# under plain; row best at m = 1, inter4 at m >= 4. (2) The kernel built
# from them, q2_amx.c (row, ring, deferred fold): q2-amx-hot, its y against
# avx512vnni's bit for bit, ticks per weight at m = 1-16. (3) The CPU
# suites with avx512amx required (test_cpu_levels' new same-bits case).
# (4) qgemv bench, QGEMV_CPU_ISA=avx512amx against avx512vnni at 16, 8, 4
# (and 2, 1 as time allows) threads, Q2_0 f32 x 28672 x 8192 m = 1, 8
# (issue 12's host target: ggml TQ2_0 at 1-16 threads, v21), and
# avx512vnni against v30's library (da869dd): q2_vnni_sums.h's refactor
# changed GCC's code for that level (same integers), speed unmeasured.
# (0, added in v32) test_x86_emu: x86-emu-check's emulation (x86_emu.h)
# against this host's AVX-512 and AMX instructions, bit for bit.
# NOT RUN in v31 or v32 (no device lent); ready for the next session.
# Here: bash bench/results/v32/prepare-run2.sh does all of the following. make -C bench/cpu-lab amx-probe q2-amx-hot BUILD=/tmp/b90;
#   make -C /tmp/b90 tests/test_adversarial tests/test_cpu_levels; then
#   (/tmp/bv30: a CPU-only build of da869dd) xz -c /tmp/bv30/.libs/libqgemv.so.0.0.0 > /tmp/libqgemv-v30.so.xz
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/cpu-lab/amx-probe bench/cpu-lab/q2-amx-hot \
#     bench/results/v31/h200-run2.sh /tmp/b90/tests/.libs/test_adversarial /tmp/b90/tests/.libs/test_cpu_levels \
#     /tmp/libqgemv-v30.so.xz /tmp/b90/tests/test_x86_emu   (make -C /tmp/b90 tests/test_x86_emu first)
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run2; source "$here/run-common.sh"
uptime > "$O/uptime-start.txt"
timeout 60 "$here/test_x86_emu" > "$O/test_x86_emu.txt" 2>&1; step test_x86_emu; tail -4 "$O/test_x86_emu.txt"
taskset -c 2 "$here/amx-probe" 100 > "$O/amx-probe.txt" 2>&1; step amx-probe; cat "$O/amx-probe.txt"
for a in "64 4096 128" "64 4096 64" "64 4096 128 200 bf16" "512 8192 128 20"; do
  f=$O/q2-amx-hot-${a// /-}.txt
  taskset -c 2 "$here/q2-amx-hot" $a > "$f" 2>&1; step "q2-amx-hot $a"; cat "$f"
done
export QGEMV_TEST_LEVELS=avx512amx,avx512vnni,avx512 QGEMV_TEST_REQUIRE=avx512amx,avx512vnni
timeout 150 "$here/test_adversarial" > "$O/test_adversarial.txt" 2>&1
step test_adversarial; tail -3 "$O/test_adversarial.txt"
QGEMV_TEST_QUICK=1 timeout 200 "$here/test_cpu_levels" > "$O/test_cpu_levels.txt" 2>&1
step test_cpu_levels; tail -3 "$O/test_cpu_levels.txt"
unset QGEMV_TEST_LEVELS QGEMV_TEST_REQUIRE
mkdir -p /tmp/lib-v30 && xz -dc "$here/libqgemv-v30.so.xz" > /tmp/lib-v30/libqgemv.so.0
args=(--backend cpu --shape 28672x8192 --format q2_0,q2_0g64 --dtype f32 --m 1,8
      --min-time 0.2 --working-set 2400M --no-baseline)
# lib v30: da869dd (avx512vnni before q2_vnni_sums.h: the same integers,
# GCC's code laid out differently, its speed the question)
for pass in "16 avx512amx new" "16 avx512vnni new" "16 avx512vnni v30" "8 avx512amx new" "8 avx512vnni new" \
            "4 avx512amx new" "4 avx512vnni new" "16 avx512vnni v30" "16 avx512vnni new" "16 avx512amx new" \
            "2 avx512amx new" "1 avx512amx new"; do
  set -- $pass
  ((SECONDS - t0 > ${RUN2_CUTOFF:-420})) && break # RUN2_CUTOFF: seconds after which no pass starts (for a short lease)
  case $3 in new) lib= ;; *) lib=/tmp/lib-$3 ;; esac
  f=$O/bench-$2-$3-t$1-$SECONDS.txt
  LD_LIBRARY_PATH=${lib:+$lib:}${LD_LIBRARY_PATH:-} QGEMV_CPU_ISA=$2 QGEMV_NUM_THREADS=$1 timeout 60 \
    qgemv bench "${args[@]}" > "$f" 2>&1
  step "bench $2 $3 t$1"; grep -E "^(-|streaming)" "$f"
done
