#!/bin/bash
# The lookup-table form in the library (issue 13, bench/NOTES.md v39) on the
# GPU machine, from a packed install (route A). Here:
#   bash ../shared/gpu/pack.sh BUILD_DIR tests/.libs/test_cuda_backend bench/lut-lib-run.sh
# then, with .gpu/pack carried:
#   bash .gpu/pack/bin/lut-lib-run.sh
# Steps, each under its own limit, none started after LUT_LIB_DEADLINE
# seconds (default 540):
#   test      test_cuda_backend (its LUT cases among the rest; LUT_LIB_CASE=lut:
#             the LUT's case alone), under LUT_LIB_TEST_S seconds (default
#             540: the whole suite may need more since v42, so run the gpu
#             case and the LUT case in two calls, LUT_LIB_CASE=gpu, then lut)
#   verify    QGEMV_CUDA_LAYOUT=lut qgemv verify --backend cuda
#   bench     qgemv bench --graph, m = 1, the issue's shapes, every format,
#             f32 and bf16 x: the default choice (the LUT where it fills the
#             GPU) and QGEMV_CUDA_LAYOUT=tiles and =lut, in one run; the
#             fused norm (after the sanitizers)
#   batched   qgemv bench --graph, m = 1, 8 and 16 on the same shapes (the
#             weights uploaded for m = 16: the tiles), for the batched targets
#             (LUT_LIB_BATCHED=0 leaves it out)
#   sanitize  compute-sanitizer memcheck and racecheck of the LUT's case
#             (CK_RUN_CASE=lut, QGEMV_TEST_QUICK=1); LUT_LIB_SANITIZERS names
#             the tools (default "memcheck racecheck"), LUT_LIB_SAN_S the limit
#             of each (default 200 s; racecheck of the case needs about 400),
#             LUT_LIB_SAN_ARGS more options (e.g. --kernel-name kns=lut_kernel)
# LUT_LIB_STEPS (default "test verify bench batched sanitize norm") picks the
# steps, e.g. LUT_LIB_STEPS=sanitize LUT_LIB_SANITIZERS=racecheck for a call
# of its own.
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

steps=${LUT_LIB_STEPS:-test verify bench batched sanitize norm}
want() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
if want test; then
  # CK_RUN_CASE only when named: set but empty, Check runs no case at all
  # the whole suite took 415 s on an H100 beside a racecheck (v41); with
  # c05a0af's two LUT shapes 540 s cut it (v42), and the LUT case alone
  # then took 241 s;
  # the log names each test as it passes, so a cut run still says how far it got
  CK_FORK=no CK_VERBOSITY=verbose CK_LOG_FILE_NAME="$out/test-log.txt" env ${LUT_LIB_CASE:+CK_RUN_CASE=$LUT_LIB_CASE} \
    timeout "${LUT_LIB_TEST_S:-540}" "$here/test_cuda_backend" > "$out/test.txt" 2>&1
  step test $?
  tail -n 3 "$out/test.txt"
fi
if want verify && left 60; then
  QGEMV_CUDA_LAYOUT=lut timeout 90 qgemv verify --backend cuda > "$out/verify-lut.txt" 2>&1
  step verify $?
  tail -n 4 "$out/verify-lut.txt"
fi
bench() { # file, then qgemv bench's options
  local f=$1
  shift
  timeout 150 qgemv bench --backend cuda --graph --min-time 0.1 --working-set 512M --no-baseline "$@" \
    --json "$out/$f.json" > "$out/$f.txt" 2>&1
  step "bench $f" $?
}
if want bench; then
  left 120 && bench m1-auto $shapes --format all --dtype f32,bf16 --m 1
  left 120 && QGEMV_CUDA_LAYOUT=tiles bench m1-tiles $shapes --format all --dtype f32,bf16 --m 1
  left 120 && QGEMV_CUDA_LAYOUT=lut bench m1-lut $shapes --format all --dtype f32,bf16 --m 1
fi
[ "${LUT_LIB_BATCHED:-1}" = 1 ] && want batched && left 120 && bench batched $shapes --format all --dtype f32,bf16 --m 1,8,16
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
san_s=${LUT_LIB_SAN_S:-200}
for tool in ${LUT_LIB_SANITIZERS:-memcheck racecheck}; do
  want sanitize || break
  left 60 || break
  [ -n "$sanitizer" ] || break
  extra=""; [ "$tool" = memcheck ] && extra="--report-api-errors no"
  QGEMV_TEST_QUICK=1 CK_FORK=no CK_RUN_CASE=lut timeout "$san_s" "$sanitizer" --tool "$tool" $extra ${LUT_LIB_SAN_ARGS:-} --error-exitcode 9 \
    "$here/test_cuda_backend" > "$out/sanitize-$tool.txt" 2>&1
  step "sanitize $tool" $?
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:" "$out/sanitize-$tool.txt" | tail -n 2
done
want norm && left 60 && bench norm-auto --shape 28672x8192 --shape 8192x28672 --format all --dtype f32,bf16 --m 1 --rmsnorm
echo "== bench m = 1: auto (LUT where chosen), tiles, LUT wherever it fits"
for f in m1-auto m1-tiles m1-lut batched norm-auto; do [ -f "$out/$f.txt" ] || continue; echo "-- $f"; grep -E "^- " "$out/$f.txt" | cut -c1-75 | head -40; done
