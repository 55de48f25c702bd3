#!/bin/bash
# v30 (issue 12): the CPU level suites on the 16-core host of the GPU
# machine, with the avx512vnni and avx512 levels required (they cannot run
# on the development VM): q2_vnni.c's one-plane further terms and
# test_adversarial's staircase case (blocks needing three further terms).
# Here: make -C BUILD tests/test_adversarial tests/test_cpu_levels, then
#   bash ../shared/gpu/pack.sh BUILD bench/run-common.sh bench/results/v30/h200host-tests.sh \
#     BUILD/tests/.libs/test_adversarial BUILD/tests/.libs/test_cpu_levels
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200host-tests.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=host30; source "$here/run-common.sh"
export QGEMV_TEST_LEVELS=avx512vnni,avx512,avx2 QGEMV_TEST_REQUIRE=avx512vnni,avx512,avx2
timeout 120 "$here/test_adversarial" > "$O/test_adversarial.txt" 2>&1
step test_adversarial; tail -3 "$O/test_adversarial.txt"
QGEMV_TEST_QUICK=1 timeout 180 "$here/test_cpu_levels" > "$O/test_cpu_levels.txt" 2>&1
step test_cpu_levels; tail -3 "$O/test_cpu_levels.txt"
