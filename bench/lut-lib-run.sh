#!/bin/bash
# The lookup-table form in the library (issue 13, bench/NOTES.md v39) on the
# GPU machine, from a packed install (route A). Here:
#   bash ../shared/gpu/pack.sh BUILD_DIR tests/.libs/test_cuda_backend bench/lut-lib-run.sh
# then, with .gpu/pack carried:
#   bash .gpu/pack/bin/lut-lib-run.sh
# Steps, each under its own limit, none started after LUT_LIB_DEADLINE
# seconds (default 540):
#   test      test_cuda_backend (its LUT cases among the rest; LUT_LIB_CASE=lut:
#             the LUT's case alone)
#   verify    QGEMV_CUDA_LAYOUT=lut qgemv verify --backend cuda
#   bench     qgemv bench --graph, m = 1, the issue's shapes, every format,
#             f32 and bf16 x: the default choice (the LUT where it fills the
#             GPU) and QGEMV_CUDA_LAYOUT=tiles and =lut, in one run; the
#             fused norm (after the sanitizers)
#   sanitize  compute-sanitizer memcheck and racecheck of the LUT's case
#             (CK_RUN_CASE=lut, QGEMV_TEST_QUICK=1)
# Outputs go to LUT_LIB_WORK (default /tmp/lut-lib) and are packed after
# every step into $OUT/lut-lib.tgz (the device tool returns at most 8 files).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
source "$here/../env.sh"
dest=${OUT:-/tmp/lut-lib-out}
out=${LUT_LIB_WORK:-/tmp/lut-lib}
mkdir -p "$dest" "$out"
deadline=${LUT_LIB_DEADLINE:-540}
pack() { tar -czf "$dest/lut-lib.tgz" -C "$out" . 2>/dev/null; }
left() { [ "$SECONDS" -lt "$((deadline - $1))" ]; }
step() { echo "== $1 rc $2 ($SECONDS s)"; pack; }
shapes="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1

CK_FORK=no CK_RUN_CASE=${LUT_LIB_CASE:-} timeout 240 "$here/test_cuda_backend" > "$out/test.txt" 2>&1
step test $?
tail -n 3 "$out/test.txt"
left 60 && { QGEMV_CUDA_LAYOUT=lut timeout 90 qgemv verify --backend cuda > "$out/verify-lut.txt" 2>&1; step verify $?; }
tail -n 4 "$out/verify-lut.txt"
bench() { # file, then qgemv bench's options
  local f=$1
  shift
  timeout 150 qgemv bench --backend cuda --graph --min-time 0.1 --working-set 512M --no-baseline "$@" \
    --json "$out/$f.json" > "$out/$f.txt" 2>&1
  step "bench $f" $?
}
left 120 && bench m1-auto $shapes --format all --dtype f32,bf16 --m 1
left 120 && QGEMV_CUDA_LAYOUT=tiles bench m1-tiles $shapes --format all --dtype f32,bf16 --m 1
left 120 && QGEMV_CUDA_LAYOUT=lut bench m1-lut $shapes --format all --dtype f32,bf16 --m 1
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for tool in memcheck racecheck; do
  left 100 || break
  [ -n "$sanitizer" ] || break
  extra=""; [ "$tool" = memcheck ] && extra="--report-api-errors no"
  QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=lut timeout 200 "$sanitizer" --tool "$tool" $extra --error-exitcode 9 \
    "$here/test_cuda_backend" > "$out/sanitize-$tool.txt" 2>&1
  step "sanitize $tool" $?
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:" "$out/sanitize-$tool.txt" | tail -n 2
done
left 60 && bench norm-auto --shape 28672x8192 --shape 8192x28672 --format all --dtype f32,bf16 --m 1 --rmsnorm
echo "== bench m = 1: auto (LUT where chosen), tiles, LUT wherever it fits"
for f in m1-auto m1-tiles m1-lut norm-auto; do echo "-- $f"; grep -E "^- " "$out/$f.txt" | cut -c1-75 | head -40; done
