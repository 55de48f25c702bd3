/*
 * qgemv: quantized matrix-vector kernels for LLM decode, with pluggable
 * devices (a built-in OpenMP/SIMD CPU backend and a run-time loaded CUDA
 * module).
 *
 * Conventions
 * - Every call that can fail returns a qgemv_status; none aborts or exits.
 *   After a failure, qgemv_last_error() returns a message that says what was
 *   wrong and what to change.
 * - Handles are opaque. A weight or tensor belongs to the context that made
 *   it and is rejected by any other context.
 * - Shapes: a weight is W[n, k] (n outputs, k inputs); activations are
 *   x[m, k], outputs y[m, n], both row-major.
 *
 * Thread safety
 * - The library is reentrant: all state lives in the objects you pass.
 *   Distinct contexts (and their weights and tensors) may be used from
 *   different threads at the same time.
 * - One context, and the objects made from it, must not be used by two
 *   threads at once; serialise such use yourself.
 * - qgemv_last_error() is per thread. Host-side helpers (quantize,
 *   dequantize, conversions, sizes) are safe from any thread at any time.
 * - Backend discovery (the first qgemv_open / qgemv_backend_probe) is
 *   safe to race: the module loader runs once.
 */
#ifndef QGEMV_H
#define QGEMV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define QGEMV_API __attribute__((visibility("default")))
#else
#define QGEMV_API
#endif

#define QGEMV_VERSION_MAJOR 0
#define QGEMV_VERSION_MINOR 1
#define QGEMV_VERSION_PATCH 0
#define QGEMV_VERSION_STRING "0.1.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH */
#define QGEMV_VERSION_NUMBER \
  (QGEMV_VERSION_MAJOR * 10000 + QGEMV_VERSION_MINOR * 100 + QGEMV_VERSION_PATCH)

/* Version of the library actually loaded, as "MAJOR.MINOR.PATCH". */
QGEMV_API const char *qgemv_version(void);
/* Same, as QGEMV_VERSION_NUMBER encodes it. */
QGEMV_API int qgemv_version_number(void);
/* One line describing how this build was configured (backends, CPU ISA
 * levels and CUDA architectures compiled in). */
QGEMV_API const char *qgemv_build_config(void);

/* ---- status ------------------------------------------------------------ */

typedef enum qgemv_status {
  QGEMV_OK = 0,
  QGEMV_ERR_INVALID_ARG = -1, /* a bad argument: see qgemv_last_error() */
  QGEMV_ERR_UNSUPPORTED = -2, /* valid, but this backend/build cannot do it */
  QGEMV_ERR_NO_BACKEND = -3,  /* backend unknown, module missing or unloadable */
  QGEMV_ERR_NO_DEVICE = -4,   /* backend present but no usable device */
  QGEMV_ERR_NO_MEMORY = -5,   /* host or device allocation failed */
  QGEMV_ERR_DEVICE = -6,      /* the device reported an error */
  QGEMV_ERR_BAD_DATA = -7,    /* non-finite scale or weight */
  QGEMV_ERR_ABI = -8          /* a module built for another ABI */
} qgemv_status;

/* Static name of a status ("QGEMV_ERR_INVALID_ARG"); never NULL. */
QGEMV_API const char *qgemv_status_str(qgemv_status s);
/* Detail of the calling thread's last failed call; "" if none yet. It is
 * replaced only by the next failure on the same thread. */
QGEMV_API const char *qgemv_last_error(void);

/* ---- types ------------------------------------------------------------- */

typedef enum qgemv_dtype { QGEMV_F32 = 0, QGEMV_BF16 = 1 } qgemv_dtype;
typedef enum qgemv_format { QGEMV_NF4 = 0, QGEMV_Q2_0 = 1 } qgemv_format;

#define QGEMV_NF4_BLOCK 64

typedef struct qgemv_ctx qgemv_ctx;       /* one backend, one device, one stream */
typedef struct qgemv_weight qgemv_weight; /* a packed matrix resident on a ctx */
typedef struct qgemv_tensor qgemv_tensor; /* [rows, cols] activations / outputs */

/* ---- contexts ---------------------------------------------------------- */

