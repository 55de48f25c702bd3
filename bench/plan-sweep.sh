#!/bin/bash
# Sweeps the CUDA plan's geometry with the backend's own kernels: `qgemv
# bench` once per QGEMV_CUDA_PLAN override (src/backend-cuda/plan_tune.h) and
# group of rows, then one table of the plan's own time against the best
# override per row. For tuning matvec_plan.h on a device (the H200, GB10).
#   bash bench/plan-sweep.sh [GROUP...]      (default: every group)
# Groups: long (8192x28672), small (4096x14336, 4096x4096, 14336x4096),
# wide (28672x8192), batched (m = 8 and 16; KS stays the plan's); not in
# the default: batched_long (bf16 x, m = 8 and 16 at 8192x28672),
# batched_ks4 (bf16 x, m = 8 and 16 at the shapes of k-split 4 on the
# H200: the plan's B per CTA in phases against B per warp), ks (the
# k-split at every m, f32 and bf16 x, at the shapes of k-split 4 and 8 on
# the H200: a shape's k-split is the same for every m, so it is chosen for
# m = 1 and batched together), batched_ks8 (bf16 x, m = 8 and 16 at the
# shapes of k-split 8: B per CTA in phases against the plan's B per warp),
# waves (f32 and bf16 x, m = 8 and 16 at 28672x8192, k-split 2, and
# 8192x28672, k-split 4 on the H200: fewer warps per CTA, so more units
# for the persistent grid to spread over the SMs), int
# (Q2_0 bf16 x, every shape, m = 1, 8, 16: the direct bf16 mma against the
# integer mma, x=int), wide28 (bf16 x, m = 1 and 8 at 28672x8192 and
# 14336x4096: the wide kernel, w=28, against the plan), ng2t2 (NF4, f32
# x m = 8, 16 and bf16 x m = 16, at the shapes other than 28672x8192: two
# tiles per warp in two column groups, t=2, at 16, 14 and 4 warps), tiny
# (1024x4096 and 4096x4096, f32 and bf16 x, m = 1: k-splits, B per warp
# and warps per CTA; with SWEEP_BENCH_ARGS=--graph, the kernels' own time,
# where on a stream the host's launch hides it). SWEEP_BENCH_ARGS: more
# qgemv bench options for every run (e.g. --graph), long_t2 (8192x28672
# and 4096x14336, m = 1: two tiles per warp, which the plan gives only
# where the tiles are many, at the plan's k-split in 8 warps and at
# k-splits of 8 and 16 in 16), mid (14336x4096, every format, f32 and
# bf16 x, m = 1, 8, 16: the k-split of 2 in CTAs of 14 warps of one tile,
# 128 of them where the plan's k-split of 4 makes 112), models (11008x4096,
# 4096x11008, 18944x3584, 3584x18944: NF4 and Q2_0 g128, m = 1 and 8,
# k-splits and tiles per warp), wavefit (the shapes of qgc_wave_fit and
# 14336x5120: 8 to 16 warps per CTA, k-splits 1 and 2), q2wave (Q2_0 g128
# at five shapes of v25's wider wave search: one tile per warp in 9 to 16
# warps at k-splits 1 and 2, where bf16 x at m = 1 lost), nf4f32ks2 (NF4
# f32 x, m = 8 and 16, at four shapes of qgc_wave_fit's k-split of 2: the
# warps and tiles per warp of a batched call at that k-split, and the
# slots' k-split of 4 for comparison), t2few (NF4 and Q2_0 g128, bf16 x,
# m = 1, at six shapes where the plan takes two tiles per warp at a
# k-split of 2 in 12-14 warps: 6 to 12 warps, v27 run 1 saw 8 warps in
# two rounds beat 14 in one at 25600x5120). Needs
# qgemv on PATH and the CUDA module found (source .gpu/pack/env.sh).
# Writes $OUT (default /tmp/plan-sweep): one CSV per bench run, plans.txt
# (run -> override) and summary.txt. No run starts after SWEEP_DEADLINE
# seconds (default 300).
set -u -o pipefail
out=${OUT:-/tmp/plan-sweep}
mkdir -p "$out/csv"
deadline=${SWEEP_DEADLINE:-300}
start=$SECONDS
bench=(qgemv bench --backend "${SWEEP_BACKEND:-cuda}" --min-time 0.05 --working-set 512M --no-baseline --quiet)
# shellcheck disable=SC2206
bench+=(${SWEEP_BENCH_ARGS:-})
run=0

