# Sourced by scripts/arm-check.sh and scripts/x86-emu-check.sh after they
# set name (the check's, for messages and the temp dir's name) and srcdir,
# with the script's arguments: enters the build directory ($1, else a
# fresh temp dir removed at exit) and sets src to the sources to configure.
[ -x "$srcdir/configure" ] || { echo "$name: $srcdir/configure missing: run ./autogen.sh first" >&2; exit 1; }

if [ $# -ge 1 ]; then
  build=$1
  mkdir -p "$build"
else
  build=$(mktemp -d "${TMPDIR:-/tmp}/qgemv-$name.XXXXXX")
  trap 'rm -rf "$build"' EXIT
fi
build=$(cd "$build" && pwd)
echo "$name: building in $build"
cd "$build"

# autoconf refuses to configure a source tree again from elsewhere once it
# has been configured in place (as CI does): then build a clean copy of the
# distributed sources, made by the tree's own distdir rule.
src=$srcdir
if [ -f "$srcdir/config.status" ]; then
  make -C "$srcdir" distdir distdir="$build/src" >distdir.log 2>&1 ||
    { tail -20 distdir.log; echo "$name: make distdir failed" >&2; exit 1; }
  src=$build/src
  mkdir -p obj
  cd obj
fi
