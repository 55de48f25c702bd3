#!/bin/sh
# Stands in for the Check suites when configure did not find Check.
echo "the test suites need the Check library: install it (Debian: apt-get install check) and re-run ./configure" >&2
exit 1
