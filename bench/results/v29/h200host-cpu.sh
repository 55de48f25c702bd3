#!/bin/bash
# v29 (issue 12), NOT RUN (no device machine was lent in v29): v29's CPU
# changes (ed64158 and the quantizer's fast serial phase after it) on the
# 16-core host of the GPU machine (AVX-512 VNNI: the avx512vnni level,
# q2_vnni.c). There the one-digit further terms are
# computed as three planes (two zero), so what should show is the
# quantizer: a row of 28672 took about 137 us serial on the development
# VM before (xfix-cost), about a tenth of a 8192 x 28672 Q2_0 m = 1 call
# at 16 threads (v21: 1.4 ms); now its term 0 is spread over the threads
# and the rest takes about 12 us. Predicted: f32 x
# 8192 x 28672 m = 1 0.9x at 16 threads, 0.95-1.0x at 4; m = 8 0.85-0.95x
# (eight rows' quantizer, was serial); bf16 x about 1.0x (term 0 spread,
# nothing else). About 3 minutes.
# Here: the pack of the session's build (pack.sh BUILD ... this script)
# plus the library of 0ae572f (CPU only is enough) as an extra:
#   git worktree add /tmp/w-old 0ae572f && (cd /tmp/w-old && ./autogen.sh) && mkdir /tmp/bold && cd /tmp/bold &&
#   /tmp/w-old/configure --without-cuda && make -j2 && xz -c .libs/libqgemv.so.0.0.0 > /tmp/libqgemv-old.so.xz
#   bash ../shared/gpu/pack.sh BUILD bench/run-common.sh bench/results/v29/h200host-cpu.sh /tmp/libqgemv-old.so.xz
# there: source .gpu/pack/env.sh; OUT=$OUT bash .gpu/pack/bin/h200host-cpu.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=host29; source "$here/run-common.sh"
mkdir -p /tmp/oldlib && xz -dc "$here/libqgemv-old.so.xz" > /tmp/oldlib/libqgemv.so.0
lscpu > "$O/lscpu.txt" 2>&1
args=(--backend cpu --shape 28672x8192 --shape 8192x28672 --format q2_0,q2_0g64 --dtype f32,bf16 --m 1,8
      --min-time 0.2 --working-set 2400M --no-baseline)
for pass in "16 1" "16 2" "4 1"; do
  set -- $pass; th=$1 r=$2
  for side in old new; do
    ((SECONDS - t0 > 200)) && break 2
    if [ $side = old ]; then lib=/tmp/oldlib; else lib=; fi
    LD_LIBRARY_PATH=${lib:+$lib:}${LD_LIBRARY_PATH:-} QGEMV_NUM_THREADS=$th timeout 60 \
      qgemv bench "${args[@]}" > "$O/q2-$side-t$th-r$r.txt" 2>&1
    step "q2-$side-t$th-r$r"; grep -E "^(-|streaming)" "$O/q2-$side-t$th-r$r.txt" | head -20
  done
done
