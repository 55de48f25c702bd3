#!/bin/sh
# --help for the tool and each subcommand, and --version.
. "${srcdir:-.}/tests/test_tool_lib.sh"

expect_status 0 "$tool" --help
grep -q '^usage: qgemv' "$scratch/out" || fail "qgemv --help has no usage line"
for cmd in info verify bench; do
  expect_status 0 "$tool" "$cmd" --help
  grep -q "^usage: qgemv $cmd" "$scratch/out" || fail "qgemv $cmd --help has no usage line"
  expect_status 0 "$tool" "$cmd" -h
done
expect_status 0 "$tool" --version
grep -Eq '^qgemv [0-9]+\.[0-9]+\.[0-9]+' "$scratch/out" || fail "qgemv --version: $(cat "$scratch/out")"
# no command is a usage error, with the usage on stderr
expect_status 2 "$tool"
grep -q 'usage' "$scratch/err" || fail "qgemv without a command prints no usage"
echo "PASS: help and version"
