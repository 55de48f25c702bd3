#!/bin/bash
# v23 run 7 (issues 13): the landed code on the GPU (9d337e0: the kernels
# of 80f67a3, the plan override's t=2 reaching few-tile shapes, qgemv
# bench --graph): test_cuda_backend (QGEMV_TEST_QUICK=1),
# test_hardening_cuda, test_tool_graph.sh, qgemv verify, and qgemv verify
# under QGEMV_CUDA_PLAN=t=2 (which now runs where it was refused).
# Here: bash ../shared/gpu/pack.sh /tmp/b90 /tmp/b90/tests/.libs/test_cuda_backend \
#   /tmp/b90/tests/.libs/test_hardening_cuda bench/run-common.sh bench/results/v23/h200-run7.sh
# there: source .gpu/pack/env.sh; bash .gpu/pack/bin/h200-run7.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run7; source "$here/run-common.sh"
QGEMV_TEST_QUICK=1 CK_FORK=no timeout 100 "$here/test_cuda_backend" > "$O/suite.txt" 2>&1
step test_cuda_backend; tail -2 "$O/suite.txt"
CK_FORK=no timeout 40 "$here/test_hardening_cuda" > "$O/hardening.txt" 2>&1
step test_hardening_cuda; tail -1 "$O/hardening.txt"
QGEMV_TOOL=$(command -v qgemv) srcdir=. timeout 40 sh tests/test_tool_graph.sh > "$O/tool-graph.txt" 2>&1
step test_tool_graph; tail -1 "$O/tool-graph.txt"
timeout 30 qgemv verify --backend cuda > "$O/verify.txt" 2>&1
step verify; tail -1 "$O/verify.txt"
QGEMV_CUDA_PLAN=t=2 timeout 30 qgemv verify --backend cuda > "$O/verify-t2.txt" 2>&1
step verify_t2; tail -1 "$O/verify-t2.txt"