/*
 * spec: NULL means $QGEMV_BACKEND, and "auto" when that is unset or empty.
 * Grammar: "auto" | NAME | NAME ":" N, NAME "cpu" or a device module's name
 * (qgemv_backend_name lists them; "cuda" for qgemv-cuda.so). "auto" takes,
 * of the modules that load and see a device, the one of highest priority
 * (CUDA where it sees a GPU), else the CPU, silently. A named backend that
 * cannot be used is an error saying why.
 * Without ":N", $QGEMV_DEVICE picks the device; without that, CUDA takes the
 * GPU nearest the calling thread's CPU binding.
 */
QGEMV_API qgemv_status qgemv_open(const char *spec, qgemv_ctx **out);
/* Waits for outstanding work and frees the context. Weights and tensors
 * still alive are freed with it; their handles become invalid. NULL: no-op. */
QGEMV_API void qgemv_close(qgemv_ctx *ctx);

/* Name of the backend ("cpu", "cuda") and the device index of a context. */
QGEMV_API const char *qgemv_ctx_backend(const qgemv_ctx *ctx);
QGEMV_API int qgemv_ctx_device(const qgemv_ctx *ctx);

/* Run subsequent operations on the caller's own stream (CUDA: a
 * cudaStream_t; NULL returns to the context's own stream). The CPU backend
 * accepts NULL only. */
QGEMV_API qgemv_status qgemv_set_stream(qgemv_ctx *ctx, void *native_stream);

/* Waits for all work queued on the context; reports deferred device errors. */
QGEMV_API qgemv_status qgemv_sync(qgemv_ctx *ctx);

/* ---- backends and devices (for tools and diagnostics) ------------------ */

/* Names of the known backends, index 0 .. qgemv_backend_count() - 1: "cpu",
 * then the device modules found in QGEMV_PLUGIN_PATH and the install's
 * module directory (also those that were refused: the probe says why). */
QGEMV_API int qgemv_backend_count(void);
QGEMV_API const char *qgemv_backend_name(int index);
/* Loads the backend if needed and counts its devices. Returns QGEMV_OK and
 * sets *devices (> 0), or an error whose message says why the backend is not
 * usable here (module not found, wrong ABI, no driver, no device). */
QGEMV_API qgemv_status qgemv_backend_probe(const char *name, int *devices);

typedef struct qgemv_device_info {
  char backend[16];         /* "cpu", "cuda" */
  int index;                /* device index within the backend */
  char name[128];           /* GPU or CPU model name */
  int compute_major;        /* CUDA compute capability; 0 on the CPU */
  int compute_minor;
  int units;                /* streaming multiprocessors, or CPU cores used */
  int threads;              /* CPU threads used; 0 on a GPU */
  uint64_t memory_bytes;    /* device memory, or host memory */
  double peak_bandwidth_gbs;/* theoretical memory bandwidth; 0 if unknown */
  uint64_t llc_bytes;       /* last-level cache (GPU L2, CPU L3) */
  char isa[16];             /* CPU ISA level in use; "" on a GPU */
  char locality[128];       /* GPU: CPUs and NUMA node near it; CPU: topology */
} qgemv_device_info;

QGEMV_API qgemv_status qgemv_ctx_info(const qgemv_ctx *ctx, qgemv_device_info *info);

/*
 * The CPU backend's ISA levels, the values of QGEMV_CPU_ISA: index 0 ..
 * qgemv_cpu_level_count() - 1, from the oracle ("ref") to the fastest, the
 * same list on every architecture. Querying runs no kernel (cpuid or the
 * auxiliary vector only).
 */
typedef struct qgemv_cpu_level_info {
  const char *name; /* "ref", "scalar", "avx2", "avx512", "avx512vnni", "avx512amx", "neon", "neondot" (static) */
  int built;        /* compiled into this library (the level is of this architecture) */
  int supported;    /* built, and this CPU and OS run it: QGEMV_CPU_ISA may name it */
  int is_default;   /* the level a CPU context takes when QGEMV_CPU_ISA is unset */
} qgemv_cpu_level_info;

QGEMV_API int qgemv_cpu_level_count(void);
/* QGEMV_ERR_INVALID_ARG when index is out of range or info is NULL. */
QGEMV_API qgemv_status qgemv_cpu_level_get(int index, qgemv_cpu_level_info *info);

