#!/bin/bash
# v29: Q2_0's further terms with one digit (avx2 level), old against new.
# OLD, NEW: build directories (CPU only) of 0ae572f and of the change.
exec "$(dirname "$0")/cpu-dev-ab.sh" cpu-dev-q2-extras "${OLD:-/tmp/bold}" old "${NEW:-/tmp/bnew}" new \
  --shape 28672x8192 --shape 8192x28672 --format q2_0,q2_0g64 --dtype f32,bf16 --m 1,8