# sweep NAME "BENCH ARGS" PLAN...  ("" is the plan's own choice)
sweep() {
  local name=$1 args=$2 plan
  shift 2
  for plan in "$@"; do
    if ((SECONDS - start > deadline)); then
      echo "plan-sweep: deadline reached, skipping $name '$plan'"
      continue
    fi
    run=$((run + 1))
    printf '%s\t%s\t%s\n' "$run" "$name" "${plan:-plan}" >> "$out/plans.txt"
    # shellcheck disable=SC2086
    QGEMV_CUDA_PLAN=$plan timeout 120 "${bench[@]}" $args --csv "$out/csv/$run.csv" > /dev/null 2>> "$out/stderr.txt" ||
      echo "plan-sweep: run $run ($name '$plan') exited $?"
  done
}

group_long() {
  sweep long "--shape 8192x28672 --format all --dtype f32,bf16 --m 1" \
    "" "ks=8" "ks=16" "ks=8,b=warp" "ks=16,b=warp" "ks=8,b=warp,t=1" "ks=8,b=cta,phases=2" \
    "ks=16,b=cta,phases=2" "ks=4,b=warp" "ks=8,t=1"
}
group_small() {
  sweep small "--shape 4096x14336 --shape 4096x4096 --shape 14336x4096 --format all --dtype f32,bf16 --m 1" \
    "" "ks=4" "ks=8" "ks=16" "ks=8,b=warp" "ks=16,b=warp" "ks=8,t=1" "ks=16,t=1" "ks=8,b=warp,t=1" \
    "ks=16,b=warp,t=1" "ks=16,w=16,t=1,b=cta"
}
group_wide() {
  sweep wide "--shape 28672x8192 --format all --dtype f32,bf16 --m 1" \
    "" "ks=2" "ks=4" "ks=8" "ks=16" "b=warp" "t=1"
}
group_batched() {
  sweep batched "--shape 28672x8192 --shape 4096x14336 --format nf4,q2_0 --dtype f32,bf16 --m 8,16" \
    "" "b=warp" "b=warp,t=1" "b=cta" "b=cta,t=1" "b=cta,phases=2" "b=cta,phases=4" "t=1" "w=8"
}

group_batched_long() {
  sweep batched_long "--shape 8192x28672 --format nf4,q2_0 --dtype bf16 --m 8,16" \
    "" "b=cta" "b=cta,phases=2" "b=cta,phases=4" "b=cta,phases=8" "w=8" "b=cta,w=8"
}

group_ks() {
  sweep ks "--shape 4096x14336 --shape 4096x4096 --shape 8192x28672 --shape 14336x4096 --format all --dtype f32,bf16 --m 1,8,16" \
    "" "ks=2" "ks=4" "ks=8" "ks=16"
}

group_batched_ks8() {
  sweep batched_ks8 "--shape 4096x14336 --shape 4096x4096 --format all --dtype bf16 --m 8,16" \
    "" "b=cta" "b=cta,phases=2" "b=cta,phases=4" "t=2" "b=warp,t=2" "w=8"
}

group_batched_ks4() {
  sweep batched_ks4 "--shape 14336x4096 --shape 8192x28672 --format all --dtype bf16 --m 8,16" \
    "" "b=warp" "b=warp,t=1"
}

# The wide kernel (28 warps of one tile, B per CTA; bench/NOTES.md v10)
# for one column group of bf16 x: Q2_0 and NF4 at m = 8 (where Q2_0 g64
# is 1.56x its m = 1) and the shapes the plan does not give it at m = 1.
group_wide28() {
  sweep wide28 "--shape 28672x8192 --shape 14336x4096 --format all --dtype bf16 --m 1,8" \
    "" "w=28,t=1" "w=28,t=1,phases=2" "w=28,t=1,phases=4"
}

