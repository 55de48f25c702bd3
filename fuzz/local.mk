# libFuzzer targets (issue 6). `make fuzz` builds them with clang, ASan and
# UBSan, compiling the library's own source lists (libqgemv_la_SOURCES and
# the topology helper's, so new files are picked up) once into fuzz/obj/
# and linking each target against it, without OpenMP (its pragmas are
# ignored: one thread is what a fuzzer wants); then runs each for
# FUZZ_SECONDS over its seed corpus fuzz/corpus/<target> (side by side with
# -j). New inputs go to fuzz/work/<target>, crashes to fuzz/artifacts/. Not
# part of `make check`.
#   make -j2 fuzz FUZZ_SECONDS=600
#   fuzz/fuzz_weights -runs=10000000 -max_len=4096 fuzz/work/fuzz_weights
FUZZ_CC = clang
FUZZ_SECONDS = 60
FUZZ_MAX_LEN = 4096
FUZZ_ARGS =
# Coverage without comparison tracing: tracing every compare in the kernels'
# inner loops made the targets 5x slower; the seed corpus already holds the
# magic values (groups, formats, spec names) that tracing would find.
FUZZ_FLAGS = -std=gnu11 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-sanitize-coverage=trace-cmp -Wall -Wextra -Wno-unknown-pragmas
FUZZ_TARGETS = fuzz/fuzz_weights fuzz/fuzz_formats fuzz/fuzz_spec fuzz/fuzz_model

fuzz_lib_all = $(libqgemv_la_SOURCES) $(src_topology_libqgtopology_la_SOURCES)
fuzz_lib_sources = $(filter %.c,$(fuzz_lib_all))
fuzz_lib_headers = $(filter %.h,$(fuzz_lib_all)) include/qgemv.h
fuzz_lib_objects = $(fuzz_lib_sources:%.c=fuzz/obj/%.o)
# The CPU kernels are always_inline templates (kernel_tmpl.h): UBSan's
# pointer-overflow check on their unrolled address arithmetic takes clang
# over ten minutes and a gigabyte per file; ASan still checks every access.
$(filter fuzz/obj/src/backend-cpu/level_%,$(fuzz_lib_objects)): fuzz_file_flags = -fno-sanitize=pointer-overflow

EXTRA_DIST += fuzz/fuzz_common.h fuzz/fuzz_weights.c fuzz/fuzz_formats.c fuzz/fuzz_spec.c fuzz/fuzz_model.c \
	fuzz/gen_corpus.py fuzz/corpus
CLEANFILES += $(FUZZ_TARGETS) $(fuzz_lib_objects)

$(fuzz_lib_objects): fuzz/obj/%.o: $(srcdir)/%.c $(fuzz_lib_headers:%=$(srcdir)/%)
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_FLAGS) $(fuzz_file_flags) $(libqgemv_la_CPPFLAGS) $(HWLOC_CFLAGS) -c -o $@ $<

$(FUZZ_TARGETS): fuzz/%: $(srcdir)/fuzz/%.c $(srcdir)/fuzz/fuzz_common.h $(fuzz_lib_objects)
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_FLAGS) $(libqgemv_la_CPPFLAGS) $(HWLOC_CFLAGS) -o $@ \
	  $(srcdir)/fuzz/$*.c $(fuzz_lib_objects) $(HWLOC_LIBS) $(JANSSON_LIBS) -ldl -lm -pthread

fuzz-build: $(FUZZ_TARGETS)

# One rule per target, so that `make -jN fuzz` runs them side by side; each
# target's output goes to fuzz/work/<target>.log, whose summary is printed.
fuzz: $(FUZZ_TARGETS:fuzz/%=fuzz-run-%)

fuzz-run-%: fuzz/%
	@$(MKDIR_P) fuzz/work/$* fuzz/artifacts
	@echo "fuzz: $* for $(FUZZ_SECONDS) s (log: fuzz/work/$*.log)"
	@fuzz/$* -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) -print_final_stats=1 \
	  -artifact_prefix=fuzz/artifacts/$*- $(FUZZ_ARGS) fuzz/work/$* $(srcdir)/fuzz/corpus/$* $(fuzz_more_seeds) \
	  >fuzz/work/$*.log 2>&1; rc=$$?; \
	  grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec)' fuzz/work/$*.log | sed 's/^/fuzz: $*: /'; \
	  if [ $$rc -ne 0 ]; then tail -n 60 fuzz/work/$*.log; echo "fuzz: $* failed (exit $$rc)"; exit 1; fi

# Model files are larger than the other targets' inputs; the GGUF fixture
# in tests/data is a seed too (its first FUZZ_MAX_LEN bytes).
fuzz-run-fuzz_model: FUZZ_MAX_LEN = 65536
fuzz-run-fuzz_model: fuzz_more_seeds = $(srcdir)/tests/data

fuzz-clean:
	rm -rf fuzz/work fuzz/artifacts fuzz/obj $(FUZZ_TARGETS)

.PHONY: fuzz fuzz-build fuzz-clean