/* Measures the device's streaming read bandwidth (GB/s, 1e9 bytes/s) over a
 * buffer of `bytes` (0: a default far above the last-level cache), as the
 * roofline for benchmarks. Allocates and frees its buffer; slow (~1 s). */
QGEMV_API qgemv_status qgemv_measure_read_bandwidth(qgemv_ctx *ctx, size_t bytes, double *gbs);

/* Times the backend vendor library's dense bf16 GEMV of the same shape
 * (CUDA: cuBLAS, loaded at run time), rotating over `copies` weight copies
 * for at least min_time seconds; *seconds is the median per call. Returns
 * QGEMV_ERR_UNSUPPORTED, with the reason, where no such library is present
 * (always on the CPU backend: the qgemv tool measures OpenBLAS itself). */
QGEMV_API qgemv_status qgemv_measure_dense_bf16(qgemv_ctx *ctx, int64_t n, int64_t k, int64_t m, int copies,
                                                double min_time, double *seconds);
/* The name of the library qgemv_measure_dense_bf16 times on this context's
 * backend ("cuBLAS"), for labelling results; NULL, with the reason, where
 * the backend has none. */
QGEMV_API const char *qgemv_ctx_dense_library(const qgemv_ctx *ctx);

/* ---- weights ----------------------------------------------------------- */

/*
 * Formats (byte-exact; see README / DESIGN):
 * NF4  group 64 (0 also means 64): data n*k/2 bytes, row-major, element 2j in
 *      the LOW nibble of byte j; scales n*(k/64) f32.
 * Q2_0 group 64 or 128: data n*(k/g) blocks of [fp16 d][g/4 bytes codes];
 *      value (code - 1) * d; scales NULL.
 */
/*
 * The formats by name. Each entry is a qgemv_format with one group, the pair
 * a weight descriptor and qgemv_quantize take: index 0 .. qgemv_format_count()
 * - 1, in a fixed order (new formats are appended). Names are stable and
 * are what a user types:
 *   "nf4"      NF4, block 64
 *   "q2_0g64"  Q2_0, group 64 (mainline ggml)
 *   "q2_0"     Q2_0, group 128 (the PrismML/Bonsai files)
 * The structs these calls fill grow only with a new major version.
 */
typedef struct qgemv_format_info {
  const char *name;    /* "nf4", "q2_0g64", "q2_0" (static) */
  const char *label;   /* for tables and people: "NF4", "Q2_0/g64", "Q2_0/g128" */
  qgemv_format format; /* with group: what qgemv_weight_desc and qgemv_quantize take */
  int32_t group;       /* weights per block (one scale each) */
  int32_t block_bytes; /* bytes of data per block, an inline scale included */
  int32_t scale_bytes; /* bytes of the scales array per block: 4 (one f32), or 0
                          (the scale is inline: scales NULL) */
} qgemv_format_info;

QGEMV_API int qgemv_format_count(void);
/* QGEMV_ERR_INVALID_ARG when index is out of range or info is NULL. */
QGEMV_API qgemv_status qgemv_format_get(int index, qgemv_format_info *info);
/* The format called `name` (exact match); QGEMV_ERR_INVALID_ARG naming the
 * known formats when there is none. */
QGEMV_API qgemv_status qgemv_format_lookup(const char *name, qgemv_format_info *info);

typedef struct qgemv_weight_desc {
  qgemv_format format;
  int64_t n, k;        /* n outputs, k inputs */
  int32_t group;       /* NF4: 64 (or 0); Q2_0: 64 or 128 */
  const void *data;    /* host memory */
  const float *scales; /* host memory; NF4 only, NULL for Q2_0 */
} qgemv_weight_desc;

/* Copies the host weight onto the context's device (the backend may repack
 * it) after validating shapes and that every scale is finite. */
QGEMV_API qgemv_status qgemv_weight_upload(qgemv_ctx *ctx, const qgemv_weight_desc *desc,
                                           qgemv_weight **out);
