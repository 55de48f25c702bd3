#!/bin/bash
# v30 run 3 (issue 12): run 1's 4-thread round had new (71d93aa) 1.02-1.33x
# slower than 0ae572f, bf16 x too (which has no further terms): the
# threaded quantizer's barriers, or noise? Q2_0 at 28672 x 8192, f32 and
# bf16 x, m = 1 and 8, 4 threads, the three libraries of run 2 in rotating
# order until 120 s. Pack as run 2 (this script instead of h200-run2.sh).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=run3; source "$here/run-common.sh"
for s in old v29; do mkdir -p /tmp/lib-$s && xz -dc "$here/libqgemv-$s.so.xz" > /tmp/lib-$s/libqgemv.so.0; done
uptime > "$O/uptime-start.txt"
args=(--backend cpu --shape 28672x8192 --format q2_0,q2_0g64 --dtype f32,bf16 --m 1,8
      --min-time 0.2 --working-set 2400M --no-baseline)
r=0
for side in old v29 new new v29 old old new v29; do
  ((SECONDS - t0 > 120)) && break
  r=$((r + 1))
  case $side in new) lib= ;; *) lib=/tmp/lib-$side ;; esac
  LD_LIBRARY_PATH=${lib:+$lib:}${LD_LIBRARY_PATH:-} QGEMV_NUM_THREADS=4 timeout 60 \
    qgemv bench "${args[@]}" > "$O/q2-$side-t4-n$r.txt" 2>&1
  step "q2-$side-t4-n$r"; grep -E "^(-|streaming)" "$O/q2-$side-t4-n$r.txt" | head -10
done
