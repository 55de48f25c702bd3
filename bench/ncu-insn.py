#!/usr/bin/env python3
"""Where a kernel's warps spend their time, per SASS instruction.

Reads the CSV that `ncu -i REPORT.ncu-rep --page source --print-source sass
--csv` writes (a report taken with --set full) and prints: the stall reasons
over the whole kernel, the opcodes by executed instructions and by samples,
the samples per 4 KB of code (prologue, main loop and epilogue show up as
separate regions), and the instructions with the most samples.

  bench/ncu-insn.py SRC.csv [TOP]

bench/NOTES.md v9 found Q2_0's split LOP3 and NF4's table set-up with it.
"""
import collections
import csv
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: ncu-insn.py SRC.csv [TOP]")
    top_n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rows = list(csv.reader(open(sys.argv[1], newline="")))
    try:
        hi = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    except StopIteration:
        sys.exit("%s: no 'Address' header: not an ncu --page source --csv file" % sys.argv[1])
    head = rows[hi]
    col = {n: i for i, n in enumerate(head)}
    data = [r for r in rows[hi + 1:] if len(r) == len(head)]
    if not data:
        sys.exit("%s: no instructions" % sys.argv[1])
    stalls = [n for n in head if n.startswith("stall_") and "Not Issued" not in n]

    def num(r, name):
        try:
            return float(r[col[name]])
        except (KeyError, ValueError):
            return 0.0

    def opcode(r):
        toks = r[col["Source"]].split()
        if not toks:
            return "?"
        return (toks[1] if toks[0].startswith("@") and len(toks) > 1 else toks[0]).split(".")[0]

    samples = lambda r: num(r, "Warp Stall Sampling (All Samples)")
    executed = lambda r: num(r, "Instructions Executed")
    total_s = sum(samples(r) for r in data) or 1.0
    total_e = sum(executed(r) for r in data) or 1.0
    if hi > 0 and rows[0]:
        print(" ".join(rows[0][1:2]))
    print("samples %d, warp instructions executed %d" % (total_s, total_e))
    by_stall = collections.Counter({s: sum(num(r, s) for r in data) for s in stalls})
    print("stall reasons (share of samples):")
    for s, v in by_stall.most_common(12):
        print("  %-24s %5.1f%%" % (s[6:], 100 * v / total_s))
    ex, sa = collections.Counter(), collections.Counter()
    for r in data:
        ex[opcode(r)] += executed(r)
        sa[opcode(r)] += samples(r)
    print("opcodes: share of executed, share of samples")
    for o, v in ex.most_common(20):
        print("  %-10s %5.1f%%  %5.1f%%" % (o, 100 * v / total_e, 100 * sa[o] / total_s))
    base = int(data[0][col["Address"]], 16)
    region = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in data:
        g = region[(int(r[col["Address"]], 16) - base) // 4096]
        g[0] += samples(r)
        g[1] += executed(r)
        g[2] = max(g[2], executed(r))
    print("code regions (4 KB): samples, executed, most executions of one instruction")
    for g in sorted(region):
        s, e, m = region[g]
        if e:
            print("  0x%05x %5.1f%% %10d %8d" % (g * 4096, 100 * s / total_s, e, m))
    print("instructions with the most samples:")
    for r in sorted(data, key=lambda r: -samples(r))[:top_n]:
        why = sorted(((num(r, s), s) for s in stalls), reverse=True)[:2]
        print("  %6x %5d ex %8d  %-48s %s" % (int(r[col["Address"]], 16) - base, samples(r), executed(r),
                                            r[col["Source"]].strip()[:48],
                                            " ".join("%s:%d" % (s[6:], v) for v, s in why if v)))


if __name__ == "__main__":
    main()
