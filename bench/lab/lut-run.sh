#!/bin/bash
# The lookup-table kernel's question run (bench/lab/lut.cu, bench/NOTES.md
# v36) on the GPU machine: the lut sweep, the library's own m = 1 figures
# in the same run (qgemv bench --graph), and ncu of the NF4 and Q2_0 winners
# (Q2_0 with f32 and fp16 scales) and of NF4's loads-only variant. Here:
# build bench/lab/build/lut (lut.cu's header), then
#   mkdir -p .gpu/pack/bin && cp bench/lab/build/lut bench/lab/lut-run.sh .gpu/pack/bin/
#   run(command="source .gpu/pack/env.sh && bash .gpu/pack/bin/lut-run.sh", carry=[".gpu/pack"])
# Outputs: gpu.txt, lut-FMT.txt and lut-FMT.json (FMT nf4, q2g128, q2g64),
# qgemv.txt, qgemv-batched.txt, ncu-*.txt, written to LUT_WORK (default
# /tmp/lut-run) and packed after every step into $OUT/lut-run.tgz: the device
# tool brings back at most 8 files a call (v38 lost qgemv.txt, the ninth). About 2-4 minutes (v38 on an H100: each format's sweep over the
# four shapes took 2-10 s, the library's bench about 40 s); LUT_DEADLINE,
# default 500 s, skips what would not finish.
set -u
dest=${OUT:-/tmp/lut-out}
out=${LUT_WORK:-/tmp/lut-run}
mkdir -p "$dest" "$out"
pack() { tar -czf "$dest/lut-run.tgz" -C "$out" . 2>/dev/null; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lut=${LUT:-$here/lut}
deadline=${LUT_DEADLINE:-500}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
# one process per format, so that a fault (which loses the CUDA context)
# costs one format's figures, not the sweep's
sweep=${LUT_SWEEP_S:-300}
for f in nf4 q2g128 q2g64; do
  timeout $((sweep / 3 + 30)) "$lut" --fmts "$f" --deadline $((sweep / 3)) ${LUT_ARGS:-} \
    --json "$out/lut-$f.json" > "$out/lut-$f.txt" 2>&1
  echo "lut $f rc $? ($SECONDS s)"
  pack
done
# the tile stream: since v39 a --m 1 bench takes the library's LUT form
QGEMV_CUDA_LAYOUT=tiles timeout 150 qgemv bench --backend cuda --shape 28672x8192 --shape 8192x28672 --shape 14336x4096 \
  --shape 4096x4096 --format all --dtype f32,bf16 --m 1 --graph --min-time 0.1 --working-set 512M \
  --no-baseline > "$out/qgemv.txt" 2>&1
echo "qgemv bench rc $? ($SECONDS s)"
pack
[ "$SECONDS" -lt "$((deadline - 60))" ] && timeout 60 qgemv bench --backend cuda --shape 28672x8192 \
  --format all --dtype f32 --m 2,4,8 --graph --min-time 0.1 --working-set 512M --no-baseline \
  > "$out/qgemv-batched.txt" 2>&1
echo "qgemv bench batched rc $? ($SECONDS s)"
pack
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
prof() { # name fmt variant S
  [ -n "$ncu" ] || { echo "no ncu"; return; }
  [ "$SECONDS" -lt "$((deadline - 90))" ] || { echo "skip ncu $1 (deadline)"; return; }
  timeout 120 "$ncu" --clock-control none --set full -k regex:lut_kernel -c 1 "$lut" --no-time \
    --shapes 28672x8192 --fmts "$2" --only "$3" --S "$4" > "$out/ncu-$1.txt" 2>&1
  echo "ncu $1 rc $? ($SECONDS s)"
  pack
}
prof nf4 nf4 "${LUT_NCU_NF4:-prmt-w16-b16-nb8-pref2}" "${LUT_NCU_S:-8}"
prof q2g128 q2g128 "${LUT_NCU_Q2:-prmt-w16-b16-nb8-pref2}" "${LUT_NCU_S:-8}"
prof q2g128-sc16 q2g128 "${LUT_NCU_Q2_16:-sc16-prmt-w16-b16-nb8-pref2}" "${LUT_NCU_S:-8}"
prof nf4-loads nf4 LOADS-w16-b16-nb8-pref "${LUT_NCU_S:-8}"
echo "== lut best"; for f in nf4 q2g128 q2g64; do sed -n '/^best/,$p' "$out/lut-$f.txt"; done
echo "== lut 28672x8192 m 1: loads-only, f64 sums, fp16 scales, the f32 cluster"
grep -h ' m 1 ' "$out"/lut-*.txt | grep 28672x8192 | grep -E 'LOADS|a64|sc16|cl-prmt-w16-b16-nb8-pref2 ' | cut -c1-150
echo "== qgemv bench"; grep -E 'read|28672|8192|14336|4096' "$out/qgemv.txt" | head -40
