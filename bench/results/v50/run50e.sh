#!/bin/bash
# v50, call 5 (bench/NOTES.md v50): run50d.sh again on the fixed module
# (call 4's kB2 kernels were null), its results in r50e, the suite given
# 150 s. Packed beside run50d.sh and what it needs. There, after `source
# .gpu/pack/env.sh`, OUT set: `LEFT=420 timeout 440 bash .gpu/pack/bin/run50e.sh`.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=r50e TEST_TIMEOUT=150 exec bash "$here/run50d.sh"
