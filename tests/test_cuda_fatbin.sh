#!/bin/sh
# The CUDA module holds machine code for the architectures configured
# (issue 3: sm_90 for the H200, sm_121 for GB10). Reads the configured list
# from config.h (QG_BUILD_CONFIG) and the module from QGEMV_PLUGIN_PATH (set
# by the test environment); cuobjdump --list-elf names the cubins.
# Exit 77 (SKIP) when CUDA is not configured, cuobjdump is missing, or
# neither sm_90 nor sm_121 was configured.
module="${QGEMV_PLUGIN_PATH%%:*}/qgemv-cuda.so"
config=./config.h
archs=$(sed -n 's/.*cuda-arch=\([^ "]*\).*/\1/p' "$config" 2>/dev/null | head -n 1)
case $archs in
  "" | none) echo "SKIP: CUDA is not configured in this build"; exit 77 ;;
esac
if [ ! -f "$module" ]; then
  echo "FAIL: CUDA is configured ($archs) but $module was not built"
  exit 1
fi
# The toolkit configure found first (nvcc on PATH may be a wrapper outside
# it), then PATH.
cuda_home=$(sed -n 's/^CUDA_HOME = //p' Makefile 2>/dev/null | head -n 1)
cuobjdump=
[ -n "$cuda_home" ] && [ -x "$cuda_home/bin/cuobjdump" ] && cuobjdump="$cuda_home/bin/cuobjdump"
[ -n "$cuobjdump" ] || cuobjdump=$(command -v cuobjdump 2>/dev/null)
if [ -z "$cuobjdump" ]; then
  echo "SKIP: cuobjdump not found (in ${cuda_home:-the CUDA toolkit}/bin or on PATH)"
  exit 77
fi
elves=$("$cuobjdump" --list-elf "$module" 2>&1) || { echo "FAIL: cuobjdump --list-elf $module: $elves"; exit 1; }
checked=0
for want in sm_90 sm_121; do
  case ",$archs," in
    *",$want,"*) ;;
    *) echo "note: $want not configured ($archs), not checked"; continue ;;
  esac
  checked=$((checked + 1))
  if echo "$elves" | grep -q "\.$want\.cubin"; then
    echo "ok: $want code in $module"
  else
    echo "FAIL: no $want cubin in $module; cuobjdump --list-elf says:"
    echo "$elves"
    exit 1
  fi
done
if [ "$checked" = 0 ]; then
  echo "SKIP: neither sm_90 nor sm_121 is in the configured list ($archs)"
  exit 77
fi
exit 0
