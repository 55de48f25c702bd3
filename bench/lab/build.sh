#!/bin/bash
# Builds the kernel lab with nvcc (no configure): build/lab with sm_90 SASS
# (the H200; static cudart, static libstdc++, so it runs on the GPU machine
# as built here), a compile check of every kernel for sm_121 (GB10: no
# wgmma, 99 KB of shared memory per block), the host emulation test
# build/emu_test (run here), and build/resources.txt (registers, spills,
# shared memory per kernel and architecture, from ptxas).
#   bash bench/lab/build.sh            everything
#   SKIP_SM121=1 bash bench/lab/build.sh   sm_90 only (faster)
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
B=build
JOBS=${JOBS:-2}
FLAGS=(-O3 -std=c++17 -lineinfo -diag-suppress 128 -maxrregcount=128)
mkdir -p "$B"

srcs=(lab.cu probe.cu host_data.cu inst_nf4.cu inst_q2g64.cu inst_q2g128.cu)
compile() { # src arch-tag gencode...
  local src=$1 tag=$2
  shift 2
  "$NVCC" "${FLAGS[@]}" "$@" -Xptxas -v -c "$src" -o "$B/${src%.cu}.$tag.o" 2>"$B/${src%.cu}.$tag.log" ||
    { cat "$B/${src%.cu}.$tag.log" >&2; return 1; }
}
export -f compile
export NVCC B
export FLAGS_STR="${FLAGS[*]}"

run_jobs() { # tag gencode: compile srcs in parallel
  local tag=$1 gen=$2 pids=() rc=0
  shift 2
  for s in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || rc=1; done
    compile "$s" "$tag" $gen &
  done
  wait || rc=1
  for p in $(jobs -rp); do wait "$p" || rc=1; done
  return $rc
}

echo "build: sm_90 objects"
run_jobs sm90 "-gencode arch=compute_90,code=sm_90" "${srcs[@]}"
"$NVCC" "${FLAGS[@]}" -o "$B/lab" "${srcs[@]/%.cu/.sm90.o}" -Xcompiler "-static-libstdc++ -static-libgcc" \
  2>/dev/null || "$NVCC" -o "$B/lab" $(printf "$B/%s " "${srcs[@]/%.cu/.sm90.o}") \
  -Xcompiler "-static-libstdc++ -static-libgcc"
if [ -z "${SKIP_SM121:-}" ]; then
  echo "build: sm_121 compile check of the kernels"
  run_jobs sm121 "-gencode arch=compute_121,code=sm_121" inst_nf4.cu inst_q2g64.cu inst_q2g128.cu probe.cu
fi
echo "build: the lookup-table lab (lut.cu) and its host emulation"
"$NVCC" -O3 -std=c++17 -lineinfo -diag-suppress 128 -gencode arch=compute_90,code=sm_90 -o "$B/lut" lut.cu \
  host_data.cu -Xcompiler "-static-libstdc++ -static-libgcc"
"$B/lut" --emu | tail -n 1
echo "build: host emulation test"
"$NVCC" -O2 -std=c++17 -diag-suppress 128 emu_test.cu host_data.cu -o "$B/emu_test"
"$B/emu_test" | tail -n 1

# registers / spills / shared memory per kernel, from the ptxas logs
{
  echo "arch kernel regs stack spill_st spill_ld static_smem"
  for log in "$B"/*.log; do
    tag=$(basename "$log" .log); tag=${tag##*.}
    awk -v tag="$tag" '
      /Compiling entry function/ { match($0, /_Z[^'"'"']*/); fn = substr($0, RSTART, RLENGTH) }
      /bytes stack frame/ { st = $1; ss = $5; sl = $9 }
      /Used [0-9]+ registers/ { r = $5; sm = 0; if (match($0, /[0-9]+ bytes smem/)) sm = substr($0, RSTART, RLENGTH) + 0;
                                print tag, fn, r, st, ss, sl, sm }' "$log"
  done
} >"$B/resources.txt"
cut -d' ' -f1 "$B/resources.txt" | sort | uniq -c | sed 's/^/build: kernels per arch /'
awk 'NR > 1 && ($5 > 0 || $6 > 0) { n++ } END { print "build: kernels with spills: " n + 0 }' "$B/resources.txt"
echo "build: done ($B/lab)"
