# SIMD levels of the CPU backend (added to libqgemv_la_SOURCES).
