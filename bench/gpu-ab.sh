#!/bin/bash
# Modules against each other on the GPU machine: qgemv bench with one or
# more other modules (A, A2, ...: a qgemv-cuda.so or .so.xz packed into
# .gpu/pack/bin) and the pack's own module (B), in alternating passes
# (A A2 ... B, A A2 ... B), then a table of each module's time over A's
# per row. Here:
#   bash ../shared/gpu/pack.sh BUILD bench/gpu-ab.sh OLD/qgemv-cuda.so.xz
# there (after source .gpu/pack/env.sh):
#   bash .gpu/pack/bin/gpu-ab.sh qgemv-cuda.so.xz [MORE.so.xz ...] [qgemv bench options]
# The modules are the arguments before the first one that starts with '-'.
# MODULE@PLAN runs that module under QGEMV_CUDA_PLAN=PLAN, and @PLAN the
# pack's module so (e.g. @t=2: the same code with another plan, in the
# same alternating passes); the other sides take QGEMV_CUDA_PLAN from the
# environment, as before.
# Default options: the issue-13 shapes, every format, bf16 and f32, m = 1,
# 8, 16. With --rmsnorm and friends, pass the whole set. Output: the table
# on stdout and $OUT/ab.tar.xz (the CSVs and the table; the device tool
# returns at most 8 files a call). AB_PASSES (default 2); AB_DEADLINE
# (seconds: no pass starts after it; default none); AB_BACKEND
# (default cuda; cpu only to try the script where there is no GPU).
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 1 ] || { echo "usage: gpu-ab.sh OLD_MODULE [MORE_MODULES] [qgemv bench options]" >&2; exit 2; }
out=${OUT:-/tmp/gpu-out}
work=$(mktemp -d /tmp/gpu-ab.XXXXXX)
mkdir -p "$out" "$work/csv"
sides=()
declare -A plan_of=() path_of=()
B=${QGEMV_PLUGIN_PATH:-}
while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do
  mod=$1 plan=${QGEMV_CUDA_PLAN:-}; shift
  case $mod in *@*) plan=${mod#*@} mod=${mod%%@*} ;; esac
  side=a${#sides[@]}
  if [ -z "$mod" ]; then
    path_of[$side]=$B
  else
    [ -f "$mod" ] || mod=$here/$mod
    [ -f "$mod" ] || { echo "gpu-ab.sh: no module '$mod'" >&2; exit 2; }
    mkdir -p "$work/$side"
    case $mod in
      *.xz) xz -dc "$mod" > "$work/$side/qgemv-cuda.so" ;;
      *) cp "$mod" "$work/$side/qgemv-cuda.so" ;;
    esac
    path_of[$side]=$work/$side
  fi
  plan_of[$side]=$plan
  name="the pack's module"; [ -z "$mod" ] || name=$(basename "$mod")
  echo "$side: $name${plan:+ with QGEMV_CUDA_PLAN=$plan}" | tee -a "$work/csv/modules.txt" >&2
  sides+=("$side")
done
[ ${#sides[@]} -gt 0 ] || { echo "gpu-ab.sh: no module before the options" >&2; exit 2; }
echo "b: the pack's module" >> "$work/csv/modules.txt"
sides+=(b)
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336
  --shape 4096x4096 --format all --dtype bf16,f32 --m 1,8,16)
path_of[b]=$B plan_of[b]=${QGEMV_CUDA_PLAN:-}
rc=0
done_passes=0
for pass in $(seq "${AB_PASSES:-2}"); do
  # AB_DEADLINE: no pass starts after that many seconds (the table then
  # takes the passes that ran; a script's timeout would lose them all)
  if [ "${AB_DEADLINE:-0}" -gt 0 ] && [ "$SECONDS" -gt "${AB_DEADLINE}" ]; then
    echo "gpu-ab.sh: AB_DEADLINE reached, $done_passes passes" >&2
    break
  fi
  for side in "${sides[@]}"; do
    QGEMV_PLUGIN_PATH=${path_of[$side]} QGEMV_CUDA_PLAN=${plan_of[$side]} timeout 200 qgemv bench --backend "${AB_BACKEND:-cuda}" --min-time 0.05 --no-baseline --working-set 512M \
      --quiet "${opts[@]}" --csv "$work/csv/$side-$pass.csv" > /dev/null 2>&1
    st=$?
    [ "$st" -eq 0 ] || rc=1
    echo "pass $pass $side: rc $st ($SECONDS s)" >&2
  done
  done_passes=$pass
done
[ "$done_passes" -gt 0 ] || { echo "gpu-ab.sh: no pass ran" >&2; exit 1; }
python3 - "$work/csv" "$done_passes" "${sides[@]}" <<'PY' | tee "$work/csv/table.txt"
import csv, sys
d, n, sides = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(f):
    try:
        return {(r["n"], r["k"], r["format"], r["dtype"], r["m"], r.get("rmsnorm", "")): float(r["median_s"]) * 1e6
                for r in csv.DictReader(open(f)) if r["median_s"]}
    except (OSError, KeyError, ValueError) as e:
        print("%s: %s" % (f, e)); return {}
runs = {s: [load("%s/%s-%d.csv" % (d, s, p)) for p in range(1, n + 1)] for s in sides}
print(open("%s/modules.txt" % d).read().strip())
print("n k format dtype m norm: " + "  ".join("%s us (passes)" % s for s in sides) + "  " +
      "  ".join("%s/%s" % (s, sides[0]) for s in sides[1:]))
for key in runs[sides[0]][0]:
    if all(key in r for s in sides for r in runs[s]):
        t = {s: [r[key] for r in runs[s]] for s in sides}
        ratios = [sum(t[s]) / sum(t[sides[0]]) for s in sides[1:]]
        print("%s %s %s %s m=%s %s: " % key + "  ".join("/".join("%.1f" % v for v in t[s]) for s in sides) + "  " +
              "  ".join("%.3f" % r for r in ratios) + ("" if all(abs(r - 1) < 0.02 for r in ratios) else "  <--"))
PY
tar -C "$work" -cJf "$out/ab.tar.xz" csv
rm -rf "$work"
exit $rc
