#!/usr/bin/env python3
"""Which measured build each kernel of a PTX file matches, kernel by kernel
(each .entry's text): the provenance check of a change that keeps every
kernel's code that of a module timed on the device (bench/NOTES.md v53).
  nvcc -arch=sm_90 -O3 -std=c++17 --maxrregcount=128 -DQG_CUDA_ARCHS='"sm_90"' \
    -Iinclude -IBUILD -I/usr/local/cuda/include [-DFLAG] -ptx src/backend-cuda/F.cu -o X.ptx
  bench/ptx-kernels.py NEW.ptx REF1.ptx [REF2.ptx ...]
prints each kernel that matches no reference, then the counts per set of
references matched."""
import sys, re
def entries(path):
    out = {}; cur = None; buf = []
    for line in open(path):
        m = re.match(r'\.(?:visible |weak )?\.entry (\S+)\(', line)
        if m: cur = m.group(1); buf = [line]; continue
        if cur is not None:
            buf.append(line)
            if line.startswith('}'):
                out[cur] = ''.join(buf); cur = None
    return out
new = entries(sys.argv[1]); refs = [(p.split('/')[-1], entries(p)) for p in sys.argv[2:]]
from collections import Counter
cnt = Counter()
for name, body in sorted(new.items()):
    match = [tag for tag, r in refs if r.get(name) == body]
    cnt[tuple(match)] += 1
    if not match: print("NO MATCH", name[:120])
for k, v in cnt.items(): print(v, "kernels match", k or "nothing")
print(len(new), "entries in new;", [len(r) for _, r in refs])
