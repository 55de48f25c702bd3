/* The CPU backend's internals: weight layout, ISA levels, kernel table. */
#ifndef QG_CPU_H
#define QG_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../core/backend.h"
#include "../core/convert.h"
#include "../core/layouts.h"
#include "cpu_xfix.h"

/* Resident weight: the packed format's bytes, either as uploaded or with
 * rows interleaved in groups for the level's kernel (cpu_interleave.h;
 * then the scales sit in data and scales is NULL). Resident bytes are the
 * packed size (1.0x) either way. */
typedef struct qg_cpu_weight {
  qgemv_weight_desc desc; /* points at data/scales below */
  qg_layout_id id;
  void *data;
  float *scales;
  size_t bytes;
} qg_cpu_weight;

/* One matvec as the kernels see it: activations already normalized. */
typedef struct qg_cpu_job {
  const qg_cpu_weight *w;
  int64_t m;
  const float *xn;  /* [m, k] f32 in the level's x order (SIMD levels) */
  const double *xd; /* [m, k] double, natural order (ref level) */
  const qg_xfix_row *xq; /* [m] x in block fixed point, for kernels with xfix */
  void *y;          /* [m, n] */
  qgemv_dtype y_dtype;
} qg_cpu_job;

/* Computes output rows [row0, row1) for all m activation rows. The order of
 * arithmetic for one output element must not depend on m, row0 or row1, so
 * that results are bit-identical for any batch and thread count. */
typedef void (*qg_cpu_rows_fn)(const qg_cpu_job *job, int64_t row0, int64_t row1);

/* Largest period of an x order (at most the widest block). */
#define QG_CPU_XORDER_MAX QG_BLOCK_MAX

/* Where a level wants the activations: element j of x goes to position
 * (j - j % period) + pos[j % period] of the workspace row. A SIMD decoder
 * yields weights in whatever lane order is cheapest for it (low nibbles
 * then high nibbles, one 2-bit field of every byte per vector, ...); moving
 * x once per call into that order costs O(m k) and saves a shuffle per
 * weight vector, O(n k). The period divides the format's block. */
typedef struct qg_cpu_xorder {
  int period;
  uint8_t pos[QG_CPU_XORDER_MAX];
} qg_cpu_xorder;

/* How a level computes one layout. */
typedef struct qg_cpu_kernel {
  qg_cpu_rows_fn rows; /* NULL: none at this level (the scalar level's runs) */
  /* 0: the resident weight is the packed format as uploaded; else its rows
   * are interleaved in groups of this many (cpu_interleave.h), and the
   * backend hands the kernel whole groups (the last one may be narrower). */
  int group_rows;
  /* Non-NULL: the kernel takes x as block fixed point (cpu_xfix.h, job.xq),
   * made with this term function, besides the f32 x (job.xn). */
  qg_xfix_term_fn xfix;
  /* Non-NULL: calls with m < below_m run this kernel instead, which must
   * give the same bits and take the same resident weight (avx512amx's Q2_0
   * below QG_AMX_MIN_M: avx512vnni's kernel, activation digits and all). */
  const struct qg_cpu_kernel *below;
  int below_m;
} qg_cpu_kernel;

/* The fewest activation rows for which avx512amx's Q2_0 takes AMX tiles;
 * below it the level runs avx512vnni's kernel. Timed on the GPU machine's
 * host (bench/NOTES-cpu.md v34): the tiles 1.0-1.5x faster at m = 8 on 4 to
 * 16 threads and slower at m = 1, VNNI faster at m <= 4 (q2-amx-hot: planes 0.40-0.77
 * of VNNI's speed at m = 4, 1.07-1.37x at m = 8). */
#ifndef QG_AMX_MIN_M
#define QG_AMX_MIN_M 8
#endif

typedef struct qg_cpu_level {
  const char *name;        /* ref, scalar, avx2, avx512, avx512vnni, avx512amx, neon, neondot */
  bool wants_double;       /* the ref level works on xd, the others on xn */
  bool (*available)(void); /* CPU and OS support it; NULL: not built for
                              this architecture */
  /* Run when a context takes the level; NULL, or what keeps it from
   * running (avx512amx: the OS's permission for the tile state, asked for
   * only here, since it enlarges every signal frame of the process). */
  const char *(*prepare)(void);
  /* The kernels by layout. rows NULL: none at this level, the scalar
   * level's runs instead (so a new layout needs a scalar kernel first; SIMD
   * kernels are a speed-up, not a requirement). */
  qg_cpu_kernel kernels[QG_LAYOUT_COUNT];
  /* The x order of this level's kernel for a layout; NULL: natural order. */
  void (*x_order)(qg_layout_id id, qg_cpu_xorder *out);
  /* Reads `bytes` (a multiple of 256, 64-byte aligned) with the level's
   * widest loads and folds them into a value the caller must use: the
   * streaming read the bandwidth probe times, as fast as this level's own
   * kernels can read. NULL: the portable loop in cpu_backend.c. */
  uint64_t (*read_stream)(const void *buf, size_t bytes);
  /* The same bytes as two streams, the halves of the buffer read in
   * lockstep (the kernels read several rows at once); the probe takes the
   * faster of this and read_stream. NULL: read_stream alone. */
  uint64_t (*read_stream2)(const void *buf, size_t bytes);
} qg_cpu_level;

/* Every level a user may name, from the oracle to the fastest; those of
 * other architectures are not built (available NULL). */
