#!/usr/bin/env python3
"""The LUT kernels of two builds, kernel by kernel, in PTX (bench/NOTES.md
v41): whether a kernel given lut_kernel's template parameter PF compiles
to the same code as the module that was timed. The kernels of NEW.ptx named
lut_kernel<L, NB, XBF, NORM, PF> are compared with lut_kernel<L, NB, XBF,
NORM> of REF0.ptx (PF 0) or of the file given for their PF (PF=FILE, e.g.
the old tree built with -DQGC_EXP_LUT_L2PF=4); every other kernel with the
same name in REF0.ptx. Basic-block labels are renumbered first (they count
across a file). Exit status 1 if any kernel differs or has no reference.

  nvcc -arch=sm_90 -O3 -std=c++17 -ptx -I include -I BUILD -I src/backend-cuda -I src \\
    -o new.ptx src/backend-cuda/lut_matvec.cu        (and the same in the old tree)
  python3 bench/lab/lut-ptx-cmp.py new.ptx old.ptx 4=old-pf4.ptx

A kernel whose name the reference file has as it is (a reference built
with PF in the names, v41 on) is compared with that one; lut_kernel's SK
= false is matched to names without SK (v42).

With --loops FILE.ptx [SUBSTRING]: for each LUT kernel (whose name holds
SUBSTRING), the loops that hold table lookups, as PTX instructions between
the loop's label and its back branch, with their lookups, global loads,
div/rem and 64-bit operations: a static count (each path of a branch
counted, a PTX div.u64 one instruction though SASS calls a routine), for
comparing the loops of two kernels before they run (bench/NOTES.md v43).
"""
import re
import sys


def entries(path):
    """Kernel name -> body, the labels renumbered; SK = false (lut_kernel's
    sixth parameter, v42's stream split) written as its default, so a build
    with it compares with one from before it by name."""
    text = open(path).read()
    out = {}
    for m in re.finditer(r"\.visible \.entry (\S+)\(", text):
        end = text.index("\n}\n", m.start())
        name = re.sub(r"(lut_kernelILi\d+ELi\d+ELb\dELi\dELi\d+)ELb0(EEEv)", r"\1\2", m.group(1))
        out[name] = re.sub(r"\$L__BB\d+_", "$L__BB_", text[m.start():end]).replace(m.group(1), name)
    return out


def lookup_loops(body):
    """(instructions, lookups, global loads, div/rem, 64-bit ops) of each
    loop (a label and a later branch back to it) that holds a lookup."""
    lines = [line.strip() for line in body.split("\n")]
    labels = {}
    for i, line in enumerate(lines):
        m = re.match(r"(\$L__BB\d*_\d+):", line)
        if m:
            labels[m.group(1)] = i
    found = []
    for i, line in enumerate(lines):
        m = re.search(r"bra(?:\.uni)?\s+(\$L__BB\d*_\d+);", line)
        if not m or labels.get(m.group(1), i) >= i:
            continue
        insns = [x for x in lines[labels[m.group(1)]:i + 1]
                 if x and not x.endswith(":") and x[0] not in "/.{}"]
        counts = (len(insns), sum("ld.shared.f32" in x for x in insns), sum("ld.global" in x for x in insns),
                  sum(bool(re.search(r"\b(div|rem)\.", x)) for x in insns),
                  sum(bool(re.search(r"\.[subf]64\b", x)) for x in insns))
        if counts[1]:
            found.append(counts)
    return found


def print_loops(path, part):
    for name, body in sorted(entries(path).items()):
        if "lut_kernel" in name and part in name:
            for n, lookups, loads, divs, wide in lookup_loops(body):
                print(f"{name}: {n} instructions, {lookups} lookups, {loads} global loads, "
                      f"{divs} div/rem, {wide} 64-bit")
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "--loops":
        return print_loops(argv[2], argv[3] if len(argv) > 3 else "")
    if len(argv) < 3:
        print("usage: lut-ptx-cmp.py NEW.ptx REF0.ptx [PF=FILE ...] | --loops FILE.ptx [SUBSTRING]", file=sys.stderr)
        return 2
    new = entries(argv[1])
    refs = {"0": entries(argv[2])}
    for arg in argv[3:]:
        pf, _, path = arg.partition("=")
        refs[pf] = entries(path)
    named = re.compile(r"(_ZN3qgc10lut_kernelILi\d+ELi\d+ELb\dELi\d)ELi(\d+)(EEEvNS_9LutParamsE)")
    same, bad = 0, 0
    for name, body in sorted(new.items()):
        m = named.fullmatch(name)
        ref_name, pf = (m.group(1) + m.group(3), m.group(2)) if m else (name, "0")
        ref = refs.get(pf, {}).get(ref_name)
        if ref is None and name in refs["0"]:  # a reference built with PF in the name (v41 on)
            ref_name, ref = name, refs["0"][name]
        if ref is not None and body.replace(name, ref_name) == ref:
            same += 1
        else:
            bad += 1
            print(("differs: " if ref is not None else "no reference: ") + name)
    print(f"{same} kernels identical to their reference, {bad} not")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
