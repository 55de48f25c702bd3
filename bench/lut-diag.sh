#!/bin/bash
# Why the library's LUT form (v39) is slower than the lab's (bench/NOTES.md
# v39): the lab's f32 and f64 forms side by side, ncu of the library's LUT
# kernel and of the lab's, and the sanitizers on the library's LUT cases.
# Outputs packed into $OUT/lut-diag.tgz.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
source "$here/../env.sh"
dest=${OUT:-/tmp/lut-diag-out}
out=/tmp/lut-diag
mkdir -p "$dest" "$out"
pack() { tar -czf "$dest/lut-diag.tgz" -C "$out" . 2>/dev/null; }
deadline=${DIAG_DEADLINE:-540}
left() { [ "$SECONDS" -lt "$((deadline - $1))" ]; }
for c in nf4:prmt-w16-b16-nb8-pref2 nf4:a64-prmt-w16-b16-nb8-pref2 q2g128:prmt-w16-b16-nb8-pref2 \
  q2g128:sc16-prmt-w16-b16-nb8-pref2 q2g64:sc16-prmt-w16-b16-nb8-pref2 nf4:LOADS-w16-b16-nb8-pref; do
  f=${c%%:*} v=${c#*:}
  timeout 60 "$here/lut" --shapes 28672x8192 --fmts "$f" --only "$v" --S 8 > "$out/lab-$f-$v.txt" 2>&1
  echo "lab $f $v rc $? ($SECONDS s): $(grep -E ' m 1 ' "$out/lab-$f-$v.txt" | head -n 1 | cut -c1-170)"
done
pack
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
prof_lib() { # name format dtype
  left 90 || return
  timeout 120 "$ncu" --clock-control none --set full -k regex:lut_kernel -s 3 -c 1 qgemv bench --backend cuda \
    --shape 28672x8192 --format "$2" --dtype "$3" --m 1 --iters 5 --no-baseline > "$out/ncu-lib-$1.txt" 2>&1
  echo "ncu lib $1 rc $? ($SECONDS s)"
  pack
}
prof_lib nf4 nf4 f32
prof_lib q2g128 q2_0 bf16
left 90 && { timeout 120 "$ncu" --clock-control none --set full -k regex:lut_kernel -c 1 "$here/lut" --no-time \
  --shapes 28672x8192 --fmts nf4 --only prmt-w16-b16-nb8-pref2 --S 8 > "$out/ncu-lab-nf4.txt" 2>&1; echo "ncu lab rc $?"; pack; }
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck; do
  left 100 || break
  QGEMV_TEST_QUICK=1 CK_FORK=no timeout 150 "$san" --tool "$tool" --error-exitcode 9 --kernel-name kns=lut \
    "$here/test_cuda_backend" > "$out/sanitize-$tool.txt" 2>&1
  echo "sanitize $tool rc $? ($SECONDS s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Checks' "$out/sanitize-$tool.txt" | tail -n 2 | tr '\n' ' ')"
  pack
done
for n in nf4 q2g128; do
  echo "== ncu lib $n"
  grep -E "Duration|Registers Per|Local Memory|DRAM Throughput|Memory Throughput|Issue Slots|Achieved Occupancy|Warp Cycles Per Issued|Executed Ipc A|L1/TEX Hit|Mem Pipes Busy|spill" "$out/ncu-lib-$n.txt" | head -20
done
echo "== ncu lab nf4"
grep -E "Duration|Registers Per|Local Memory|DRAM Throughput|Issue Slots|Warp Cycles Per Issued|Executed Ipc A|spill" "$out/ncu-lab-nf4.txt" | head -12