/* Like qgemv_weight_upload, for a weight that qgemv_matvec will use with
 * at most max_m activation rows a call (0: unknown, which is
 * qgemv_weight_upload). The backend may then keep the weight in a form
 * that is faster at that m: the CUDA backend, for max_m = 1 (decode),
 * takes its share kernel for small weights (at most 16 rows an SM, each
 * SM's share in flight at once), its lookup-table kernel for
 * large NF4 ones where it fills the GPU, and for large Q2_0 ones the
 * fused RMSNorm with bf16 x and gamma in two bf16 terms (DESIGN.md
 * section 6). A call with
 * more rows stays correct and bit-identical row by row to m = 1 calls, but
 * may be slower than on a weight uploaded for it. The lookup-table form
 * holds a workspace of its own (the k-split's partial rows: 8 S bytes
 * a row, S <= 64): two matvecs on it must not overlap in time. On one
 * context's stream they never do; after qgemv_set_stream, order the old
 * stream's work before the new stream's, as for any buffer both use. */
QGEMV_API qgemv_status qgemv_weight_upload_for_m(qgemv_ctx *ctx, const qgemv_weight_desc *desc, int64_t max_m,
                                                 qgemv_weight **out);
QGEMV_API void qgemv_weight_free(qgemv_weight *w);
/* The resident form the backend chose (static): CUDA "tiles" (any m),
 * "lut" (the lookup-table kernel, for m = 1) or "share" (the share kernel,
 * for m = 1); CPU "packed" or "interleaved" forms as its kernels read them. NULL (with a message) for a bad weight. */
QGEMV_API const char *qgemv_weight_form(const qgemv_weight *w);
/* Bytes the weight occupies on its device (data and scales as laid out). */
QGEMV_API size_t qgemv_weight_resident_bytes(const qgemv_weight *w);

/* ---- tensors ----------------------------------------------------------- */

QGEMV_API qgemv_status qgemv_tensor_new(qgemv_ctx *ctx, qgemv_dtype dtype, int64_t rows,
                                        int64_t cols, qgemv_tensor **out);
/* Wraps memory the caller owns on the backend's device (CUDA: a device
 * pointer; CPU: host memory aligned to the element size). Not freed by
 * qgemv_tensor_free. */
QGEMV_API qgemv_status qgemv_tensor_wrap(qgemv_ctx *ctx, qgemv_dtype dtype, int64_t rows,
                                         int64_t cols, void *backend_ptr, qgemv_tensor **out);
/* Host <-> tensor copies of the whole tensor: bytes must equal
 * rows * cols * element size. They wait for queued work (synchronous). */
QGEMV_API qgemv_status qgemv_tensor_write(qgemv_tensor *t, const void *host, size_t bytes);
QGEMV_API qgemv_status qgemv_tensor_read(const qgemv_tensor *t, void *host, size_t bytes);
/* The tensor's memory on its device (for passing to the caller's kernels). */
QGEMV_API qgemv_status qgemv_tensor_ptr(const qgemv_tensor *t, void **backend_ptr);
QGEMV_API void qgemv_tensor_free(qgemv_tensor *t);

/* ---- the operation ----------------------------------------------------- */

typedef struct qgemv_rmsnorm {
  const qgemv_tensor *gamma; /* [1, k], f32 or bf16 */
  float eps;                 /* > 0 and finite */
} qgemv_rmsnorm;

/*
 * y[m, n] = norm(x)[m, k] . W[n, k]^T, with norm the identity when norm is
 * NULL, else per row x * 1/sqrt(mean(x^2) + eps) * gamma.
 * x and y are f32 or bf16 independently; m = x rows = y rows >= 1.
 * Asynchronous on the context's stream; allocates nothing.
 */
QGEMV_API qgemv_status qgemv_matvec(qgemv_ctx *ctx, const qgemv_weight *w,
                                    const qgemv_tensor *x, qgemv_tensor *y,
                                    const qgemv_rmsnorm *norm);

/* ---- host-side formats (no context needed) ----------------------------- */

/* Bytes of `data` for a weight of this shape; 0 (with a message) when the
 * shape is invalid or the size overflows. */
QGEMV_API size_t qgemv_data_bytes(qgemv_format format, int64_t n, int64_t k, int32_t group);
/* Number of f32 scales (NF4: n*k/64; Q2_0: 0). */
QGEMV_API size_t qgemv_scale_count(qgemv_format format, int64_t n, int64_t k, int32_t group);

