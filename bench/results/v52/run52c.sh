#!/bin/bash
# v52, call 5 (bench/NOTES.md v52): the staging's loads first
# (lf.so.xz, QGC_EXP_LF: every load of x and gamma a thread makes in the
# staging issued before any is converted; kDG's gamma words beside x's).
# Call 1's timeline had x's values in registers 0.6-0.9 us later with the
# norm than without. Against b, the pack's module (the library), on the
# tiles, m = 1, graphs, with the norm at the middle and small shapes, and
# plain where f32 x takes the same code. outhash (bench/outhash.c) with
# each module first: the same bits. Packed beside gpu-ab.sh,
# run-common.sh, lf.so.xz, outhash. There, after `source
# .gpu/pack/env.sh`, OUT set:
#   LEFT=300 timeout 320 bash .gpu/pack/bin/run52c.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${RUN:-r52c}; source "$here/run-common.sh"
mkdir -p /tmp/lf && xz -dc "$here/lf.so.xz" > /tmp/lf/qgemv-cuda.so
timeout 60 "$here/outhash" cuda > "$O/outhash-lib.txt" 2>&1
QGEMV_PLUGIN_PATH=/tmp/lf timeout 60 "$here/outhash" cuda > "$O/outhash-lf.txt" 2>&1
step "outhash"; wc -l < "$O/outhash-lib.txt"; cmp "$O/outhash-lib.txt" "$O/outhash-lf.txt" && echo "outhash: the same bits"
QGEMV_PLUGIN_PATH=/tmp/lf timeout 20 qgemv verify --backend cuda >"$O/verify-lf.txt" 2>&1
step "verify (lf)"; tail -n 1 "$O/verify-lf.txt"
QGEMV_CUDA_LAYOUT=tiles AB_PASSES=2 AB_DEADLINE=$(($(left) - 90)) timeout $(($(left) - 70)) bash "$here/gpu-ab.sh" lf.so.xz \
  --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --format nf4,q2_0g64 --dtype bf16,f32 --m 1 --graph \
  --rmsnorm >"$O/ab-lf-norm.txt" 2>"$O/ab-lf-norm.err"
step "A/B tiles, norm: a0 lf, b the library"
cat "$O/ab-lf-norm.txt"; mv "$OUT/ab.tar.xz" "$O/ab-lf-norm.tar.xz" 2>/dev/null
AB_PASSES=2 AB_DEADLINE=$(($(left) - 30)) timeout $(($(left) - 10)) bash "$here/gpu-ab.sh" lf.so.xz \
  --shape 14336x4096 --shape 4096x4096 --format q2_0g64 --dtype f32 --m 1 --graph >"$O/ab-lf.txt" 2>"$O/ab-lf.err"
step "A/B plain f32: a0 lf, b the library"
cat "$O/ab-lf.txt"; mv "$OUT/ab.tar.xz" "$O/ab-lf.tar.xz" 2>/dev/null
