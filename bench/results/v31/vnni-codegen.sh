#!/bin/bash
# v31: avx512vnni's code before (da869dd) and after q2_vnni_sums.h: the
# instructions and vpdpbusd of qg_q2_vnni_rows_g64 (GCC 12, -g -O2, as the
# build compiles it). From the repository root: BUILD=<configured build> bash bench/results/v31/vnni-codegen.sh
set -eu
git show da869dd:src/backend-cpu/q2_vnni.c > src/backend-cpu/q2_vnni_da869dd.c
for f in src/backend-cpu/q2_vnni_da869dd.c src/backend-cpu/q2_vnni.c; do
  gcc -g -O2 -std=gnu11 -Isrc -Isrc/core -Iinclude -I"$BUILD" -Isrc/backend-cpu -DHAVE_CONFIG_H -fPIC -c "$f" -o /tmp/vc.o
  objdump -d --no-show-raw-insn /tmp/vc.o | awk '$2=="<qg_q2_vnni_rows_g64>:"{p=1;next} /^$/{p=0} p' > /tmp/vc.s
  echo "$f: $(wc -l < /tmp/vc.s) instructions, $(grep -c vpdpbusd /tmp/vc.s) vpdpbusd"
done
rm -f src/backend-cpu/q2_vnni_da869dd.c
