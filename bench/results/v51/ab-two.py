#!/usr/bin/env python3
"""The table of two sides of a gpu-ab.sh run from its CSVs, for a run whose
third side failed (call 5 of v51: the pack's module was still compressed,
so gpu-ab.sh printed no table). Medians in us per pass and B's time over
A's, as gpu-ab.sh prints them.

  ab-two.py DIR A B     (e.g. ab-two.py call5/csv a0 a1)"""
import csv
import glob
import sys


def load(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r.get("median_s"):
            out[(r["n"], r["k"], r["format"], r["dtype"], r["m"], r["rmsnorm"])] = float(r["median_s"]) * 1e6
    return out


d, a, b = sys.argv[1:4]
sa = [load(f) for f in sorted(glob.glob("%s/%s-*.csv" % (d, a)))]
sb = [load(f) for f in sorted(glob.glob("%s/%s-*.csv" % (d, b)))]
print("n k format dtype m norm: %s us (passes)  %s us (passes)  %s/%s" % (a, b, b, a))
for key in sa[0]:
    x = [p.get(key) for p in sa]
    y = [p.get(key) for p in sb]
    if None in x + y:
        continue
    print("%s %s %s %s m=%s %s: %s  %s  %.3f" % (key + ("/".join("%.1f" % v for v in x), "/".join("%.1f" % v for v in y),
                                                   sum(y) / sum(x))))
