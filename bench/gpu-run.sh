#!/bin/bash
# The CUDA backend's GPU run (issues 3 and 7), from the build tree of a
# release tarball on the GPU machine (see shared/gpu/README.md):
#   CONFIGURE_ARGS='--with-cuda=/usr/local/cuda --with-cuda-arch=sm_90' \
#     CK_FORK=no bash .gpu/device-build.sh 'bash bench/gpu-run.sh check' 'bash bench/gpu-run.sh bench'
# Phases (default: all, in this order):
#   check     make check (CK_FORK=no) and qgemv verify --backend cuda
#   sanitize  compute-sanitizer memcheck and racecheck on test_cuda_backend
#             (QGEMV_TEST_QUICK=1: the suite's reduced sizes)
#   sass      per kernel: 16-byte loads, local memory, mma count (cuobjdump)
#   bench     qgemv bench on the issue-7 shapes: all formats with bf16
#             activations at m = 1, 8, 16; NF4 with f32 at m = 1, 8; fused
#             RMSNorm at 28672x8192; one ncu profile of the NF4 (f32) and
#             Q2_0 g128 (bf16) kernels at 28672x8192
# Everything goes to stdout (device-build.sh keeps it as runN.log); bench
# also writes $OUT/bench-bf16.json and $OUT/bench-nf4-f32.json (the tool's
# JSON: figures, machine, command) for bench/results/. Exit status 1 if any
# phase failed. (The device returns at most 8 files from $OUT.)
set -u -o pipefail
out=${OUT:-/tmp/gpu-out}
mkdir -p "$out"
top=$(pwd)
[ -f config.h ] && [ -x libtool ] || { echo "run from the build tree (config.h, libtool)" >&2; exit 2; }
export QGEMV_PLUGIN_PATH="$top/src/backend-cuda/.libs"
module="$QGEMV_PLUGIN_PATH/qgemv-cuda.so"
run() { ./libtool --mode=execute "$@"; } # tools and tests are libtool wrappers
nvcc=$(sed -n 's/^NVCC = //p' Makefile | head -n 1)
cudabin=$(dirname "${nvcc:-/usr/local/cuda/bin/nvcc}")
find_tool() { command -v "$1" 2>/dev/null || { [ -x "$cudabin/$1" ] && echo "$cudabin/$1"; } || true; }

phase_check() {
  echo "== make check (CK_FORK=no)"
  CK_FORK=no make check
  local rc=$?
  for t in tests/test_cuda_backend tests/test_cuda_layout tests/test_cuda_fatbin.sh; do
    [ -f "$t.log" ] && { echo "== $t.log"; cat "$t.log"; }
  done
  [ $rc -ne 0 ] && [ -f test-suite.log ] && { echo "== test-suite.log"; cat test-suite.log; }
  echo "== qgemv verify --backend cuda"
  run tools/qgemv verify --backend cuda || rc=1
  echo "== QGEMV_BACKEND=auto qgemv info"
  QGEMV_BACKEND=auto run tools/qgemv info || rc=1
  return $rc
}

phase_sanitize() {
  local cs rc=0
  cs=$(find_tool compute-sanitizer)
  [ -n "$cs" ] || { echo "compute-sanitizer not found"; return 1; }
  make tests/test_cuda_backend >/dev/null || return 1
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool tests/test_cuda_backend (QGEMV_TEST_QUICK=1)"
    extra=""; [ "$tool" = memcheck ] && extra="--report-api-errors no" # the NO_MEMORY test fails cudaMalloc on purpose
    QGEMV_TEST_QUICK=1 CK_FORK=no run "$cs" --tool "$tool" $extra --error-exitcode 3 tests/test_cuda_backend || rc=1
  done
  return $rc
}

