#!/usr/bin/env python3
"""The stream split's batch loop (lut_kernels.cuh, lut_kernel's SK branch)
stepped by hand in Python, line for line, for many shapes and CTA counts
(bench/NOTES.md v42): every batch-unit is summed exactly once, by the CTA
whose run holds it (qgc_lut_stream_cta); each warp's loads come in the
order its batches are summed (the one-ahead load is the next batch
summed); every row unit's slots 0 .. last - first are written once. Keep it
in step with the kernel when the loop changes. Exit status 1 on a failure.
"""
import itertools
import sys


def cta_of(t, ctas, work):
    return ((t + 1) * ctas - 1) // work


def check(row_units, chunks, nb, ctas):
    per_unit = chunks * nb
    work = row_units * per_unit
    summed, writes = {}, set()
    for blk in range(ctas):
        t_begin, t_end = blk * work // ctas, (blk + 1) * work // ctas
        u, c, b0 = t_begin // per_unit, t_begin // nb % chunks, t_begin % nb
        left = t_end - t_begin
        loads, order = ([(u, c, b0)] if left > 0 else []), []
        while left > 0:
            b_end = min(b0 + left, nb)
            un, cn = (u, c + 1) if c + 1 < chunks else (u + 1, 0)
            for b in range(nb):
                if b < b0 or b >= b_end:
                    continue
                order.append((u, c, b))
                if b + 1 < b_end:
                    loads.append((u, c, b + 1))
                elif left > b_end - b0:
                    loads.append((un, cn, 0))
            left -= b_end - b0
            if left == 0 or cn == 0:
                slot = blk - cta_of(u * per_unit, ctas, work)
                if (u, slot) in writes:
                    return f"CTA {blk}: slot {slot} of row unit {u} written twice"
                writes.add((u, slot))
            u, c, b0 = un, cn, 0
        if loads != order:
            return f"CTA {blk}: loads {loads[:4]}... against batches {order[:4]}..."
        for x in order:
            t = x[0] * per_unit + x[1] * nb + x[2]
            if x in summed or cta_of(t, ctas, work) != blk:
                return f"batch-unit {x} summed twice or by CTA {blk}"
            summed[x] = blk
    if len(summed) != work:
        return f"{work - len(summed)} batch-units not summed"
    for u in range(row_units):
        last = cta_of((u + 1) * per_unit - 1, ctas, work) - cta_of(u * per_unit, ctas, work)
        if any((u, s) not in writes for s in range(last + 1)):
            return f"row unit {u}: a slot not written"
    return None


def main():
    bad = 0
    cases = 0
    for ru, ch, nb, ctas in itertools.product([1, 2, 3, 14], [1, 2, 5, 32], [2, 4, 8], [1, 3, 7, 13, 132]):
        if ctas > ru * ch * nb:
            continue
        cases += 1
        why = check(ru, ch, nb, ctas)
        if why:
            bad += 1
            print(f"row units {ru}, chunks {ch}, NB {nb}, {ctas} CTAs: {why}")
    print(f"{cases - bad} of {cases} cases stepped right")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
