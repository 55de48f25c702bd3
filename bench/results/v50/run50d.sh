#!/bin/bash
# v50, call 4 (bench/NOTES.md v50): Q2_0's norm with bf16 x and gamma in
# two bf16 terms (kB2) for weights uploaded for m = 1 with 3.5 tiles an SM
# or more. (1) the suite's gpu case (the tiles: test_norm_b2_upload, the
# IEEE cases under norm=b2); (2) A/B with --rmsnorm, m = 1, graphs: a0
# old.so.xz (main before, gamma in A everywhere), b the pack's; (3) qgemv
# verify; (4) memcheck and racecheck of qgemv verify on the tiles under
# QGEMV_CUDA_PLAN=norm=b2 (kB2 at m = 1 and batched). Packed beside gpu-ab.sh, run-common.sh,
# test_cuda_backend and old.so.xz. There, after `source .gpu/pack/env.sh`,
# OUT set: `LEFT=570 timeout 590 bash .gpu/pack/bin/run50d.sh` (call 5:
# run50e.sh, the same with RUN=r50e and a shorter test limit).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r50d}; source "$here/run-common.sh"
CK_FORK=no CK_RUN_CASE=gpu timeout "${TEST_TIMEOUT:-220}" "$here/test_cuda_backend" >"$O/test-gpu.txt" 2>&1
step "test_cuda_backend, case gpu"
grep -E 'Checks|Failures|:F:|:E:' "$O/test-gpu.txt" | head -20
shapes="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 8192x4096 --shape 4096x4096"
AB_PASSES=2 AB_DEADLINE=$(($(left) - 200)) timeout $(($(left) - 150)) bash "$here/gpu-ab.sh" old.so.xz \
  $shapes --rmsnorm --format q2_0g64,q2_0 --dtype bf16 --m 1 --graph >"$O/ab-norm.txt" 2>"$O/ab-norm.err"
step "A/B with the norm: a0 main before, b the pack's"
cat "$O/ab-norm.txt"; mv "$OUT/ab.tar.xz" "$O/ab-norm.tar.xz"
timeout 60 qgemv verify --backend cuda >"$O/verify.txt" 2>&1
step "verify"
tail -n 1 "$O/verify.txt"
# kB2 under the sanitizers: verify's shapes are small, so norm=b2 takes it
# there (m = 1 and batched) on the tiles
for tool in memcheck racecheck; do
  QGEMV_CUDA_LAYOUT=tiles QGEMV_CUDA_PLAN=norm=b2 timeout $(($(left) > 150 ? 150 : $(left))) "$S" --tool $tool \
    qgemv verify --backend cuda >"$O/$tool-verify-b2.txt" 2>&1
  step "$tool of verify, tiles, norm=b2"; tail -n 3 "$O/$tool-verify-b2.txt"
done
