#!/bin/sh
# bench/ncu-insn.py summarises ncu's per-SASS-instruction page (CSV): a
# hand-made page of three instructions, whose totals are counted here.
. "${srcdir:-.}/tests/test_tool_lib.sh"

have python3 || skip "python3 is not installed"
cat >"$scratch/src.csv" <<'CSV'
"Kernel Name","void k<(int)1>(P)",
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","Instructions Executed","stall_math","stall_wait","stall_math (Not Issued)"
"0x7f0000001000","      LOP3.LUT R1, R2, 0x3, R4, 0xf8, !PT","6","5","100","4","2","3"
"0x7f0000001010","@P0   HFMA2.BF16_V2 R1, R1, R2, -1, -1","3","2","100","1","2","1"
"0x7f0000002010","      LOP3.LUT R5, R2, 0x3, RZ, 0xc0, !PT","1","1","100","0","1","0"
CSV
python3 "$srcdir/bench/ncu-insn.py" "$scratch/src.csv" 1 >"$scratch/out" 2>&1 || fail "ncu-insn.py failed: $(cat "$scratch/out")"
grep -q "^samples 10, warp instructions executed 300$" "$scratch/out" || fail "totals: $(cat "$scratch/out")"
grep -Eq "^  math +50.0%$" "$scratch/out" || fail "stall share: $(cat "$scratch/out")"
grep -Eq "^  LOP3 +66.7% +70.0%$" "$scratch/out" || fail "LOP3's shares: $(cat "$scratch/out")"
grep -Eq "^  HFMA2 +33.3% +30.0%$" "$scratch/out" || fail "HFMA2's shares (predicated): $(cat "$scratch/out")"
grep -Eq "^  0x01000 +10.0% +100 +100$" "$scratch/out" || fail "the second code region: $(cat "$scratch/out")"
grep -Eq "^ +0 +6 ex +100  LOP3.LUT R1, R2, 0x3, R4, 0xf8, !PT .*math:4 wait:2$" "$scratch/out" ||
  fail "the top instruction: $(cat "$scratch/out")"
[ "$(grep -c " ex " "$scratch/out")" -eq 1 ] || fail "TOP 1 printed other than one instruction"

# not an ncu source page
echo "a,b" >"$scratch/bad.csv"
python3 "$srcdir/bench/ncu-insn.py" "$scratch/bad.csv" >/dev/null 2>&1 && fail "took a CSV without the Address header"
python3 "$srcdir/bench/ncu-insn.py" >/dev/null 2>&1 && fail "ran without arguments"
echo "PASS: ncu-insn"
