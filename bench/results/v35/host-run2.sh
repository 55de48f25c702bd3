#!/bin/bash
# v35 run 2 (issue 12), on the GPU machine's host CPU: does the weight
# stream's software prefetch hold NF4 (m = 1: 72% of the read at 16
# threads, 64% at 1, against ggml Q4_0 AMX's 91% and 80%, run 1)? One
# library per prefetch distance and level (prefetch.h's QG_PREFETCH_AHEAD,
# QG_PREFETCH_HINT), CPU-only builds of 0500d63 + the hint switch, the same
# qgemv binary: base 4096 T0 (the library's), a8k 8192 T0, a16k 16384 T0,
# t1a4k 4096 T1, t1a16k 16384 T1, t2a32k 32768 T2, none (0: the block
# itself, no prefetch ahead). NF4 and Q2_0 g128, f32 x, m = 1 and 8,
# 28672 x 8192, 1.2 GB rotated (4x the L3), at 16, 4 and 1 threads, base
# first and last at each.
# Here: bash /tmp/pfv/build.sh (in the session's /tmp), then
#   tar -C /tmp/pfv -cJf /tmp/pfv-libs.tar.xz */libqgemv.so.0
#   bash ../shared/gpu/pack.sh /tmp/b90 /tmp/pfv-libs.tar.xz bench/results/v35/host-run2.sh
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/host-run2.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
O=/tmp/run2
mkdir -p "$O" /tmp/pfv
t0=$SECONDS
finish() {
  echo "end ($((SECONDS - t0)) s)"
  tar -C /tmp -cJf "${OUT:-/tmp}/run2.tar.xz" run2
}
trap finish EXIT
tar -C /tmp/pfv -xJf "$here/pfv-libs.tar.xz"
uptime > "$O/uptime.txt"
args=(--backend cpu --shape 28672x8192 --format nf4,q2_0 --dtype f32 --m 1,8
      --min-time 0.1 --working-set 1200M --no-baseline)
for t in 16 4 1; do
  list="base a8k a16k t1a4k t1a16k t2a32k none base"
  [ "$t" = 1 ] && list="base a16k t1a16k t2a32k base"
  for v in $list; do
    ((SECONDS - t0 > ${RUN2_CUTOFF:-480})) && break 2
    f=$O/bench-$v-t$t-$SECONDS.txt
    LD_LIBRARY_PATH=/tmp/pfv/$v:${LD_LIBRARY_PATH:-} QGEMV_NUM_THREADS=$t timeout 90 qgemv bench "${args[@]}" > "$f" 2>&1
    echo "== $v t=$t rc=$? ($((SECONDS - t0)) s)"; grep -E "^-" "$f" | awk '{print $3, $5, $6, $8}' | tr '\n' ';'; echo
    grep -m1 '^streaming' "$f"
  done
done
uptime >> "$O/uptime.txt"
