#!/bin/sh
# bench/lab/timeline.py reads the timeline experiment's dump (a CUDA module
# built with -DQGC_EXP_TIMELINE=1): a hand-made dump of 2 CTAs over 70
# launches, 16 slots, whose stamps are set apart by known times here.
. "${srcdir:-.}/tests/test_tool_lib.sh"

have python3 || skip "python3 is not installed"
python3 - "$scratch/tl.bin" <<'PY' || fail "could not write the dump"
import struct, sys
grid, slots, ring, seq = 2, 16, 64, 70
recs = {}
for L in range(seq):
    for b in range(grid):
        t0 = 1000000 + L * 25000 + b * 10
        # entry, wait +100, staged +800, first chunk +1500, loop end
        # +20000, combine +20500, exit +21000, SM b; chunk 4 issued +5000,
        # ready +8000; chunk 8 issued +9000, ready +11000
        r = [t0, t0 + 100, t0 + 800, t0 + 1500, t0 + 20000, t0 + 20500, t0 + 21000, b,
             t0 + 5000, t0 + 8000, t0 + 9000, t0 + 11000, 0, 0, 0, 0]
        recs[(L % ring, b)] = r
out = bytearray(struct.pack("<8q", 0x716C74, seq, grid, 448, 28672, 8192, 1, slots))
for l in range(ring):
    for b in range(grid):
        out += struct.pack("<16Q", *recs[(l, b)])
open(sys.argv[1], "wb").write(out)
PY
python3 "$srcdir/bench/lab/timeline.py" "$scratch/tl.bin" >"$scratch/out" 2>&1 || fail "timeline.py failed: $(cat "$scratch/out")"
grep -q "grid 2 x 448 threads, 70 launches seen, 63 used, 2 SMs" "$scratch/out" || fail "header: $(cat "$scratch/out")"
grep -q "period 25.00  span 21.01  starts 0.01  gap 3.99" "$scratch/out" || fail "per launch: $(cat "$scratch/out")"
for want in "wait 0.10/0.10" "stage 0.70/0.70" "first 0.70/0.70" "loop 18.50/18.50" "bar 0.50/0.50" \
  "epi 0.50/0.50" "arrive 1.50/1.50" "lat4 3.00/3.00" "lat8 2.00/2.00"; do
  grep -q "$want" "$scratch/out" || fail "per CTA, $want: $(cat "$scratch/out")"
done

# not a dump, and a truncated one
echo "not a dump" >"$scratch/bad.bin"
python3 "$srcdir/bench/lab/timeline.py" "$scratch/bad.bin" >/dev/null 2>&1 && fail "took a file that is not a dump"
head -c 1000 "$scratch/tl.bin" >"$scratch/short.bin"
python3 "$srcdir/bench/lab/timeline.py" "$scratch/short.bin" >"$scratch/out2" 2>&1 && fail "took a truncated dump"
grep -q "truncated" "$scratch/out2" || fail "truncated dump's message: $(cat "$scratch/out2")"
echo "PASS: timeline"
