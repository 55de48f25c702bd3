#!/bin/sh
# Bad options exit 2 with a message naming the option (and, for a bad
# value, the accepted values), before any measurement starts.
. "${srcdir:-.}/tests/test_tool_lib.sh"

# bad WORD-THE-MESSAGE-MUST-HOLD ARGS...
bad() {
  word=$1
  shift
  expect_status 2 "$tool" "$@"
  grep -q -e "$word" "$scratch/err" || { cat "$scratch/err"; fail "'$*': message does not name '$word'"; }
}

bad "unknown command" nosuchcommand
bad "--bogus" info --bogus
bad "--bogus" verify --bogus
bad "--bogus" bench --bogus
bad "stray" bench stray
bad "--seed" verify --seed 12x
bad "--seed" verify --seed -1
bad "--backend" verify --backend
bad "--json" verify --json
formats=$(format_names | paste -sd, - | sed 's/,/, /g')
case $formats in nf4,*) ;; *) fail "qgemv info lists the formats '$formats'" ;; esac
bad "--format.*$formats or all" bench --format nf5
bad "--format" bench --format nf4,,q2_0
bad "--dtype.*f32 or bf16" bench --dtype f16
bad "--preset.*llama3-8b" bench --preset llama2
bad "--shape.*NxK" bench --shape 4096
bad "--shape" bench --shape 0x4096
bad "--shape" bench --shape 4096x4096x2
bad "--shape" bench --shape " 64x64"
bad "--shape 64x100" bench --shape 64x100
bad "--m" bench --m 0
bad "--m" bench --m 1,x
bad "--m" bench --m 99999
bad "--iters" bench --iters 0
bad "--iters" bench --iters 5s
bad "--min-time" bench --min-time abc
bad "--min-time" bench --min-time -1
bad "--min-time" bench --min-time nan
bad "--working-set" bench --working-set 12Q
bad "--iters and --min-time" bench --iters 3 --min-time 1
bad "--quiet" bench --quiet=yes
bad "--json" bench --json
bad "--csv" bench --csv
echo "PASS: bad options are rejected with status 2"
