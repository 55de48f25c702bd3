# Sourced by tests/test_tool_*.sh: the tool under test, a scratch
# directory, and the automake test protocol (exit 77 = SKIP, 99 = hard error).

# `make check-valgrind` runs every test under valgrind, which is meant for
# the Check binaries: /bin/sh itself leaks at exit. A script therefore
# leaves valgrind by re-executing itself (valgrind does not follow an exec
# unless asked to trace children).
case ${LD_PRELOAD-} in
*vgpreload*)
  if [ -z "${QGEMV_TEST_REEXEC-}" ]; then
    QGEMV_TEST_REEXEC=1
    export QGEMV_TEST_REEXEC
    exec /bin/sh "$0" "$@"
  fi
  ;;
esac

# The tool in the build tree (tests/tool.mk exports QGEMV_TOOL).
tool=${QGEMV_TOOL:-./tools/qgemv}
[ -x "$tool" ] || { echo "qgemv tool not found at '$tool' (set QGEMV_TOOL)"; exit 99; }
srcdir=${srcdir:-.}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/qgemv-test.XXXXXX") || exit 99
trap 'rm -rf "$scratch"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
have() { command -v "$1" >/dev/null 2>&1; }

# expect_status WANT CMD...: runs CMD, output in $scratch/out and
# $scratch/err, and fails unless it exits with WANT.
expect_status() {
  want=$1
  shift
  "$@" >"$scratch/out" 2>"$scratch/err"
  got=$?
  [ "$got" -eq "$want" ] || { cat "$scratch/out" "$scratch/err"; fail "'$*' exited $got, expected $want"; }
}

# The formats the library lists, one name a line, as qgemv info prints them
# (the library's own test checks the list; these tests follow it).
format_names() {
  "$tool" info | awk '/^formats/ { on = 1; next } on && !NF { exit } on { print $1 }'
}

# jq_true FILE FILTER: FILE is JSON and FILTER holds on it.
jq_true() {
  jq -e "$2" "$1" >/dev/null || { head -c 2000 "$1"; fail "$1: jq '$2' is not true"; }
}
