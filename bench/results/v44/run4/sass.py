# opcode histogram of chosen kernels from `cuobjdump -sass` on stdin
import re, sys, collections
want = {
    '_Z12share_kernelILi0ELi1ELi8ELi512ELi1EEv2KP': 'old nf4-f32x U8 T512',
    '_Z11lean_kernelILi0ELi1ELi1ELi1ELi8ELi512ELi1EEv2KP': 'nf4l-f32x U8 T512',
    '_Z11lean_kernelILi0ELi1ELi3ELi1ELi8ELi512ELi1EEv2KP': 'nf4p16-f32x U8 T512',
    '_Z11lean_kernelILi0ELi1ELi4ELi1ELi8ELi512ELi1EEv2KP': 'nf4p32-f32x U8 T512',
    '_Z12share_kernelILi1ELi1ELi8ELi256ELi1EEv2KP': 'old q2g64-f32x U8 T256',
    '_Z11lean_kernelILi1ELi1ELi1ELi1ELi8ELi256ELi1EEv2KP': 'q2g64l-f32x U8 T256',
}
cnt = {k: collections.Counter() for k in want}
lds_imm = {k: collections.Counter() for k in want}
f = None
for line in sys.stdin:
    m = re.search(r'Function : (\S+)', line)
    if m:
        f = m.group(1) if m.group(1) in want else None
        continue
    if f is None:
        continue
    m = re.match(r'\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]+\s+)?([A-Z][A-Z0-9_]*)(\S*)\s*([^;]*);', line)
    if not m:
        continue
    op = m.group(1)
    cnt[f][op] += 1
    if op == 'LDS':
        a = m.group(3)
        lds_imm[f]['ur' if 'UR' in a else 'imm' if re.search(r'\[R\d+\+0x', a) else 'reg'] += 1
for k, name in want.items():
    c = cnt[k]
    print('%-24s %5d instr: %s | LDS addressing %s' % (name, sum(c.values()),
          ' '.join('%s %d' % kv for kv in c.most_common(18)), dict(lds_imm[k])))