extern const qg_cpu_level *const qg_cpu_levels[];
extern const int qg_cpu_level_count;
extern const qg_cpu_level qg_cpu_level_scalar; /* has a kernel for every layout */
bool qg_cpu_level_built(const qg_cpu_level *l);
bool qg_cpu_level_usable(const qg_cpu_level *l); /* built, and this CPU and OS run it */
/* The best usable level: what a context gets without QGEMV_CPU_ISA. */
const qg_cpu_level *qg_cpu_default_level(void);

/* The level named by $QGEMV_CPU_ISA, else the best available. */
qgemv_status qg_cpu_pick_level(const qg_cpu_level **out);

/* What the CPU and OS support (cpu_detect.c): cpuid + xgetbv on x86-64,
 * the auxiliary vector's hwcaps on AArch64; false elsewhere. */
bool qg_cpu_has_avx2(void);   /* AVX2, FMA, F16C, YMM state saved by the OS */
bool qg_cpu_has_avx512(void); /* AVX-512 F/BW/VL, ZMM and opmask state saved */
bool qg_cpu_has_avx512vnni(void); /* and AVX-512 VNNI */
/* and AMX-TILE, AMX-INT8, the tile state saved and offered by the OS */
bool qg_cpu_has_avx512amx(void);
/* Asks Linux for this process's permission to use the tile state (once;
 * every later call returns the first answer): NULL when granted, else why
 * not. */
const char *qg_cpu_amx_request(void);
bool qg_cpu_has_neon(void);   /* AdvSIMD and FP */
bool qg_cpu_has_neondot(void); /* and the dot-product instructions */

/* The kernels whose vector lanes are weight rows, in groups of 16
 * (cpu_interleave.h): NF4 in f32 with AVX-512 (nf4_avx512.c), Q2_0 by
 * integer dot products with AVX-512 VNNI and the AVX-512 term of the
 * activation quantizer (q2_vnni.c). x86-64 only. */
void qg_nf4_avx512_rows(const qg_cpu_job *job, int64_t row0, int64_t row1);
void qg_q2_vnni_rows_g64(const qg_cpu_job *job, int64_t row0, int64_t row1);
void qg_q2_vnni_rows_g128(const qg_cpu_job *job, int64_t row0, int64_t row1);
double qg_q2_vnni_xfix(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t);
/* Q2_0 by AMX tile products (q2_amx.c) and its quantizer term, the same
 * digits plane-major (q2_vnni.c). x86-64 only. */
void qg_q2_amx_rows_g64(const qg_cpu_job *job, int64_t row0, int64_t row1);
void qg_q2_amx_rows_g128(const qg_cpu_job *job, int64_t row0, int64_t row1);
double qg_q2_amx_xfix(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t);
/* NF4 in f32 with AVX2 + FMA, the packed format as uploaded (nf4_avx2.c);
 * x86-64 only. */
void qg_nf4_avx2_rows(const qg_cpu_job *job, int64_t row0, int64_t row1);
/* Q2_0 by integer dot products with AVX2 vpmaddubsw, rows in groups of 16
 * (q2_avx2.c); x86-64 only. */
void qg_q2_avx2_rows_g64(const qg_cpu_job *job, int64_t row0, int64_t row1);
void qg_q2_avx2_rows_g128(const qg_cpu_job *job, int64_t row0, int64_t row1);
/* Its term of the activation quantizer (xfix_avx2.c). */
double qg_q2_avx2_xfix(const float *x, float *res, int g, int bits, int8_t *out, qg_xfix_term *t);
/* Q2_0 by integer dot products with SDOT, rows in groups of 4 (q2_sdot.c).
 * AArch64 only. */
void qg_q2_sdot_rows_g64(const qg_cpu_job *job, int64_t row0, int64_t row1);
void qg_q2_sdot_rows_g128(const qg_cpu_job *job, int64_t row0, int64_t row1);

/* Fills out for a period of `vecs` vectors of `lanes` lanes in which lane i
 * of vector q holds element i * vecs + q: a [lanes][vecs] -> [vecs][lanes]
 * transpose, the order a decoder makes when it splits every byte into
 * fields and emits one field of each byte per vector. */
void qg_cpu_xorder_transpose(int lanes, int vecs, qg_cpu_xorder *out);

/* x[m, k] -> f32 workspace in the given order (NULL: natural), RMSNorm
 * applied when a->gamma is set (cpu_normalize.c). */
void qg_cpu_normalize(const qg_matvec_args *a, const qg_cpu_xorder *order, float *xn);

/* The lanes of a64 summed in f64 in order, rounded once to f32: the last
 * step of every f32 kernel's output element (DESIGN.md 5.1). */
static inline float qg_sum_f64(const double *a64, int lanes) {
  double s = a64[0];
  for (int l = 1; l < lanes; l++) s += a64[l];
  return (float)s;
}

/* Byte p of NF4 table value v at planes[p][v]: the tables of the byte
 * lookups (vpshufb, tbl) that reassemble exact f32 values. */
static inline void qg_nf4_byte_planes(uint8_t planes[4][16]) {
  for (int v = 0; v < 16; v++) {
    uint32_t bits;
    memcpy(&bits, &qg_nf4_lut[v], sizeof bits);
    for (int p = 0; p < 4; p++) planes[p][v] = (uint8_t)(bits >> (8 * p));
  }
}

/* Writes y[r, i] in the job's dtype (bf16: round to nearest even). */
static inline void qg_cpu_store(const qg_cpu_job *job, int64_t r, int64_t i, float v) {
  size_t at = (size_t)r * (size_t)job->w->desc.n + (size_t)i;
  if (job->y_dtype == QGEMV_F32)
    ((float *)job->y)[at] = v;
  else
    ((uint16_t *)job->y)[at] = qg_f32_to_bf16(v);
}

/* The backend's own thread-local failure message (error_detail). */
qgemv_status qg_cpu_fail(qgemv_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