# The plan's 16 warps make 224 units at 28672 x 8192 batched (1.7 waves
# of units on 132 SMs); 14 warps make 256 (1.94), 12 make 299 (2.27).
group_waves() {
  sweep waves "--shape 28672x8192 --format all --dtype f32,bf16 --m 8,16" "" "w=14" "w=12" "w=10"
  sweep waves "--shape 8192x28672 --format all --dtype f32,bf16 --m 8,16" "" "w=12" "w=8"
}

# NF4's two column groups at two tiles per warp (the kernel of 14 warps,
# which the plan takes at k-split 2 only, QGC_EXP_NG2T2) at the other
# shapes: 16 warps (taken down to 8), 14 (12 at KS 4, 8 at KS 8) and 4.
group_ng2t2() {
  sweep ng2t2 "--shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --format nf4 --dtype f32 --m 8,16" \
    "" "t=2,b=cta" "t=2,b=cta,w=14" "t=2,b=cta,w=4"
  sweep ng2t2 "--shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --format nf4 --dtype bf16 --m 16" \
    "" "t=2,b=cta" "t=2,b=cta,w=14" "t=2,b=cta,w=4"
}

group_tiny() {
  sweep tiny "--shape 1024x4096 --shape 4096x4096 --format all --dtype f32,bf16 --m 1" \
    "" "ks=4" "ks=8" "ks=16" "ks=8,b=warp" "ks=16,b=warp" "ks=4,w=4" "ks=8,w=16" "ks=16,w=16" "ks=8,t=1,w=8"
}

group_long_t2() {
  sweep long_t2 "--shape 8192x28672 --shape 4096x14336 --format all --dtype f32,bf16 --m 1" \
    "" "t=2" "t=2,w=8" "ks=8,t=2" "ks=8,t=2,w=16" "ks=16,t=2,w=16"
}

# 14336 x 4096 (896 tiles) at its k-split of 4 makes 112 CTAs of 8 tiles
# for 132 SMs, where the other shapes make 128; at a k-split of 2, one
# tile per warp in 14 warps makes 128 CTAs of 7 (the k-split changes the
# bits, so it is chosen for every m together).
group_mid() {
  sweep mid "--shape 14336x4096 --format all --dtype f32,bf16 --m 1,8,16" \
    "" "ks=2,t=1" "ks=2,t=1,w=14" "ks=2,w=14" "ks=2"
}

# Shapes of other models (Llama-2-7B's MLP 11008 x 4096 and 4096 x 11008,
# Qwen2.5-7B's 18944 x 3584 and 3584 x 18944), whose plans make a part of
# a wave or just over one (11008 x 4096: 172 units for 132 SMs, 18944 x
# 3584: 148): k-splits, tiles per warp and warps that make one wave of 115-
# 132 CTAs (w=12, w=9, w=10) or 2.6 of 8 warps, m = 1 and 8.
group_models() {
  sweep models "--shape 11008x4096 --shape 4096x11008 --shape 18944x3584 --shape 3584x18944 --format nf4,q2_0 --dtype f32,bf16 --m 1,8" \
    "" "ks=2,t=1" "ks=4,t=2" "ks=4,w=12" "ks=2,t=1,w=12" "ks=8,t=1,w=8" "ks=1,t=1,w=9" "ks=2,t=2,w=10"
}

# The warp counts around qgc_wave_fit's 16/14/12 (bench/NOTES.md v24,
# item 2): at 18944 x 3584, k-split 2 in 10 warps and 1 in 9 beat its 12;
# every count from 8 to 16 at the shapes that make 1-2 waves of CTAs on
# the H200 (the plan is the wave rule's choice), m = 1 and 8.
group_wavefit() {
  sweep wavefit "--shape 11008x4096 --shape 18944x3584 --shape 22016x4096 --shape 37888x3584 --shape 14336x5120 --format nf4,q2_0 --dtype f32,bf16 --m 1,8" \
    "" "w=8" "w=10" "w=12" "w=14" "w=16" "ks=2,w=10" "ks=2,w=12" "ks=1,w=9" "ks=1,t=1,w=9" "ks=2,t=1,w=12"
}

