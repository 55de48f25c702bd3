# libFuzzer targets: make fuzz (needs clang).
