/* Software prefetch of the weight stream, for the x86 kernels that stream
 * rows in groups (rows16.h's AVX-512 ones, q2_avx2.c): this many bytes
 * ahead of the block being computed. The kernels spend enough time per
 * block that the hardware prefetcher falls behind; 4 KiB ahead made Q2_0
 * 20% and NF4 5-15% faster at 28672 x 8192 on 2 Zen 4 cores (1, 2 and 4
 * KiB measured, bench/NOTES-cpu.md; 8 KiB on Zen 5 was within that VM's
 * noise, v17). -DQG_PREFETCH_AHEAD=N builds another distance to measure.
 * A prefetch past the end does not fault. x86-64 only (SSE's prefetch,
 * in every x86-64 CPU). */
#ifndef QG_PREFETCH_H
#define QG_PREFETCH_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#ifndef QG_PREFETCH_AHEAD
#define QG_PREFETCH_AHEAD 4096
#endif
/* -DQG_PREFETCH_HINT=_MM_HINT_T1 (or T2, NTA) builds another target level
 * to measure (bench/NOTES-cpu.md v35). */
#ifndef QG_PREFETCH_HINT
#define QG_PREFETCH_HINT _MM_HINT_T0
#endif

/* Prefetches the bytes [p + QG_PREFETCH_AHEAD, + bytes). */
static inline __attribute__((always_inline)) void qg_prefetch_ahead(const uint8_t *p, size_t bytes) {
  for (size_t o = 0; o < bytes; o += 64) _mm_prefetch((const char *)p + QG_PREFETCH_AHEAD + o, QG_PREFETCH_HINT);
}

#endif
