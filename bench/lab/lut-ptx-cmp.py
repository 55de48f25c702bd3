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


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
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
