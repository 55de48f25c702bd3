#!/bin/bash
# The CUDA backend's GPU run from a packed install (shared/gpu/README.md,
# route A: built and packed on the development machine, nothing built on
# the GPU machine). Here:
#   bash ../shared/gpu/pack.sh BUILD_DIR tests/.libs/test_cuda_backend \
#     tests/.libs/test_hardening_cuda bench/gpu-pack-run.sh bench/ncu-insn.py
# then, from the root the device tool sends, with .gpu/pack carried:
#   bash .gpu/pack/bin/gpu-pack-run.sh [PHASE...]
# Phases (default: all, in this order; each under its own time limit, and
# none started after GPU_DEADLINE seconds, default 540):
#   check     the CUDA suites (CK_FORK=no), qgemv verify --backend cuda, info
#   checkint  the same with QGEMV_CUDA_PLAN=x=int (Q2_0's integer mma for
#             bf16 x); not in the default list
#   bench     qgemv bench on the issue-13 shapes: every format, bf16 and f32,
#             m = 1, 8, 16 (bench.json); fused RMSNorm at 28672x8192
#             (bench-norm.json); the llama3-8b preset (llama3-8b.json)
#   sanitize  compute-sanitizer memcheck and racecheck on test_cuda_backend
#             (QGEMV_TEST_QUICK=1)
#   sass      per kernel: registers, local memory, mma and bulk-copy counts
#   profile   ncu --clock-control none of NF4 (f32 x) and Q2_0 g128 (bf16 x)
#             at 28672x8192, or of PROFILE_CASES ("nf4 f32 8192x28672,
#             q2_0g64 f32 28672x8192 8": format, dtype, shape, m):
#             the details page, then (with bin/ncu-insn.py packed) where
#             the warps' time goes per SASS instruction, in one file each;
#             the first kernel of the call that PROFILE_KERNELS (an ncu
#             regex, default "matvec_kernel|lut_kernel|share_kernel": the
#             tiles, the LUT's main kernel, the share form) names
#   sweep     bench/plan-sweep.sh (QGEMV_CUDA_PLAN overrides; SWEEP_GROUPS,
#             default every group) into $OUT/sweep; not in the default list
#   cpasync   the sm_80-89 ring (cp.async, no mbarriers) on this card: a
#             module built with -DQGC_FORCE_CP_ASYNC, packed as
#             bin/qgemv-cuda-cpasync.so, runs test_cuda_backend, then
#             racecheck and memcheck of it; not in the default list
# Everything is logged to $OUT/log.txt; JSON and profiles to $OUT. Exit
# status 1 if any phase failed.
set -u -o pipefail
out=${OUT:-/tmp/gpu-out}
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# env.sh points QGEMV_PLUGIN_PATH at the pack's module; a caller's own
# (a module under test) is kept. Before v30 it was not, so "profile" with a
# module in QGEMV_PLUGIN_PATH profiled the pack's module instead.
caller_plugins=${QGEMV_PLUGIN_PATH:-}
# shellcheck source=/dev/null
source "$here/../env.sh"
[ -n "$caller_plugins" ] && export QGEMV_PLUGIN_PATH=$caller_plugins
log=$out/log.txt
deadline=${GPU_DEADLINE:-540}
start=$SECONDS
cudabin=/usr/local/cuda/bin
find_tool() { command -v "$1" 2>/dev/null || { [ -x "$cudabin/$1" ] && echo "$cudabin/$1"; } || true; }
module=$QGEMV_PLUGIN_PATH/qgemv-cuda.so
shapes="--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096"

phase_check() {
  local rc=0 t
  for t in test_cuda_backend test_hardening_cuda; do
    echo "== $t"
    CK_FORK=no timeout 240 "$here/$t" || rc=1
  done
  echo "== qgemv verify --backend cuda"
  timeout 120 qgemv verify --backend cuda || rc=1
  echo "== qgemv info"
  QGEMV_BACKEND=auto qgemv info || rc=1
  return $rc
}

