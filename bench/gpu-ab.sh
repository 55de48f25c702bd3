#!/bin/bash
# A against B on the GPU machine: qgemv bench with an old module (A, a
# qgemv-cuda.so or .so.xz packed into .gpu/pack/bin) and the pack's own
# module (B), in passes A B A B, then a table of B/A per row. Here:
#   bash ../shared/gpu/pack.sh BUILD bench/gpu-ab.sh OLD/qgemv-cuda.so.xz
# there (after source .gpu/pack/env.sh):
#   bash .gpu/pack/bin/gpu-ab.sh qgemv-cuda.so.xz [qgemv bench options]
# Default options: the issue-13 shapes, every format, bf16 and f32, m = 1,
# 8, 16. With --rmsnorm and friends, pass the whole set. Output: the table
# on stdout and $OUT/ab.tar.xz (the CSVs and the table; the device tool
# returns at most 8 files a call). AB_PASSES (default 2); AB_BACKEND
# (default cuda; cpu only to try the script where there is no GPU).
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 1 ] || { echo "usage: gpu-ab.sh OLD_MODULE [qgemv bench options]" >&2; exit 2; }
old=$1; shift
[ -f "$old" ] || old=$here/$old
[ -f "$old" ] || { echo "gpu-ab.sh: no module '$old'" >&2; exit 2; }
out=${OUT:-/tmp/gpu-out}
work=$(mktemp -d /tmp/gpu-ab.XXXXXX)
mkdir -p "$out" "$work/a" "$work/csv"
case $old in
  *.xz) xz -dc "$old" > "$work/a/qgemv-cuda.so" ;;
  *) cp "$old" "$work/a/qgemv-cuda.so" ;;
esac
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--shape 28672x8192 --shape 8192x28672 --shape 14336x4096 --shape 4096x14336
  --shape 4096x4096 --format all --dtype bf16,f32 --m 1,8,16)
B=${QGEMV_PLUGIN_PATH:-}
rc=0
for pass in $(seq "${AB_PASSES:-2}"); do
  for side in a b; do
    pp=$B; [ $side = a ] && pp=$work/a
    QGEMV_PLUGIN_PATH=$pp timeout 200 qgemv bench --backend "${AB_BACKEND:-cuda}" --min-time 0.05 --no-baseline --working-set 512M \
      --quiet "${opts[@]}" --csv "$work/csv/$side-$pass.csv" > /dev/null 2>&1
    st=$?
    [ "$st" -eq 0 ] || rc=1
    echo "pass $pass $side: rc $st ($SECONDS s)" >&2
  done
done
python3 - "$work/csv" "${AB_PASSES:-2}" <<'PY' | tee "$work/csv/table.txt"
import csv, glob, sys
d, n = sys.argv[1], int(sys.argv[2])
def load(f):
    try:
        return {(r["n"], r["k"], r["format"], r["dtype"], r["m"], r.get("rmsnorm", "")): float(r["median_s"]) * 1e6
                for r in csv.DictReader(open(f)) if r["median_s"]}
    except (OSError, KeyError, ValueError) as e:
        print("%s: %s" % (f, e)); return {}
runs = {s: [load("%s/%s-%d.csv" % (d, s, p)) for p in range(1, n + 1)] for s in "ab"}
print("n k format dtype m norm: A us (passes)  B us (passes)  B/A")
for key in runs["a"][0]:
    if all(key in r for s in "ab" for r in runs[s]):
        a = [r[key] for r in runs["a"]]; b = [r[key] for r in runs["b"]]
        ratio = sum(b) / sum(a)
        print("%s %s %s %s m=%s %s: %s  %s  %.3f%s" % (key + ("/".join("%.1f" % v for v in a),
              "/".join("%.1f" % v for v in b), ratio, "" if abs(ratio - 1) < 0.02 else "  <--")))
PY
tar -C "$work" -cJf "$out/ab.tar.xz" csv
rm -rf "$work"
exit $rc
