#!/bin/bash
# Where the fused RMSNorm's time goes on the tiles (issue 13, bench/NOTES.md
# v51): each case timed plain and with --rmsnorm by a timeline module
# (-DQGC_EXP_TIMELINE=1: each CTA's thread 0 stamps a launch's points,
# kernels_matvec.cuh), then bench/lab/timeline.py's medians side by side.
# Here:
#   bench/cuda-module.sh BUILD tl -DQGC_EXP_TIMELINE=1     (then BUILD base)
#   bash ../shared/gpu/pack.sh BUILD bench/norm-timeline.sh bench/lab/timeline.py \
#     /tmp/mods/qgemv-cuda-tl.so.xz
# there, after `source .gpu/pack/env.sh`, OUT set:
#   bash .gpu/pack/bin/norm-timeline.sh qgemv-cuda-tl.so.xz
# Cases: NORM_CASES, "FORMAT DTYPE SHAPE" separated by ';' (default below);
# weights uploaded for m = 1 (--m 1), so Q2_0 bf16 takes kB2 from 7392 rows
# on 132 SMs and kDG below. The plain call's time is the bench's; the
# timeline's stamps add a little to the staging (NOTES v12).
# Output: $OUT/norm-tl.tar.xz (the bench lines, the dumps' medians).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 1 ] || { echo "usage: norm-timeline.sh TIMELINE_MODULE.so.xz" >&2; exit 2; }
mod=$1
[ -f "$mod" ] || mod=$here/$mod
D=/tmp/norm-tl
mkdir -p "$D/mod"
xz -dc "$mod" > "$D/mod/qgemv-cuda.so" || exit 1
cases=${NORM_CASES:-"nf4 f32 4096x4096;q2_0g64 bf16 4096x4096;q2_0g64 bf16 14336x4096;q2_0g64 f32 14336x4096;nf4 f32 14336x4096"}
IFS=';' read -r -a list <<< "$cases"
for c in "${list[@]}"; do
  read -r fmt dt shape <<< "$c"
  for norm in plain norm; do
    name=$fmt-$dt-$shape-$norm
    opt=()
    [ $norm = norm ] && opt=(--rmsnorm)
    QGEMV_PLUGIN_PATH=$D/mod QGEMV_CUDA_LAYOUT=tiles QGEMV_CUDA_TIMELINE=$D/$name.bin timeout 120 \
      qgemv bench --backend cuda --shape "$shape" --format "$fmt" --dtype "$dt" --m 1 --graph --no-baseline \
      --min-time 0.05 --working-set 512M "${opt[@]}" > "$D/$name.txt" 2>&1
    echo "== $name (rc $?)"; grep '^-' "$D/$name.txt"
    python3 "$here/timeline.py" "$D/$name.bin" 2>&1 | tee "$D/$name.tl" | tail -n 2
    rm -f "$D/$name.bin"
  done
done
rm -rf "$D/mod"
tar -C /tmp -cJf "${OUT:-/tmp}/norm-tl.tar.xz" norm-tl