phase_checkint() { QGEMV_CUDA_PLAN=x=int phase_check; }

phase_bench() {
  local rc=0
  echo "== qgemv bench: issue-13 shapes, every format, bf16 and f32, m = 1, 8, 16"
  timeout 300 qgemv bench --backend cuda $shapes --format all --dtype bf16,f32 --m 1,8,16 --min-time 0.1 \
    --json "$out/bench.json" || rc=1
  echo "== qgemv bench: fused RMSNorm + matvec, 28672x8192"
  timeout 60 qgemv bench --backend cuda --shape 28672x8192 --format all --dtype bf16,f32 --rmsnorm --min-time 0.1 \
    --no-baseline --json "$out/bench-norm.json" || rc=1
  echo "== qgemv bench: llama3-8b"
  timeout 90 qgemv bench --backend cuda --preset llama3-8b --format all --dtype bf16 --min-time 0.2 \
    --json "$out/llama3-8b.json" || rc=1
  return $rc
}

# memcheck and racecheck of test_cuda_backend with the module that
# QGEMV_PLUGIN_PATH finds; $1 names that module in the log.
sanitize_suite() {
  local cs rc=0 tool extra st f
  cs=$(find_tool compute-sanitizer)
  [ -n "$cs" ] || { echo "compute-sanitizer not found"; return 1; }
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool test_cuda_backend, $1 (QGEMV_TEST_QUICK=1)"
    extra=""; [ "$tool" = memcheck ] && extra="--report-api-errors no" # the NO_MEMORY test fails cudaMalloc on purpose
    f=$(mktemp)
    # racecheck of the phased launches (16 warps, B in 2 phases at m = 1)
    # ran past 150 s on the H200 (2026-12-01): 420 s for it, 150 for memcheck
    QGEMV_TEST_QUICK=1 CK_FORK=no timeout "$([ "$tool" = racecheck ] && echo 420 || echo 150)" "$cs" --tool "$tool" $extra \
      --error-exitcode 3 "$here/test_cuda_backend" 2>&1 | tee "$f"
    st=${PIPESTATUS[0]}
    # racecheck exits non-zero for warnings too (the TMA ring's 533 since
    # v4, bench/NOTES.md v5): a run that the time limit did not stop, whose
    # summary counts 0 errors and whose suite passed, is a pass
    if [ "$st" -ne 0 ] && [ "$tool" = racecheck ] && [ "$st" -ne 124 ] && [ "$st" -ne 137 ] &&
      grep -q "RACECHECK SUMMARY: .*(0 errors" "$f" && grep -q "Failures: 0, Errors: 0" "$f"; then
      echo "== racecheck exited $st with 0 errors (warnings only): passed"
      st=0
    fi
    [ "$st" -eq 0 ] || rc=1
    rm -f "$f"
  done
  return $rc
}

phase_sanitize() { sanitize_suite "the packed module"; }

phase_sass() {
  local cuobjdump
  cuobjdump=$(find_tool cuobjdump)
  [ -n "$cuobjdump" ] || { echo "cuobjdump not found"; return 1; }
  echo "== sm_90 per kernel (LDL/STL = local memory)"
  "$cuobjdump" -sass -arch sm_90 "$module" | awk '
    function report() { printf "%-60s instr %5d HMMA %3d IMMA %3d LDS %3d LDG %3d LDGSTS %3d UBLKCP %3d LDL %d STL %d\n",
                        substr(name, 1, 60), total, mma, imma, lds, ldg, cpa, blk, ldl, stl }
    /Function :/ { if (name) report(); name = $3; total = mma = imma = lds = ldg = cpa = blk = ldl = stl = 0; next }
    /^ +\/\*[0-9a-f]+\*\// { total++; op = ""; for (i = 2; i <= NF; i++) if ($i !~ /^@/) { op = $i; break }
      if (op ~ /^HMMA/) mma++; if (op ~ /^IMMA/) imma++; if (op ~ /^LDS/) lds++; if (op ~ /^LDG/) ldg++; if (op ~ /^LDGSTS/) cpa++
      if (op ~ /^UBLKCP/) blk++; if (op ~ /^LDL/) ldl++; if (op ~ /^STL/) stl++ }
    END { if (name) report() }'
}

