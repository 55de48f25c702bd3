# Check suites of this area (included from tests/local.mk).
