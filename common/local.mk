# Random test data shared by the qgemv tool and the Check suites (not part
# of the library): both compile these sources (tools/local.mk,
# tests/local.mk).
common_random_sources = common/random.c common/random.h
