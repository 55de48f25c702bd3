#!/usr/bin/env python3
"""Reads the timeline experiment's dump (a module built with
-DQGC_EXP_TIMELINE=1, run with QGEMV_CUDA_TIMELINE=FILE: each CTA's thread 0
stamps %globaltimer at 7 points of a launch, kernels_matvec.cuh) and prints
where a launch's time goes, in microseconds, as medians over the last
launches in the buffer (the first one left out).

  timeline.py FILE [FILE...]

Points: 0 entry, 1 after griddepcontrol.wait, 2 after the staging's
barrier, 3 warp 0's first chunk ready, 4 warp 0's last unit's chunks
done, 5 the combine barrier (every warp done), 6 exit. Per launch L:
  period   first entry of L+1 - first entry of L (the bench's time per call)
  span     last exit - first entry
  starts   last entry - first entry (how long the CTAs take to arrive)
  gap      first entry of L+1 - last exit of L (< 0: overlap)
and per CTA (median over CTAs, then over launches; max over CTAs too):
  wait 1-0, stage 2-1, first 3-2, loop 4-3, bar 5-4, epi 6-5, and
  arrive 3-0 (entry to the first chunk, which the CTA asked for at entry),
  lat4, lat8: warp 0's chunks 4 and 8 from their bulk copy's issue to
  ready (slots 8-9, 10-11: the ring's latency in the steady state);
  the staging's parts (slots 12-15, modules from v15 on): x0 and xlast,
  thread 0's and the CTA's last thread's values in registers after the
  wait; terms0, thread 0's terms made and stored; ssq, the norm's sums of
  squares and the barriers after its first barrier.
The few CTAs that enter on SMs the previous launch left idle wait for its
whole span: the per-CTA medians leave them out, the maxima do not."""
import statistics as st
import struct
import sys


def load(path):
    data = open(path, "rb").read()
    if len(data) < 64:
        raise SystemExit("%s: not a timeline dump" % path)
    hdr = struct.unpack("<8q", data[:64])
    if hdr[0] != 0x716C74:
        raise SystemExit("%s: not a timeline dump" % path)
    seq, grid, block, n, k, m, slots = hdr[1:]
    launches = 64  # kTlLaunches in kernels_matvec.cuh
    per = grid * slots
    if len(data) < 64 + launches * per * 8:
        raise SystemExit("%s: truncated (%d bytes, %d expected)" % (path, len(data), 64 + launches * per * 8))
    words = struct.unpack("<%dQ" % (launches * per), data[64:64 + launches * per * 8])
    recs = {}
    for slot_l in range(launches):
        rows = [words[(slot_l * grid + b) * slots:(slot_l * grid + b + 1) * slots] for b in range(grid)]
        recs[slot_l] = rows
    # launch sequence numbers held: the last min(seq, 64), in order
    first = max(0, seq - launches)
    order = [recs[s % launches] for s in range(first, seq)]
    return dict(seq=seq, grid=grid, block=block, n=n, k=k, m=m, slots=slots), order


def med(v):
    return st.median(v) if v else float("nan")


def summarize(path):
    h, order = load(path)
    slots = h["slots"]
    us = lambda ns: ns / 1000.0
    rows = []
    for i, L in enumerate(order):
        if any(r[0] == 0 or r[6] == 0 for r in L):
            continue
        e0 = min(r[0] for r in L)
        rows.append((i, L, e0))
    per_launch = {key: [] for key in ("period", "span", "starts", "gap")}
    per_cta = {key: [] for key in ("wait", "stage", "first", "loop", "bar", "epi", "arrive", "lat4", "lat8", "x0",
                                   "terms0", "xlast", "ssq")}
    per_cta_max = {key: [] for key in per_cta}
    sms = set()
    for j, (i, L, e0) in enumerate(rows[1:], 1):
        last_exit = max(r[6] for r in L)
        per_launch["span"].append(us(last_exit - e0))
        per_launch["starts"].append(us(max(r[0] for r in L) - e0))
        if j + 1 < len(rows) and rows[j + 1][0] == i + 1:
            nxt = rows[j + 1][2]
            per_launch["period"].append(us(nxt - e0))
            per_launch["gap"].append(us(nxt - last_exit))
        d = {key: [] for key in per_cta}
        for r in L:
            sms.add(r[7])
            d["wait"].append(us(r[1] - r[0]))
            d["stage"].append(us(r[2] - r[1]))
            if r[3]:
                d["first"].append(us(r[3] - r[2]))
                d["loop"].append(us(r[4] - r[3]))
                d["arrive"].append(us(r[3] - r[0]))
            if slots > 11 and r[8] and r[9]:
                d["lat4"].append(us(r[9] - r[8]))
            if slots > 11 and r[10] and r[11]:
                d["lat8"].append(us(r[11] - r[10]))
            if slots > 15 and r[12]:  # the staging's points (modules from v15 on)
                d["x0"].append(us(r[12] - r[1]))
                d["xlast"].append(us(r[15] - r[1]))
                if r[13]:
                    d["terms0"].append(us(r[13] - r[12]))
                if r[14]:
                    d["ssq"].append(us(r[2] - r[14]))
            d["bar"].append(us(r[5] - r[4]))
            d["epi"].append(us(r[6] - r[5]))
        for key in per_cta:
            if d[key]:
                per_cta[key].append(med(d[key]))
                per_cta_max[key].append(max(d[key]))
    print("%s: n %d k %d m %d, grid %d x %d threads, %d launches seen, %d used, %d SMs" %
          (path, h["n"], h["k"], h["m"], h["grid"], h["block"], h["seq"], len(rows) - 1, len(sms)))
    print("  per launch (median us): " + "  ".join("%s %.2f" % (key, med(v)) for key, v in per_launch.items()))
    print("  per CTA (median of medians / median of maxima, us): " +
          "  ".join("%s %.2f/%.2f" % (key, med(per_cta[key]), med(per_cta_max[key])) for key in per_cta))


if __name__ == "__main__":
    for f in sys.argv[1:]:
        summarize(f)
