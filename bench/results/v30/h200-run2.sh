#!/bin/bash
# v30 run 2. (1) Issue 12 on the 16-core host, first while the host is
# quiet (run 1's host A/B ran after the GPU work at load averages 5-11 and
# probes of 56-140 GB/s: not readable): Q2_0 f32 x (the x that has further
# terms) with three libraries in rotating order, old = 0ae572f (before
# v29), v29 = b8c3a11 (one-digit further terms computed as three planes on
# avx512vnni, the threaded quantizer), new = this pack (v30: one plane,
# and a block's one further term in term 0's pass). Predicted: new/v29
# 0.9-0.95 at 8192 x 28672 m = 1 (a Gaussian row of 28672 has a further
# term in about a third of its blocks: 2/3 of their products gone), less
# at 28672 x 8192 (k = 8192: one block in nine). (2) ncu of the TEX5 and
# TEX1 modules (run 1's "ncu of TEX5" profiled the pack's module: env.sh
# reset QGEMV_PLUGIN_PATH inside gpu-pack-run.sh, fixed in v30): is the
# texture path held by the same L1TEX pipe (tex throttle) or by latency?
# Here: /tmp/bv29 = CPU-only build of b8c3a11, /tmp/bold of 0ae572f; then
#   xz -c /tmp/bold/.libs/libqgemv.so.0.0.0 > /tmp/libqgemv-old.so.xz
#   xz -c /tmp/bv29/.libs/libqgemv.so.0.0.0 > /tmp/libqgemv-v29.so.xz
#   bash ../shared/gpu/pack.sh /tmp/b90 bench/run-common.sh bench/gpu-pack-run.sh bench/ncu-insn.py \
#     bench/results/v30/h200-run2.sh /tmp/mods/qgemv-cuda-TEX{1,5}.so.xz /tmp/libqgemv-{old,v29}.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run2; source "$here/run-common.sh"
for s in old v29; do mkdir -p /tmp/lib-$s && xz -dc "$here/libqgemv-$s.so.xz" > /tmp/lib-$s/libqgemv.so.0; done
uptime > "$O/uptime-start.txt"
args=(--backend cpu --shape 28672x8192 --shape 8192x28672 --format q2_0,q2_0g64 --dtype f32 --m 1,8
      --min-time 0.2 --working-set 2400M --no-baseline)
for pass in "16 1 old v29 new" "16 2 v29 new old" "16 3 new old v29" "4 1 old v29 new"; do
  set -- $pass; th=$1 r=$2; shift 2
  for side in "$@"; do
    ((SECONDS - t0 > 190)) && break 2
    case $side in new) lib= ;; *) lib=/tmp/lib-$side ;; esac
    LD_LIBRARY_PATH=${lib:+$lib:}${LD_LIBRARY_PATH:-} QGEMV_NUM_THREADS=$th timeout 60 \
      qgemv bench "${args[@]}" > "$O/q2-$side-t$th-r$r.txt" 2>&1
    step "q2-$side-t$th-r$r"; grep -E "^(-|streaming)" "$O/q2-$side-t$th-r$r.txt" | head -12
  done
done
for m in TEX5 TEX1; do
  mkdir -p /tmp/m-$m; xz -dc "$here/qgemv-cuda-$m.so.xz" > /tmp/m-$m/qgemv-cuda.so
  QGEMV_PLUGIN_PATH=/tmp/m-$m PROFILE_CASES="nf4 bf16 28672x8192" OUT=$O/ncu-$m timeout 120 \
    bash "$here/gpu-pack-run.sh" profile > "$O/ncu-$m-log.txt" 2>&1
  step "ncu-$m"; grep -E "Registers Per|Duration|Issue Slots|L1/TEX Cache|Eligible Warps|warp instructions" "$O"/ncu-$m/ncu-*.txt | head -8
  grep -E "^ *(Stall|Warp Cycles|.*[Tt]hrottle)" "$O"/ncu-$m/ncu-*.txt | head -12
done
