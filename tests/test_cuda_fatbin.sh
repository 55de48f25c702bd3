#!/bin/sh
# The CUDA module holds machine code (ELF) for every architecture configured
# (--with-cuda-arch, read from config.h: e.g. sm_90 for the H200, sm_121 for
# GB10) and PTX for the newest of them, for GPUs newer than the list. Each
# .cu file is one fat binary in the module's .nv_fatbin section, and each
# must hold all of them. The section is read with objcopy (binutils, there
# wherever the module is linked) and tests/fatbin_list, so the test needs
# neither a GPU nor cuobjdump. The module is the one in QGEMV_PLUGIN_PATH
# (set by the test environment).
# Exit 77 (SKIP) only when CUDA is not configured in this build.
module="${QGEMV_PLUGIN_PATH%%:*}/qgemv-cuda.so"
archs=$(sed -n 's/.*cuda-arch=\([^ "]*\).*/\1/p' ./config.h 2>/dev/null | head -n 1)
case $archs in
  "" | none) echo "SKIP: CUDA is not configured in this build"; exit 77 ;;
esac
[ -f "$module" ] || { echo "FAIL: CUDA is configured ($archs) but $module was not built"; exit 1; }
lister=./tests/fatbin_list
[ -x "$lister" ] || { echo "ERROR: $lister is not built (make check builds it)"; exit 99; }
command -v objcopy >/dev/null 2>&1 || { echo "ERROR: objcopy (binutils) not found"; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/qgemv-fatbin.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
objcopy -O binary --only-section=.nv_fatbin "$module" "$tmp/section" ||
  { echo "FAIL: objcopy cannot extract .nv_fatbin from $module"; exit 1; }
"$lister" "$tmp/section" >"$tmp/entries" || { echo "FAIL: $module: .nv_fatbin is not a list of fat binaries"; exit 1; }
fatbins=$(cut -d ' ' -f 1 "$tmp/entries" | sort -u | wc -l)
[ "$fatbins" -gt 0 ] || { echo "FAIL: $module holds no fat binary"; exit 1; }

# has KIND ARCH: every fat binary holds an entry of that kind and
# architecture; else names the ones that lack it.
has() {
  lacking=$(awk -v kind="$1" -v arch="$2" '
    $1 + 1 > n { n = $1 + 1 } $2 == kind && $3 == arch { found[$1] = 1 }
    END { for (f = 0; f < n; f++) if (!(f in found)) printf "%d ", f }' "$tmp/entries")
  [ -z "$lacking" ] && return 0
  echo "FAIL: $module: fat binaries ${lacking}(of $fatbins, from 0) lack $1 for sm_$2"
  failed=1
}

# sm_90 -> 90; a feature suffix (sm_90a) names the same architecture number.
failed=0
newest=0
for a in $(echo "$archs" | tr ',' ' '); do
  n=$(echo "$a" | sed -n 's/^sm_\([0-9][0-9]*\)[a-z]*$/\1/p')
  [ -n "$n" ] || { echo "ERROR: cannot read '$a' in the configured list $archs"; exit 99; }
  has elf "$n"
  [ "$n" -gt "$newest" ] && newest=$n
done
has ptx "$newest"
if [ "$failed" != 0 ]; then
  printf 'configured: %s; the module holds: ' "$archs"
  cut -d ' ' -f 2- "$tmp/entries" | sort -u | awk '{ printf "%s%s sm_%s", (NR > 1 ? ", " : ""), $1, $2 } END { print "" }'
  exit 1
fi
echo "ok: $fatbins fat binaries, each with machine code for $archs and PTX for sm_$newest"