phase_sass() {
  local cuobjdump
  cuobjdump=$(find_tool cuobjdump)
  [ -n "$cuobjdump" ] || { echo "cuobjdump not found"; return 1; }
  echo "== cubins"
  "$cuobjdump" --list-elf "$module"
  for arch in $(sed -n 's/.*cuda-arch=\([^ "]*\).*/\1/p' config.h | tr ',' ' '); do
    echo "== $arch: per kernel, instructions of interest (LDG.E.128 = 16-byte loads; LDL/STL = local memory)"
    "$cuobjdump" -sass -arch "$arch" "$module" | awk '
      function report() {
        printf "%-58s instr %5d  LDG.128 %3d  LDG.64 %3d  LDG.32- %3d  LDS %3d  HMMA %3d  LDL %d  STL %d\n",
          substr(name, 1, 58), total, n128, n64, nsmall, lds, mma, ldl, stl
      }
      /Function :/ { if (name) report(); name = $3; n128 = n64 = nsmall = ldl = stl = mma = lds = total = 0; next }
      /^ +\/\*[0-9a-f]+\*\// {
        total++
        op = ""
        for (i = 2; i <= NF; i++) if ($i !~ /^@/) { op = $i; break }
        if (op ~ /^LDG/) { if (op ~ /\.128/) n128++; else if (op ~ /\.64/) n64++; else nsmall++ }
        if (op ~ /^LDL/) ldl++
        if (op ~ /^STL/) stl++
        if (op ~ /^HMMA/) mma++
        if (op ~ /^LDS/) lds++
      }
      END { if (name) report() }'
  done
}

phase_bench() {
  local rc=0 help shapes="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096"
  help=$(run tools/qgemv bench --help 2>&1)
  if echo "$help" | grep -q -- '--json' && echo "$help" | grep -q -- '--m LIST'; then
    echo "== qgemv bench: NF4, Q2_0 g128, Q2_0 g64 with bf16 activations, m = 1, 8, 16"
    run tools/qgemv bench --backend cuda $shapes --format all --dtype bf16 --m 1,8,16 --json "$out/bench-bf16.json" || rc=1
    echo "== qgemv bench: NF4 with f32 activations, m = 1, 8"
    run tools/qgemv bench --backend cuda $shapes --format nf4 --dtype f32 --m 1,8 --json "$out/bench-nf4-f32.json" || rc=1
    if echo "$help" | grep -q -- '--rmsnorm'; then
      echo "== qgemv bench: fused RMSNorm + matvec, 28672x8192 (compare with the plain rows above)"
      run tools/qgemv bench --backend cuda --shape 28672x8192 --format all --dtype bf16,f32 --rmsnorm --no-baseline || rc=1
    fi
  else
    echo "$help"
    for m in 1 8; do
      echo "== qgemv bench, Q2_0 g128 and g64 and NF4, bf16 activations, m=$m"
      run tools/qgemv bench --backend cuda $shapes --format all --dtype bf16 --m $m || rc=1
      echo "== qgemv bench, NF4, f32 activations, m=$m"
      run tools/qgemv bench --backend cuda $shapes --format nf4 --dtype f32 --m $m || rc=1
    done
  fi
  local ncu
  ncu=$(find_tool ncu)
  if [ -n "$ncu" ]; then
    for f in "nf4 --dtype f32" "q2_0 --dtype bf16"; do
      echo "== ncu, $f, 28672x8192"
      run "$ncu" --clock-control none -k regex:matvec_kernel -s 2 -c 1 --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
        tools/qgemv bench --backend cuda --shape 28672x8192 --format $f --min-time 0 || rc=1
    done
  else
    echo "ncu not found: no profile"
  fi
  return $rc
}

phases=${*:-check sanitize sass bench}
status=0
for p in $phases; do
  case $p in
    check | sanitize | sass | bench) ;;
    *) echo "unknown phase '$p' (check, sanitize, sass, bench)" >&2; exit 2 ;;
  esac
  echo "######## $p"
  "phase_$p" 2>&1
  rc=$?
  echo "######## $p: exit $rc"
  [ "$rc" -ne 0 ] && status=1
done
exit $status