group_q2wave() {
  sweep q2wave "--shape 9216x4096 --shape 10240x5120 --shape 20480x5120 --shape 18944x3584 --shape 22016x4096 --format q2_0 --dtype bf16,f32 --m 1,8" \
    "" "ks=2,t=1,w=10" "ks=2,t=1,w=12" "ks=2,t=1,w=14" "ks=2,t=1,w=16" "ks=1,t=1,w=9" "ks=1,t=1,w=10" "ks=1,t=1,w=12" \
    "ks=2,w=10" "ks=2,w=12" "ks=4,t=1,w=12"
}
group_nf4f32ks2() {
  sweep nf4f32ks2 "--shape 18944x3584 --shape 20480x5120 --shape 22016x4096 --shape 24576x4096 --format nf4 --dtype f32 --m 8,16" \
    "" "ks=2,t=1,w=8" "ks=2,t=1,w=10" "ks=2,t=1,w=12" "ks=2,t=1,w=14" "ks=2,t=1,w=16" "ks=2,w=8" "ks=2,w=12" "ks=4"
}
group_t2few() {
  sweep t2few "--shape 25600x5120 --shape 20480x5120 --shape 13824x5120 --shape 22016x4096 --shape 24576x4096 --shape 28672x8192 --format nf4,q2_0 --dtype bf16 --m 1" \
    "" "ks=2,t=2,w=6" "ks=2,t=2,w=8" "ks=2,t=2,w=10" "ks=2,t=2,w=12"
}
group_int() {
  sweep int "--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336 --shape 4096x4096 --format q2_0,q2_0g64 --dtype bf16 --m 1,8,16" \
    "" "x=int" "x=int,t=1" "x=int,phases=2"
}

groups=("$@")
((${#groups[@]})) || groups=(long small wide batched)
: > "$out/plans.txt"
for g in "${groups[@]}"; do
  declare -F "group_$g" > /dev/null || { echo "plan-sweep: unknown group '$g'" >&2; exit 2; }
  "group_$g"
done

# One line per (run, row): the plan, the row, median us; then per row the
# plan's own time and the best override.
files=()
for ((i = 1; i <= run; i++)); do [ -s "$out/csv/$i.csv" ] && files+=("$out/csv/$i.csv"); done
awk -F'\t' 'FNR == NR { plan[$1] = $3; next }
  FNR == 1 { r = FILENAME; sub(/.*\//, "", r); sub(/\.csv$/, "", r); next }
  {
    n = split($0, f, ","); gsub(/"/, "", f[5]); gsub(/"/, "", f[6])
    err = ""; for (j = 24; j <= n; j++) err = err (j > 24 ? "," : "") f[j]; gsub(/"/, "", err)
    printf "%-34s %-28s %s\n", f[3] "x" f[4] " " f[5] " " f[6] " m=" f[7], plan[r],
      f[9] == "" ? "error: " err : sprintf("%.2f", f[9] * 1e6)
  }' "$out/plans.txt" "${files[@]}" > "$out/all.txt"
awk '$0 ~ /error:/ { next }
  { key = $1 " " $2 " " $3 " " $4; t = $6 + 0 }
  $5 == "plan" { own[key] = t }
  !(key in best) || t < best[key] { best[key] = t; bp[key] = $5 }
  !(key in seen) { seen[key] = 1; order[++n] = key }
  END {
    printf "%-34s %9s %9s  %s\n", "row", "plan us", "best us", "best override"
    for (i = 1; i <= n; i++) { k = order[i]
      printf "%-34s %9.2f %9.2f  %s%s\n", k, own[k], best[k], bp[k], (own[k] > 0 ? sprintf(" (plan %.2fx)", own[k] / best[k]) : "") }
  }' "$out/all.txt" | tee "$out/summary.txt"
