#!/bin/bash
# v34 run 3 (issue 12, the GPU machine's 16-core host): the avx512amx level
# after run 2, with QG_AMX_MIN_M = 8 (avx512vnni's kernel below it, chosen
# per call) and no longer opt-in. (1) The CPU suites natively with
# avx512amx and avx512vnni required (test_cpu_levels' same-bits case and
# batched == m = 1 now cross the threshold: m = 1, 3 on VNNI's kernel, 8,
# 17 on tiles), and test_selection's new case: with a 4 KiB sigaltstack
# Linux refuses the tile state, and the default falls back to avx512vnni.
# (2) qgemv info: the default level. (3) qgemv bench, the
# default against QGEMV_CPU_ISA=avx512vnni, alternating, at 16, 8 and 4
# threads, Q2_0 f32 28672 x 8192, m = 1, 2, 4, 8, 16.
# Predicted: the same times at m <= 4 (the same kernel), the default
# 1.2-1.5x faster at m = 8 and more at 16 (run 2, q2-amx-hot).
# Here: make -C BUILD tests/test_adversarial tests/test_cpu_levels tests/test_selection, then
#   bash ../shared/gpu/pack.sh BUILD bench/run-common.sh bench/results/v34/h200-run3.sh \
#     BUILD/tests/.libs/test_adversarial BUILD/tests/.libs/test_cpu_levels BUILD/tests/.libs/test_selection
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run3.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run3; source "$here/run-common.sh"
uptime > "$O/uptime-start.txt"
export QGEMV_TEST_LEVELS=avx512amx,avx512vnni,avx512 QGEMV_TEST_REQUIRE=avx512amx,avx512vnni
timeout 150 "$here/test_adversarial" > "$O/test_adversarial.txt" 2>&1
step test_adversarial; tail -3 "$O/test_adversarial.txt"
QGEMV_TEST_QUICK=1 timeout 200 "$here/test_cpu_levels" > "$O/test_cpu_levels.txt" 2>&1
step test_cpu_levels; tail -3 "$O/test_cpu_levels.txt"
unset QGEMV_TEST_LEVELS QGEMV_TEST_REQUIRE
timeout 120 "$here/test_selection" > "$O/test_selection.txt" 2>&1
step test_selection; grep -E 'amx|Checks' "$O/test_selection.txt"
qgemv info > "$O/info.txt" 2>&1; step info; grep -E 'ISA level|avx512amx|default' "$O/info.txt"
args=(--backend cpu --shape 28672x8192 --format q2_0,q2_0g64 --dtype f32 --m 1,2,4,8,16
      --min-time 0.2 --working-set 2400M --no-baseline)
for pass in "16 default" "16 avx512vnni" "8 default" "8 avx512vnni" "4 default" "4 avx512vnni" \
            "16 avx512vnni" "16 default"; do
  set -- $pass
  ((SECONDS - t0 > ${RUN3_CUTOFF:-300})) && break
  f=$O/bench-$2-t$1-$SECONDS.txt
  if [ "$2" = default ]; then
    env -u QGEMV_CPU_ISA QGEMV_NUM_THREADS=$1 timeout 90 qgemv bench "${args[@]}" --json "${f%.txt}.json" > "$f" 2>&1
  else
    QGEMV_CPU_ISA=$2 QGEMV_NUM_THREADS=$1 timeout 90 qgemv bench "${args[@]}" --json "${f%.txt}.json" > "$f" 2>&1
  fi
  step "bench $2 t$1"; grep -E "^(qgemv bench 0|-|streaming)" "$f"
done
