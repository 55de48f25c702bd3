/*
 * The backend interface: what the core asks of a device. Shared by the core
 * and every backend, built in or loaded as a module, so it is plain C that
 * also compiles as C++. Bump QG_BACKEND_ABI on any change to this file.
 *
 * The core validates every argument once; a backend trusts what reaches it.
 * Backends never call back into the public API. A backend reports the detail
 * of a failure through its own thread-local message (error_detail), which the
 * core copies into qgemv_last_error().
 */
#ifndef QGEMV_BACKEND_H
#define QGEMV_BACKEND_H

#include "layouts.h"
#include "qgemv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QG_BACKEND_ABI 3u

/*
 * A device module is a shared object qgemv-NAME.so that exports one symbol,
 * the same in every ABI:
 *   const void *qgemv_module_entry(unsigned *abi);
 * It stores the module's ABI number in *abi and returns its qg_module. The
 * core reads nothing behind the pointer until that number equals
 * QG_BACKEND_ABI, so a module of another release (whose qg_module may be
 * laid out differently) is refused, never misread. The number travels
 * through the argument rather than in the struct because modules of ABI 1
 * already take that argument: calling their entry with none would make
 * them write through a stray pointer.
 */
#define QG_MODULE_ENTRY "qgemv_module_entry"
typedef const void *(*qg_module_entry_fn)(unsigned *abi);

struct qg_backend;

/* What a module's entry returns (ABI 2 and later). The backend's name is
 * backend->name, which must be the NAME of the module's file. */
typedef struct qg_module {
  const struct qg_backend *backend; /* its abi must equal QG_BACKEND_ABI too */
  /* "auto" opens, of the modules that see a device, the one with the
   * highest priority (ties: the first found). 0 or less: never chosen by
   * auto, only by name. CUDA uses 100. */
  int auto_priority;
} qg_module;

/* One matvec, already validated: y[m, n] = norm(x)[m, k] . W^T. */
typedef struct qg_matvec_args {
  const void *layout;     /* what weight_upload returned */
  qg_layout_id layout_id; /* the weight's (format, group) */
  int64_t n, k, m;
  const void *x;          /* backend memory, [m, k] of x_dtype */
  qgemv_dtype x_dtype;
  void *y;                /* backend memory, [m, n] of y_dtype */
  qgemv_dtype y_dtype;
  const void *gamma;      /* backend memory, [k] of gamma_dtype; NULL: no norm */
  qgemv_dtype gamma_dtype;
  float eps;
} qg_matvec_args;

typedef struct qg_backend {
  unsigned abi;
  const char *name;
  /* Thread-local message describing this backend's last failure. */
  const char *(*error_detail)(void);
  /* Devices usable here; 0 with error_detail saying why (no driver, ...). */
  int (*device_count)(void);
  /* Build facts (compiled architectures or ISA levels), for qgemv info. */
  const char *(*build_info)(void);

  /* device < 0: the backend chooses (e.g. nearest the caller's CPUs). */
  qgemv_status (*open)(int device, void **state, int *device_opened);
  void (*close)(void *state);
  qgemv_status (*device_info)(void *state, qgemv_device_info *info);
  qgemv_status (*set_stream)(void *state, void *native_stream);
  qgemv_status (*sync)(void *state);

  qgemv_status (*alloc)(void *state, size_t bytes, void **ptr);
  void (*free)(void *state, void *ptr);
  /* Synchronous with respect to queued work on the context. */
  qgemv_status (*copy_in)(void *state, void *dst, const void *host_src, size_t bytes);
  qgemv_status (*copy_out)(void *state, void *host_dst, const void *src, size_t bytes);

  /* desc is validated (shapes and finite scales; group set, NF4 64) and
   * is of layout id. A backend with no kernels for a layout refuses it
   * with UNSUPPORTED. max_m: the most activation rows the caller will
   * pass (0: unknown); a backend may pick a resident form for it, and
   * must stay correct for any m. */
  qgemv_status (*weight_upload)(void *state, const qgemv_weight_desc *desc, qg_layout_id id, int64_t max_m,
                                void **layout, size_t *resident_bytes);
  void (*weight_free)(void *state, void *layout);
  /* Optional (NULL: one form, "packed"): the name of the resident form
   * weight_upload chose (static). */
  const char *(*weight_form)(void *state, const void *layout);

  qgemv_status (*matvec)(void *state, const qg_matvec_args *args);

  /* Streaming read bandwidth of the device over a buffer of `bytes`
   * (far above the last-level cache), for the benchmark's roofline. */
  qgemv_status (*read_bandwidth)(void *state, size_t bytes, double *gbs);
  /* Optional (NULL: none here): median seconds of the vendor library's
   * dense bf16 GEMV y[m,n] = x[m,k] . W[n,k]^T (CUDA: cuBLAS, loaded at run
   * time), rotating over `copies` weight copies, for the benchmark's
   * baseline. UNSUPPORTED with a reason when the library is absent. */
  qgemv_status (*dense_bf16_time)(void *state, int64_t n, int64_t k, int64_t m, int copies, double min_time,
                                  double *seconds);
  /* The name of that library ("cuBLAS"), for the benchmark's tables; NULL
   * when dense_bf16_time is NULL. */
  const char *dense_library;
} qg_backend;

#ifdef __cplusplus
}
#endif
#endif
