/*===- attnc-c/Runtime.h - C API of the attnc host runtime --------*- C -*-===*\
|*                                                                            *|
|* Part of the attnc project.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The host runtime loads the output of `attnc-compile` (manifest.json plus one
 * cubin per kernel, docs/abi.md), checks a call's arguments against the
 * manifest, and launches the kernel on a CUDA stream, alone or recorded into
 * a CUDA graph. It is a plain C API so that ctypes (python/attnc) and any C or
 * C++ host can use it without MLIR or the CUDA runtime library.
 *
 * Everything up to and including the launch plan (manifest parsing, kernel
 * and parameter queries, argument validation, grid computation, parameter
 * packing) runs on the CPU only: libcuda.so.1 is opened with dlopen at the
 * first call that needs a GPU, so the library loads and these calls work on
 * machines without a driver.
 *
 * Errors: every function that can fail returns an attnc_status; on failure
 * attnc_last_error() returns a message (thread-local, valid until the next
 * attnc call on the same thread) that names what was being done and why it
 * failed. Handles are opaque. A module must outlive the kernels, plans and
 * graphs made from it.
 */

#ifndef ATTNC_C_RUNTIME_H
#define ATTNC_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define ATTNC_API __declspec(dllexport)
#else
#define ATTNC_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Same type as cuda.h's CUstream, without requiring cuda.h. NULL is the
 * legacy default stream. */
struct CUstream_st;
typedef struct CUstream_st *attnc_stream;

typedef enum attnc_status {
  ATTNC_OK = 0,
  /* Misuse of the API: NULL handle, index out of range, bad enum value. */
  ATTNC_ERROR_INVALID_ARGUMENT = 1,
  /* A file could not be read (manifest.json, a cubin). */
  ATTNC_ERROR_IO = 2,
  /* manifest.json is not valid JSON or breaks docs/abi.md. */
  ATTNC_ERROR_MANIFEST = 3,
  /* No kernel (or parameter) of that name. */
  ATTNC_ERROR_NOT_FOUND = 4,
  /* The call's tensors or scalars do not match the kernel's parameters. */
  ATTNC_ERROR_VALIDATION = 5,
  /* The CUDA driver returned an error; the message carries its name. */
  ATTNC_ERROR_CUDA = 6,
  /* libcuda.so.1 could not be opened or lacks an entry point. */
  ATTNC_ERROR_NO_DRIVER = 7,
} attnc_status;

typedef enum attnc_dtype {
  ATTNC_DTYPE_INVALID = 0,
  ATTNC_DTYPE_BF16 = 1,
  ATTNC_DTYPE_F16 = 2,
  ATTNC_DTYPE_F32 = 3,
  ATTNC_DTYPE_F64 = 4,
  ATTNC_DTYPE_I1 = 5, /* stored as one byte per element */
  ATTNC_DTYPE_I8 = 6,
  ATTNC_DTYPE_I32 = 7,
  ATTNC_DTYPE_I64 = 8,
} attnc_dtype;

typedef enum attnc_param_kind {
  ATTNC_PARAM_TENSOR = 0,
  ATTNC_PARAM_SIZE = 1,
  ATTNC_PARAM_STRIDE = 2,
  ATTNC_PARAM_SCALAR = 3,
} attnc_param_kind;

typedef enum attnc_role {
  ATTNC_ROLE_NONE = 0, /* not a tensor */
  ATTNC_ROLE_INPUT = 1,
  ATTNC_ROLE_OUTPUT = 2,
} attnc_role;

typedef struct attnc_module attnc_module;
typedef struct attnc_kernel attnc_kernel; /* owned by its module */
typedef struct attnc_plan attnc_plan;
typedef struct attnc_graph attnc_graph;

/* One parameter as the manifest declares it. Strings are owned by the
 * module. */
typedef struct attnc_param_info {
  const char *name;
  attnc_param_kind kind;
  /* Element type (tensor) or value type (size, stride, scalar). */
  attnc_dtype dtype;
  attnc_role role;         /* tensor only */
  int32_t rank;            /* tensor only */
  int64_t align;           /* tensor only: required pointer alignment, bytes */
  int32_t contiguous_last; /* tensor only: innermost stride must be 1 */
  const char *tensor;      /* stride only: the tensor's name */
  int32_t dim;             /* stride only */
} attnc_param_info;

/* The caller's view of one tensor argument. Strides are in elements. */
typedef struct attnc_tensor {
  uint64_t data; /* device pointer */
  attnc_dtype dtype;
  int32_t rank;
  const int64_t *sizes;
  const int64_t *strides;
} attnc_tensor;

/* One scalar argument; converted to the parameter's dtype, refusing lossy
 * conversions (a fractional value for an integer, an i32 out of range). */
typedef struct attnc_scalar {
  int32_t is_float; /* 0: value.i holds it; 1: value.f holds it */
  union {
    int64_t i;
    double f;
  } value;
} attnc_scalar;

/*--- Errors and dtypes ----------------------------------------------------*/

ATTNC_API const char *attnc_last_error(void);
ATTNC_API const char *attnc_status_name(attnc_status status);
/* "bf16", ...; NULL for ATTNC_DTYPE_INVALID or an unknown value. */
ATTNC_API const char *attnc_dtype_name(attnc_dtype dtype);
/* ATTNC_DTYPE_INVALID when the name is unknown. */
ATTNC_API attnc_dtype attnc_dtype_from_name(const char *name);
/* Bytes per element; 0 for ATTNC_DTYPE_INVALID. */
ATTNC_API size_t attnc_dtype_size(attnc_dtype dtype);

/*--- Modules (CPU only) ----------------------------------------------------*/