/* Quantizes w[n, k] (f32, row-major). NF4 writes data and scales; Q2_0
 * writes data and ignores scales (may be NULL). A non-finite weight, or a
 * Q2_0 block whose max |w| (>= 65520) overflows the fp16 scale, is
 * QGEMV_ERR_BAD_DATA naming its row and column, and nothing is written. */
QGEMV_API qgemv_status qgemv_quantize(qgemv_format format, int64_t n, int64_t k, int32_t group,
                                      const float *w, void *data, float *scales);
/* Expands a host weight to f32 w[n, k]: Q2_0 values are exact; an NF4
 * value is the table entry times its scale, rounded once to f32. */
QGEMV_API qgemv_status qgemv_dequantize(const qgemv_weight_desc *desc, float *w);

/* The 16 NormalFloat values, ascending (index 7 is 0). */
QGEMV_API const float *qgemv_nf4_table(void);

/*
 * The oracle: y = norm(x) . W^T computed from the host weight with weights
 * dequantized exactly, products, sums and RMSNorm in double. x is [m, k] of
 * x_dtype in host memory; gamma (NULL: no norm) is [k] of gamma_dtype. y
 * receives [m, n] doubles; bound (may be NULL) receives per element
 * R = sqrt(sum_k (w_ik * xn_k)^2), the scale of the accuracy contract:
 * a backend's y is right when |y - ref| <= 1e-3 R (+ 2^-8 |ref| for bf16 y).
 */
QGEMV_API qgemv_status qgemv_reference_matvec(const qgemv_weight_desc *w, int64_t m,
                                              qgemv_dtype x_dtype, const void *x,
                                              qgemv_dtype gamma_dtype, const void *gamma,
                                              float eps, double *y, double *bound);

/* ---- scalar conversions (round to nearest even; NaN stays NaN) --------- */

QGEMV_API uint16_t qgemv_f32_to_bf16(float f);
QGEMV_API float qgemv_bf16_to_f32(uint16_t h);
QGEMV_API uint16_t qgemv_f32_to_f16(float f);
QGEMV_API float qgemv_f16_to_f32(uint16_t h);

/* ---- model files: GGUF and safetensors (read-only, memory-mapped) ------ */

/*
 * A model file opened read-only: GGUF v2/v3 (llama.cpp, ollama) or
 * safetensors (Hugging Face; plain f32/f16/bf16 tensors and bitsandbytes
 * NF4 weights). The file is memory-mapped; descriptors and tensor bytes
 * point into the mapping (or, for weights that need converting, into
 * buffers the model owns) and stay valid until qgemv_model_close.
 * Every malformed file is an error (QGEMV_ERR_BAD_DATA) saying what is
 * wrong, never a crash. One model must not be used by two threads at once.
 * safetensors needs the build's JSON library (jansson): without it,
 * opening one is QGEMV_ERR_UNSUPPORTED saying so.
 */
typedef struct qgemv_model qgemv_model;

typedef enum qgemv_model_kind { QGEMV_MODEL_GGUF = 0, QGEMV_MODEL_SAFETENSORS = 1 } qgemv_model_kind;

/* Opens a file; its kind is told by its first bytes. */
QGEMV_API qgemv_status qgemv_model_open(const char *path, qgemv_model **out);
/* The same over `size` bytes already in memory, which the caller keeps
 * alive and unchanged until qgemv_model_close. */
QGEMV_API qgemv_status qgemv_model_open_memory(const void *bytes, size_t size, qgemv_model **out);
/* Unmaps the file and frees what the model converted. NULL: no-op. */
QGEMV_API void qgemv_model_close(qgemv_model *m);
QGEMV_API qgemv_model_kind qgemv_model_file_kind(const qgemv_model *m);

/* What qgemv can do with a tensor. */
typedef enum qgemv_model_use {
  QGEMV_USE_NONE = 0,   /* nothing: `note` says why */
  QGEMV_USE_WEIGHT = 1, /* a qgemv weight: qgemv_model_weight */
  QGEMV_USE_FLOAT = 2,  /* f32/f16/bf16 values: qgemv_model_read_f32 (a 2-D one
                           can be quantized with qgemv_quantize) */
  QGEMV_USE_PART = 3    /* a part of another tensor's weight (bitsandbytes
                           absmax, quant_map, quant_state) */
} qgemv_model_use;

