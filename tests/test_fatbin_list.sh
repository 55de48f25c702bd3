#!/bin/sh
# tests/fatbin_list on a .nv_fatbin section written here byte by byte from
# the layout in its header comment (two fat binaries, entry and fat binary
# headers longer than the fields read), and on broken sections, which it
# must refuse with one message (a read past the end shows in the sanitizer
# build as the sanitizer's report instead).
lister=./tests/fatbin_list
[ -x "$lister" ] || { echo "ERROR: $lister is not built (make check builds it)"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/qgemv-fatbin.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# le VALUE BYTES: VALUE little-endian in BYTES bytes.
le() {
  v=$1 i=0
  while [ "$i" -lt "$2" ]; do
    printf "\\$(printf %03o $((v % 256)))"
    v=$((v / 256)) i=$((i + 1))
  done
}
zeros() { le 0 "$1"; }
# fatbin HEADER_SIZE ENTRIES_SIZE: a fat binary header, padded to HEADER_SIZE.
fatbin() { le 3126193488 4; le 1 2; le "$1" 2; le "$2" 8; zeros $(($1 - 16)); }
# entry KIND ARCH HEADER_SIZE PAYLOAD_SIZE: an entry header and its payload
# (filled with 0xff, so that a payload read as a header would be noticed).
entry() {
  le "$1" 2; le 257 2; le "$3" 4; le "$4" 8; zeros 12; le "$2" 4; zeros $(($3 - 32))
  i=0
  while [ "$i" -lt "$4" ]; do printf '\377'; i=$((i + 1)); done
}
{
  fatbin 16 80; entry 2 90 40 5; entry 1 121 32 3
  fatbin 24 32; entry 2 121 32 0
} >"$tmp/section"
printf '0 elf 90\n0 ptx 121\n1 elf 121\n' >"$tmp/want"
"$lister" "$tmp/section" >"$tmp/got" || fail "fatbin_list refused a well-formed section"
cmp -s "$tmp/want" "$tmp/got" || { cat "$tmp/got"; fail "fatbin_list listed the above, not: $(cat "$tmp/want")"; }

# Refused: a section cut short (in the last payload, in a fat binary
# header), a fat binary whose size ends in an entry's header or payload, a
# fat binary header of size 0, no magic, an unknown entry kind, an entry
# header without room for the architecture, a missing file.
refuse() {
  "$lister" "$1" >/dev/null 2>"$tmp/err"
  rc=$?
  [ "$rc" -ne 0 ] || fail "fatbin_list accepted $2"
  # its own refusal: status 1 and one line (not a sanitizer's report)
  [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^fatbin_list: ' "$tmp/err" ||
    { cat "$tmp/err"; fail "fatbin_list did not refuse $2 with one message (status $rc)"; }
}
size=$(wc -c <"$tmp/section")
for keep in $((size - 1)) $((16 + 80 + 10)); do
  dd if="$tmp/section" of="$tmp/short" bs=1 count="$keep" 2>/dev/null
  refuse "$tmp/short" "a section cut to $keep of $size bytes"
done
# (the section ends with the fat binary, so that reading on would be
# reading past the end)
{ fatbin 16 8; entry 2 90 32 0; } | dd of="$tmp/bad" bs=1 count=24 2>/dev/null
refuse "$tmp/bad" "a fat binary that ends in an entry header"
{ fatbin 16 40; entry 2 90 32 10; } | dd of="$tmp/bad" bs=1 count=56 2>/dev/null
refuse "$tmp/bad" "a fat binary that ends in an entry payload"
{ le 3126193488 4; le 1 2; zeros 10; } >"$tmp/bad"
refuse "$tmp/bad" "a fat binary header that claims 0 bytes (reading would not advance)"
{ zeros 4; dd if="$tmp/section" bs=1 skip=4 2>/dev/null; } >"$tmp/bad"
refuse "$tmp/bad" "a section without the magic"
{ fatbin 16 32; entry 3 90 32 0; } >"$tmp/bad"
refuse "$tmp/bad" "an entry of kind 3"
{ fatbin 16 32; le 2 2; le 257 2; le 16 4; le 16 8; zeros 16; } >"$tmp/bad"
refuse "$tmp/bad" "an entry header too short to hold the architecture"
refuse "$tmp/absent" "a missing file"
echo "ok: fatbin_list reads a section of two fat binaries and refuses 9 broken ones"