phase_profile() {
  local ncu rc=0 f
  ncu=$(find_tool ncu)
  [ -n "$ncu" ] || { echo "ncu not found"; return 1; }
  # PROFILE_CASES: "FORMAT DTYPE SHAPE [M]" (M: activation rows, default
  # 1), comma-separated
  local cases=${PROFILE_CASES:-"nf4 f32 28672x8192,q2_0 bf16 28672x8192"} c
  IFS=, read -ra cases <<< "$cases"
  for c in "${cases[@]}"; do
    set -- $c
    local m=${4:-1}
    echo "== ncu --clock-control none, $1 $2 x, $3, m = $m"
    local rep=/tmp/gpu-pack-run-ncu txt="$out/ncu-$1-$2-$3${4:+-m$4}.txt"
    timeout 90 "$ncu" --clock-control none -k "regex:${PROFILE_KERNELS:-matvec_kernel|lut_kernel|share_kernel}" -s 3 -c 1 \
      --set full -o "$rep" -f \
      qgemv bench --backend cuda --shape "$3" --format "$1" --dtype "$2" --m "$m" --iters 5 --no-baseline \
      > "$txt" 2>&1 || rc=1
    "$ncu" -i "$rep.ncu-rep" --page details >> "$txt" 2>&1 || rc=1
    # per SASS instruction (bench/ncu-insn.py, packed beside this script),
    # in the same file: the device tool returns at most 8 files a call
    if [ -f "$here/ncu-insn.py" ]; then
      "$ncu" -i "$rep.ncu-rep" --page source --print-source sass --csv > "$rep.csv" 2>/dev/null &&
        python3 "$here/ncu-insn.py" "$rep.csv" 25 >> "$txt" 2>&1
    fi
    grep -E "Duration|DRAM Throughput|Memory Throughput|L1/TEX Cache Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Eligible Warps Per|Executed Ipc A|warp instructions executed" \
      "$txt" | head -24
  done
  return $rc
}

phase_sweep() {
  # shellcheck disable=SC2086
  OUT=$out/sweep SWEEP_DEADLINE=$((deadline - (SECONDS - start) - 60)) bash "$here/plan-sweep.sh" ${SWEEP_GROUPS:-}
}

phase_cpasync() {
  local rc=0 dir=/tmp/qgemv-cpasync
  [ -f "$here/qgemv-cuda-cpasync.so" ] || { echo "bin/qgemv-cuda-cpasync.so not packed"; return 1; }
  mkdir -p "$dir" && cp "$here/qgemv-cuda-cpasync.so" "$dir/qgemv-cuda.so"
  echo "== test_cuda_backend with the cp.async ring (QGEMV_TEST_QUICK=1)"
  QGEMV_PLUGIN_PATH=$dir QGEMV_TEST_QUICK=1 CK_FORK=no timeout 120 "$here/test_cuda_backend" || rc=1
  QGEMV_PLUGIN_PATH=$dir sanitize_suite "the cp.async ring" || rc=1
  return $rc
}

phases=${*:-check bench sanitize sass profile}
status=0
{
  echo "gpu-pack-run: $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1
  for p in $phases; do
    case $p in
      check | checkint | bench | sanitize | sass | profile | sweep | cpasync) ;;
      *) echo "unknown phase '$p'"; status=1; continue ;;
    esac
    if [ $((SECONDS - start)) -ge "$deadline" ]; then
      echo "######## $p: skipped, past the ${deadline}s deadline"
      status=1
      continue
    fi
    echo "######## $p (at $((SECONDS - start)) s)"
    "phase_$p" 2>&1
    rc=$?
    echo "######## $p: exit $rc (at $((SECONDS - start)) s)"
    [ "$rc" -ne 0 ] && status=1
  done
} 2>&1 | tee "$log"
exit $status