#define QGEMV_MODEL_MAX_DIMS 8

typedef struct qgemv_model_tensor {
  const char *name;                     /* UTF-8, NUL-terminated */
  const char *type_name;                /* "Q2_0", "Q4_0", "F32", "BF16", "U8", "type 99" */
  int32_t ggml_type;                    /* GGUF: the ggml type id; safetensors: -1 */
  int32_t ndims;
  /* Outermost first, as PyTorch and NumPy order them: shape[ndims - 1] is
   * the number of elements per row (k). GGUF lists its dimensions the other
   * way round (ne0 = k); they are reversed here. A bitsandbytes weight shows
   * the original [out, in] shape from its quant_state. */
  int64_t shape[QGEMV_MODEL_MAX_DIMS];
  uint64_t offset;                      /* file offset of the tensor's bytes */
  uint64_t bytes;                       /* byte extent: its size where the layout is one
                                           qgemv reads, else up to the next tensor */
  qgemv_model_use use;
  qgemv_format format;                  /* USE_WEIGHT: NF4 or Q2_0 */
  int32_t group;                        /* USE_WEIGHT: the group; 0 for a Q2_0 tensor whose
                                           extent fits both g64 and g128 (name it) */
  char note[160];                       /* why not usable, or what it is part of */
} qgemv_model_tensor;

QGEMV_API int64_t qgemv_model_tensor_count(const qgemv_model *m);
/* Tensor `index` (0 .. count - 1), in file order. */
QGEMV_API qgemv_status qgemv_model_tensor_info(const qgemv_model *m, int64_t index, qgemv_model_tensor *out);
/* The index of the tensor called `name`, or -1 (with a message). */
QGEMV_API int64_t qgemv_model_find(const qgemv_model *m, const char *name);

/*
 * A ready descriptor for weight `name` (ready for qgemv_weight_upload).
 * GGUF Q2_0 (ggml type 42) points into the mapping with no copy: ggml's
 * blocks are qgemv's Q2_0 bytes. Its group is told from the tensor's byte
 * extent (n*k/64*18 bytes is g64, n*k/128*34 is g128, up to the next
 * tensor or the end of the file); pass group 64 or 128 to name it where
 * both fit, 0 to require that the file tells. A bitsandbytes NF4 weight is
 * converted once into buffers the model owns (nibbles swapped, f32 scales).
 * Any other tensor is QGEMV_ERR_UNSUPPORTED naming its type.
 */
QGEMV_API qgemv_status qgemv_model_weight(qgemv_model *m, const char *name, int32_t group,
                                          qgemv_weight_desc *out);
/* Reads an f32, f16 or bf16 tensor as `count` f32 values (count must be
 * its element count), e.g. a norm weight, or a matrix to quantize. */
QGEMV_API qgemv_status qgemv_model_read_f32(const qgemv_model *m, const char *name, float *out, size_t count);

/* Metadata: GGUF key-value pairs; safetensors "__metadata__" strings. */
typedef enum qgemv_model_value_type {
  QGEMV_VALUE_UINT = 0,  /* u8 .. u64 and bool: `u` */
  QGEMV_VALUE_INT = 1,   /* i8 .. i64: `i` */
  QGEMV_VALUE_FLOAT = 2, /* f32, f64: `f` */
  QGEMV_VALUE_STRING = 3,/* `str`, `len` bytes of UTF-8 plus a NUL */
  QGEMV_VALUE_ARRAY = 4  /* `count` elements of GGUF type `elem_type_name` */
} qgemv_model_value_type;

typedef struct qgemv_model_kv {
  const char *key;
  const char *type_name; /* the file's name for it: "uint32", "string", "array" */
  qgemv_model_value_type type;
  uint64_t u;
  int64_t i;
  double f;
  const char *str;
  size_t len;
  const char *elem_type_name; /* arrays: "string", "float32", "array" */
  uint64_t count;
} qgemv_model_kv;

QGEMV_API int64_t qgemv_model_metadata_count(const qgemv_model *m);
QGEMV_API qgemv_status qgemv_model_metadata(const qgemv_model *m, int64_t index, qgemv_model_kv *out);

#ifdef __cplusplus
}
#endif
#endif /* QGEMV_H */
