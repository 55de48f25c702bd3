#!/bin/bash
# The lab's GPU run. Build here (bash bench/lab/build.sh), copy build/lab and
# this script into /work/main/.gpu/lab/, then run there with the device tool:
#   run(command="bash .gpu/lab/run.sh", carry=[".gpu/lab"], timeout_s=600)
# Steps (each bounded by `timeout`, so one broken variant cannot eat the run):
#   1. the card's state; SASS counts of every lab kernel (cuobjdump)
#   2. lab --probe             the read ceiling           -> $OUT/probe.json
#   3. lab --fmt nf4|q2g64|q2g128  sweep, checks, batched, subtractive,
#                              adversarial, norm          -> $OUT/<fmt>.json
#   4. ncu --set full of two variants at 28672x8192 (LAB_NCU: tags from the
#      lab's list, default the fastest NF4 f32 (two-term table) and Q2_0 g64
#      bf16 kernels)           -> $OUT/ncu-<tag>.txt
# The whole run keeps within LAB_DEADLINE seconds (default 570: the device
# tool's 600-second limit): each step's timeout is cut to what is left.
#   5. the short table         -> $OUT/summary.txt, printed last
# Everything printed also goes to $OUT/log.txt (8 files come back at most).
# LAB_FMTS / LAB_ARGS / LAB_NCU narrow a run (e.g. LAB_FMTS=nf4).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
lab="$here/lab"
out=${OUT:-/tmp/lab-out}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
sum="$out/summary.txt"
ncuf=/tmp/lab-ncu-targets.txt
rm -f "$ncuf" "$sum"
t0=$(date +%s)
stamp() { echo "[$(($(date +%s) - t0)) s] $*"; }
deadline=$((t0 + ${LAB_DEADLINE:-570}))
left() { # seconds for a step: its own limit or what is left, whichever is less
  local l=$((deadline - $(date +%s)))
  [ "$l" -lt "$1" ] && echo $((l > 1 ? l : 1)) || echo "$1"
}

stamp "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit \
  --format=csv 2>&1
nvcc_dir=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
cuobjdump=$(command -v cuobjdump || echo "$nvcc_dir/cuobjdump")
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
echo "cuobjdump: $cuobjdump  ncu: ${ncu:-none}"

stamp "== SASS per kernel (HMMA LDS LDG LDGSTS UBLKCP LDL STL)"
if [ -x "$cuobjdump" ]; then
  "$cuobjdump" -sass "$lab" 2>/dev/null | awk '
    /Function :/ { if (fn != "") print fn, h, lds, ldg, lgs, blk, ldl, stl; fn = $3; h = lds = ldg = lgs = blk = ldl = stl = 0 }
    /HMMA/ { h++ } /LDS/ { lds++ } /LDG/ { ldg++ } /LDGSTS/ { lgs++ } /UBLKCP/ { blk++ } /LDL/ { ldl++ } /STL/ { stl++ }
    END { if (fn != "") print fn, h, lds, ldg, lgs, blk, ldl, stl }' | grep qmv | (command -v c++filt >/dev/null && c++filt || cat)
fi

stamp "== probes"
timeout "$(left 60)" "$lab" --probe --out "$out" --summary "$sum"
ceil=$(awk '/^CEILING/ { c = $2 } END { print c + 0 }' "$out/log.txt")
stamp "ceiling $ceil GB/s"

for f in ${LAB_FMTS:-nf4 q2g64 q2g128}; do
  stamp "== lab $f"
  timeout "$(left 170)" "$lab" --fmt "$f" --ceiling "$ceil" --out "$out" --summary "$sum" --ncu-file "$ncuf" ${LAB_ARGS:-} ||
    echo "lab $f: exit status $?"
done

if [ -n "$ncu" ] && [ -f "$ncuf" ] && [ -z "${LAB_NONCU:-}" ]; then
  grep -E "^(${LAB_NCU:-nf4-best|q2g64-best}) " "$ncuf" | head -n 2 | while read -r tag spec; do
    stamp "== ncu $tag: $spec"
    rep="$out/ncu-$tag.txt"
    args=(--clock-control none --set full -k regex:qmv --launch-skip 2 --launch-count 1)
    [ "$(left 90)" -lt 40 ] && { stamp "ncu $tag skipped: too little time left"; continue; }
    timeout "$(left 90)" "$ncu" "${args[@]}" --page details --print-details all "$lab" --only "$spec" >"$rep" 2>&1 ||
      timeout "$(left 90)" "$ncu" "${args[@]}" --page details "$lab" --only "$spec" >"$rep" 2>&1
    grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible" \
      "$rep" | head -n 12
  done
fi

stamp "== done"
echo "== summary (us per call at m=1, GB/s, % of the read ceiling; best variant; batched / norm ratios; checks)"
cat "$sum"
