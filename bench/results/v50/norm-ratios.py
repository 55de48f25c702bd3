#!/usr/bin/env python3
"""The fused norm's time over the plain call's (NOTES v50's table): call 3's
A/B with --rmsnorm (a0 the QGC_EXP_NORM_B2 module, b main's kDG) over the
mean of its two plain passes, and call 5's kB2 (b, the rule's module) over
the same plain means (another H100 of the same kind). From this folder:
python3 norm-ratios.py"""
import re


def ab(path):
    out = {}
    for line in open(path):
        m = re.match(r'(\d+) (\d+) (\S+) (\S+) m=1 1: ([\d.]+)/([\d.]+)\s+([\d.]+)/([\d.]+)', line)
        if m:
            v = [float(x) for x in m.group(5, 6, 7, 8)]
            out[(m.group(1) + 'x' + m.group(2), m.group(3), m.group(4))] = ((v[0] + v[1]) / 2, (v[2] + v[3]) / 2)
    return out


FMT = {'NF4': 'nf4', 'Q2_0/g64': 'q2_0g64', 'Q2_0/g128': 'q2_0'}
plain = {}
for f in ('call3/r50c/plain-1.txt', 'call3/r50c/plain-2.txt'):
    for line in open(f):
        if not line.startswith('-'):
            continue
        t = line.split()
        i = 4 if t[3] in ('lut', 'share') else 3
        plain.setdefault((t[1], FMT[t[2]], t[i]), []).append(float(t[i + 2]))
call3, call5 = ab('call3/r50c/ab-norm.txt'), ab('call5/r50e/ab-norm.txt')
print('shape format x  plain  norm(kDG or none) ratio  kB2-everywhere ratio  kB2-by-rule(call 5) ratio')
for key, (b2, dg) in call3.items():
    p = sum(plain[key]) / len(plain[key])
    r5 = call5.get(key)
    tail = '%.1f %.2f' % (r5[1], r5[1] / p) if r5 else '-'
    print(key[0], key[1], key[2], '%.1f' % p, '%.1f %.2f' % (dg, dg / p), '%.1f %.2f' % (b2, b2 / p), tail)