/* Reads and validates DIR/manifest.json. Needs no GPU: cubins are loaded at
 * the first launch or by attnc_module_load_gpu. */
ATTNC_API attnc_status attnc_module_load(const char *dir, attnc_module **out);
/* Same from manifest text already in memory; cubin paths resolve against
 * DIR (may be NULL: then the module can be inspected but not launched). */
ATTNC_API attnc_status attnc_manifest_parse(const char *json, size_t length,
                                            const char *dir,
                                            attnc_module **out);
/* Unloads the module's cubins from every context they were loaded into.
 * NULL is a no-op. */
ATTNC_API void attnc_module_unload(attnc_module *module);

ATTNC_API const char *attnc_module_name(const attnc_module *module);
ATTNC_API const char *attnc_module_chip(const attnc_module *module);
ATTNC_API size_t attnc_module_num_kernels(const attnc_module *module);
ATTNC_API attnc_kernel *attnc_module_kernel_at(const attnc_module *module,
                                               size_t index);
ATTNC_API attnc_status attnc_module_get_kernel(const attnc_module *module,
                                               const char *name,
                                               attnc_kernel **out);

/*--- Kernels (CPU only) ----------------------------------------------------*/

ATTNC_API const char *attnc_kernel_name(const attnc_kernel *kernel);
/* "attention", "fusion", or "" when the manifest has no kind. */
ATTNC_API const char *attnc_kernel_kind(const attnc_kernel *kernel);
ATTNC_API size_t attnc_kernel_num_params(const attnc_kernel *kernel);
ATTNC_API attnc_status attnc_kernel_param(const attnc_kernel *kernel,
                                          size_t index, attnc_param_info *out);
/* -1 into *index when absent (returns ATTNC_ERROR_NOT_FOUND). */
ATTNC_API attnc_status attnc_kernel_find_param(const attnc_kernel *kernel,
                                               const char *name,
                                               int64_t *index);
/* Dimension DIM of tensor parameter INDEX: *symbol is the size symbol, or
 * NULL for a static extent, which goes into *extent (-1 when symbolic). */
ATTNC_API attnc_status attnc_kernel_param_dim(const attnc_kernel *kernel,
                                              size_t index, int32_t dim,
                                              int64_t *extent,
                                              const char **symbol);
/* block[3] and dynamic shared memory bytes; either pointer may be NULL. */
ATTNC_API void attnc_kernel_launch_config(const attnc_kernel *kernel,
                                          int64_t block[3],
                                          int64_t *shared_memory_bytes);
/* An `attrs` entry as text: strings as they are, other values as JSON
 * ("true", "0.125"); NULL when absent. */
ATTNC_API const char *attnc_kernel_attr(const attnc_kernel *kernel,
                                        const char *key);

/*--- Launch plans (CPU only) -----------------------------------------------*/

/* Validates the arguments and computes everything a launch needs. TENSORS
 * holds one descriptor per `tensor` parameter and SCALARS one value per
 * `scalar` parameter, each in manifest order. */
ATTNC_API attnc_status attnc_plan_create(const attnc_kernel *kernel,
                                         const attnc_tensor *tensors,
                                         size_t num_tensors,
                                         const attnc_scalar *scalars,
                                         size_t num_scalars, attnc_plan **out);
ATTNC_API void attnc_plan_destroy(attnc_plan *plan);
ATTNC_API void attnc_plan_grid(const attnc_plan *plan, int64_t grid[3]);
/* 1 when some grid extent is 0: a launch does nothing. */
ATTNC_API int attnc_plan_is_empty(const attnc_plan *plan);
/* The value a size symbol was bound to. */
ATTNC_API attnc_status attnc_plan_symbol(const attnc_plan *plan,
                                         const char *symbol, int64_t *value);
/* Number of kernel parameters (= attnc_kernel_num_params), and the packed
 * bytes of parameter INDEX exactly as cuLaunchKernel will receive them. */
ATTNC_API size_t attnc_plan_num_params(const attnc_plan *plan);
ATTNC_API attnc_status attnc_plan_param(const attnc_plan *plan, size_t index,
                                        const void **bytes, size_t *size);

/*--- GPU ------------------------------------------------------------------*/

/* Loads every kernel's cubin into the current CUDA context (the device 0
 * primary context when none is current). Optional: launches do it lazily. */
ATTNC_API attnc_status attnc_module_load_gpu(attnc_module *module);
/* Launches a plan on STREAM in the current context. */
ATTNC_API attnc_status attnc_plan_launch(const attnc_plan *plan,
                                         attnc_stream stream);
/* attnc_plan_create + attnc_plan_launch + attnc_plan_destroy. */
ATTNC_API attnc_status attnc_launch(const attnc_kernel *kernel,
                                    const attnc_tensor *tensors,
                                    size_t num_tensors,
                                    const attnc_scalar *scalars,
                                    size_t num_scalars, attnc_stream stream);

/* Starts capturing STREAM (not the legacy NULL stream) into a graph, in
 * relaxed mode so that lazy cubin loading may happen inside the capture. */
ATTNC_API attnc_status attnc_graph_begin(attnc_stream stream);
/* Ends the capture of STREAM and instantiates the graph. */
ATTNC_API attnc_status attnc_graph_end(attnc_stream stream, attnc_graph **out);
/* Launches the recorded graph on STREAM. The tensors it was recorded with
 * must still be alive. */
ATTNC_API attnc_status attnc_graph_replay(const attnc_graph *graph,
                                          attnc_stream stream);
ATTNC_API void attnc_graph_destroy(attnc_graph *graph);

#ifdef __cplusplus
}
#endif

#endif /* ATTNC_C_RUNTIME_H */
