#!/bin/bash
# The CPU backend against ggml on one machine, at several thread counts:
# issue 12's comparison for the GPU machine's 16-core host (run there from
# a pack, bench/NOTES-cpu.md). qgemv: `qgemv bench --backend cpu` with
# QGEMV_NUM_THREADS=T, every format, f32 x (ggml's x is f32), m = 1 and 8.
# ggml: bench/cpu-lab/ggml-drv.c built against a ggml tree (GGML_DRV, the
# binary) for IQ4_NL and Q4_0 in the CPU_REPACK buffer (4.5 bits, NF4's
# peers), Q4_0 in the AMX buffer where the CPU has AMX, TQ2_0 (2.06 bits,
# Q2_0's peer); every thread count on the same weight copies.
#   GGML_DRV=PATH OUT=DIR bash bench/cpu-vs-ggml.sh [THREADS] [SHAPE]
# THREADS: a comma list (default 16,8,4,2,1; qgemv runs them in that order,
# the first with the others' ggml cases first), SHAPE NxK (default
# 28672x8192). Working sets: WS_MB (default 2400, 8x a 300 MB L3); the AMX
# case also at 1100 MB (AMX_SMALL_WS=0: not), the question of issue 12
# whether ggml's AMX figure came partly from the L3. Nothing starts after
# DEADLINE seconds (default 480). Writes DIR/qgemv-tT.json and .txt,
# DIR/ggml.txt.
set -u -o pipefail
threads=${1:-16,8,4,2,1}
shape=${2:-28672x8192}
out=${OUT:-/tmp/cpu-vs-ggml}
ws=${WS_MB:-2400}
deadline=${DEADLINE:-480}
start=$SECONDS
mkdir -p "$out"
n=${shape%x*} k=${shape#*x}
late() { ((SECONDS - start > deadline)) && { echo "cpu-vs-ggml: deadline reached, skipping $1"; return 0; }; return 1; }

qg() { # T
  late "qgemv T=$1" && return
  QGEMV_NUM_THREADS=$1 QGEMV_BENCH_COMMIT=${QGEMV_BENCH_COMMIT:-} timeout 240 qgemv bench --backend cpu --shape "$shape" \
    --format all --dtype f32 --m 1,8 --min-time 0.2 --working-set "${ws}M" --no-baseline \
    --json "$out/qgemv-t$1.json" > "$out/qgemv-t$1.txt" 2>&1
  echo "qgemv T=$1 rc=$? ($((SECONDS - start)) s)"
  grep -E "^(-|streaming)" "$out/qgemv-t$1.txt"
}
gg() { # TYPE REPACK WS_MB [THREADS]
  late "ggml $1 repack $2" && return
  [ -x "${GGML_DRV:-}" ] || { echo "cpu-vs-ggml: GGML_DRV not set: no ggml cases"; return; }
  timeout 200 "$GGML_DRV" "$1" "$n" "$k" 1,8 "${4:-$threads}" "$2" "$3" 1 >> "$out/ggml.txt" 2>> "$out/ggml-log.txt"
  echo "ggml $1 repack $2 ws $3 rc=$? ($((SECONDS - start)) s)"
}

first=${threads%%,*}
qg "$first"
gg iq4_nl 1 "$ws"
gg q4_0 1 "$ws"
if grep -qw amx_int8 /proc/cpuinfo; then
  gg q4_0 2 "$ws"
  [ "${AMX_SMALL_WS:-1}" = 1 ] && gg q4_0 2 1100 "$first"
fi
gg tq2_0 0 "$ws"
cat "$out/ggml.txt" 2>/dev/null
IFS=, read -r -a rest <<< "${threads#"$first"}"
for t in "${rest[@]}"; do [ -n "$t" ] && qg "$t"; done
echo "cpu-vs-ggml: done ($((SECONDS - start)) s)"
