/*===- attnc-c/Runtime.h - C API of the attnc host runtime --------*- C -*-===*\
|*                                                                            *|
|* Part of the attnc project.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The host runtime loads the output of `attnc-compile` (manifest.json version
 * 2 plus one cubin per kernel, docs/abi.md), checks a call's arguments against
 * the manifest, and launches the kernel on a CUDA stream, alone or recorded
 * into a CUDA graph. It is a plain C API so that ctypes (python/attnc) and any
 * C or C++ host can use it without MLIR or the CUDA runtime library.
 *
 * Everything up to and including the launch plan (manifest parsing, kernel
 * and parameter queries, argument validation, grid computation, parameter
 * packing) runs on the CPU only: libcuda.so.1 is opened with dlopen at the
 * first call that needs a GPU, so the library loads and these calls work on
 * machines without a driver. Two things make a plan need the driver: a
 * tensormap parameter (the plan encodes it with cuTensorMapEncodeTiled) and
 * a {"device": "num_sms"} factor when attnc_plan_options.num_sms is 0.
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
  /* Not dtypes: they make every 32-bit value a valid attnc_dtype, so that
     the runtime can refuse a caller's out-of-range value (from C, or from
     Python through ctypes) instead of its C++ reading being undefined
     behaviour. */
  ATTNC_DTYPE_MIN_ENUM_ = -0x7FFFFFFF - 1,
  ATTNC_DTYPE_MAX_ENUM_ = 0x7FFFFFFF,
} attnc_dtype;

typedef enum attnc_param_kind {
  ATTNC_PARAM_TENSOR = 0,
  ATTNC_PARAM_SIZE = 1,
  ATTNC_PARAM_STRIDE = 2,
  ATTNC_PARAM_SCALAR = 3,
  /* A CUtensorMap the runtime encodes from the tensor argument it names; the
   * caller passes nothing for it. */
  ATTNC_PARAM_TENSORMAP = 4,
  /* Scratch memory the caller allocates and passes like a tensor: a 1-D i8
   * attnc_tensor whose one size is its byte size. */
  ATTNC_PARAM_WORKSPACE = 5,
} attnc_param_kind;

/* A factor of a grid extent or of a workspace's byte size. */
typedef enum attnc_factor_kind {
  ATTNC_FACTOR_CONSTANT = 0, /* value */
  ATTNC_FACTOR_SYMBOL = 1,   /* ceil(symbol / ceil_div) [+ plus]; a plain
                                "SYM" has ceil_div 1 and no plus */
  ATTNC_FACTOR_NUM_SMS = 2,  /* the device's multiprocessor count */
} attnc_factor_kind;

typedef enum attnc_constraint_kind {
  ATTNC_CONSTRAINT_DIVISIBLE = 0, /* lhs % rhs == 0 and rhs > 0 */
  ATTNC_CONSTRAINT_EQUAL = 1,     /* lhs == rhs */
  ATTNC_CONSTRAINT_MIN = 2,       /* lhs >= value */
  ATTNC_CONSTRAINT_MAX = 3,       /* lhs <= value */
  ATTNC_CONSTRAINT_RATIO = 4,     /* lhs == value * rhs */
  ATTNC_CONSTRAINT_AT_MOST = 5,   /* lhs <= value * rhs */
} attnc_constraint_kind;

/* How a host chooses a size symbol that the caller picks (docs/abi.md). */
typedef enum attnc_size_rule_kind {
  /* The split count of split-KV attention (FlashAttention-2's
   * num_splits_heuristic). */
  ATTNC_SIZE_RULE_KV_SPLITS = 0,
} attnc_size_rule_kind;

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
  /* Element type (tensor; tensormap: of its tensor; workspace: i8) or value
   * type (size, stride, scalar). */
  attnc_dtype dtype;
  attnc_role role;         /* tensor only */
  int32_t rank;            /* tensor, tensormap (its tensor's); workspace 1 */
  int64_t align;           /* tensor, workspace (16): pointer alignment */
  int32_t contiguous_last; /* tensor only: innermost stride must be 1 */
  const char *tensor;      /* stride, tensormap: the tensor's name */
  int32_t dim;             /* stride only */
} attnc_param_info;

/* A grid or workspace-size factor. symbol is owned by the module. */
typedef struct attnc_factor {
  attnc_factor_kind kind;
  int64_t value;      /* ATTNC_FACTOR_CONSTANT */
  const char *symbol; /* ATTNC_FACTOR_SYMBOL; NULL otherwise */
  int64_t ceil_div;   /* ATTNC_FACTOR_SYMBOL; 1 otherwise */
  /* ATTNC_FACTOR_SYMBOL: a symbol whose value is added to the quotient (a
   * ragged batch's query tiles, ceil(T / 128) + B); NULL for none. */
  const char *plus;
} attnc_factor;

/* A tensormap parameter. box has `rank` entries, outermost first (manifest
 * order, like the tensor's shape); owned by the module. */
typedef struct attnc_tensormap_info {
  const char *tensor;   /* the tensor parameter it describes */
  size_t tensor_index;  /* that tensor's parameter index */
  int32_t rank;         /* = the tensor's rank */
  const int64_t *box;   /* elements per dimension of the TMA box */
  int32_t swizzle;      /* bytes: 0 (none), 32, 64 or 128 */
  int32_t oob_fill_nan; /* out-of-bounds elements read as 0: zero, 1: NaN */
} attnc_tensormap_info;

/* A workspace parameter; its minimum size in bytes is the product of
 * num_byte_factors factors (attnc_kernel_param_workspace_factor). */
typedef struct attnc_workspace_info {
  size_t num_byte_factors;
  int32_t zero_init; /* 1: the runtime zeroes it before every launch */
} attnc_workspace_info;

/* A rule on size symbols the runtime checks before launching. Strings are
 * owned by the module. */
typedef struct attnc_constraint {
  attnc_constraint_kind kind;
  const char *lhs; /* divisible, equal: lhs; min, max: the symbol */
  const char *rhs; /* divisible, equal: rhs; min, max: NULL */
  int64_t value;   /* min, max: the smallest / largest allowed value */
} attnc_constraint;

/* A size rule: how to choose SYMBOL, a size symbol that only tensors the
 * caller allocates bind (the manifest's size_rules, docs/abi.md). Any value
 * the constraints allow is correct; the rule gives a fast one. symbol is
 * owned by the module. */
typedef struct attnc_size_rule {
  attnc_size_rule_kind kind;
  const char *symbol;
  int64_t max;         /* the largest value the rule gives (1 to 128) */
  int64_t ctas_per_sm; /* blocks of the kernel one SM runs at once */
  /* The K/V tiles of one row are the product of this many factors
   * (attnc_kernel_size_rule_factor). */
  size_t num_kv_tiles;
} attnc_size_rule;

/* The caller's view of one tensor argument. Strides are in elements. A
 * workspace argument is {data, ATTNC_DTYPE_I8, 1, {bytes}, {1} or NULL}. */
typedef struct attnc_tensor {
  uint64_t data; /* device pointer */
  attnc_dtype dtype;
  int32_t rank;
  const int64_t *sizes;
  const int64_t *strides;
} attnc_tensor;

/* Options of attnc_plan_create_with_options; all-zero means the defaults. */
typedef struct attnc_plan_options {
  /* The SM count that {"device": "num_sms"} factors of the grid and of
   * workspace sizes use. 0: ask the driver for the multiprocessor count of
   * the current context's device (device 0 when none is current), when some
   * factor needs it; without a driver such a plan then fails with
   * ATTNC_ERROR_NO_DRIVER. */
  int64_t num_sms;
} attnc_plan_options;

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
/* The kernel's fallback (the manifest's "fallback", another kernel of the
 * same module that takes the same arguments), or NULL when it has none.
 * Plans of KERNEL run it for the arguments KERNEL refuses and it accepts:
 * tensors that break only KERNEL's alignment or TMA rules. */
ATTNC_API const attnc_kernel *attnc_kernel_fallback(const attnc_kernel *kernel);
/* On the partial kernel of a split-KV function, the kernel of the same
 * module that computes the function's result in one launch (the manifest's
 * "unsplit"): from the same inputs, without the partials, into the
 * function's outputs. When KERNEL's K/V split size rule gives 1, a host runs
 * it instead of KERNEL and the combine (which would only convert the
 * partial). NULL when KERNEL has none. */
ATTNC_API const attnc_kernel *attnc_kernel_unsplit(const attnc_kernel *kernel);
/* The kernel's size variants (the manifest's "variants"), in order: other
 * kernels of the module that take the same arguments and compute the same
 * result with other tiles, each for the sizes its conditions (constraints on
 * size symbols) allow. A plan of KERNEL runs the first variant whose
 * conditions the call's sizes meet and that accepts the arguments, else
 * KERNEL (attnc_plan_kernel tells which). attnc_kernel_variant is NULL for
 * an index out of range. */
ATTNC_API size_t attnc_kernel_num_variants(const attnc_kernel *kernel);
ATTNC_API const attnc_kernel *attnc_kernel_variant(const attnc_kernel *kernel,
                                                   size_t index);
ATTNC_API size_t attnc_kernel_variant_num_conditions(const attnc_kernel *kernel,
                                                     size_t index);
ATTNC_API attnc_status
attnc_kernel_variant_condition(const attnc_kernel *kernel, size_t index,
                               size_t condition, attnc_constraint *out);
/* 1 when the manifest says "programmatic_launch": the kernel waits for the
 * grids before it on its stream (griddepcontrol.wait) before it touches
 * global memory, and attnc_plan_launch launches it with programmatic stream
 * serialization (unless ATTNC_PROGRAMMATIC_LAUNCH=0 or the driver lacks
 * cuLaunchKernelEx); 0 otherwise, and for NULL. */
ATTNC_API int attnc_kernel_programmatic_launch(const attnc_kernel *kernel);
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
 * ("true", "0.125"); NULL when absent. Informational: the runtime never
 * reads attrs to decide anything. */
ATTNC_API const char *attnc_kernel_attr(const attnc_kernel *kernel,
                                        const char *key);
/* The factors of grid axis AXIS (0..2); the extent is their product. */
ATTNC_API size_t attnc_kernel_grid_num_factors(const attnc_kernel *kernel,
                                               int32_t axis);
ATTNC_API attnc_status attnc_kernel_grid_factor(const attnc_kernel *kernel,
                                                int32_t axis, size_t index,
                                                attnc_factor *out);
/* Tensormap parameter INDEX (ATTNC_ERROR_INVALID_ARGUMENT for another
 * kind). */
ATTNC_API attnc_status attnc_kernel_param_tensormap(const attnc_kernel *kernel,
                                                    size_t index,
                                                    attnc_tensormap_info *out);
/* Workspace parameter INDEX and factor FACTOR of its byte size. */
ATTNC_API attnc_status attnc_kernel_param_workspace(const attnc_kernel *kernel,
                                                    size_t index,
                                                    attnc_workspace_info *out);
ATTNC_API attnc_status attnc_kernel_param_workspace_factor(
    const attnc_kernel *kernel, size_t index, size_t factor, attnc_factor *out);
/* The kernel's constraints, in manifest order. */
ATTNC_API size_t attnc_kernel_num_constraints(const attnc_kernel *kernel);
ATTNC_API attnc_status attnc_kernel_constraint(const attnc_kernel *kernel,
                                               size_t index,
                                               attnc_constraint *out);
/* The kernel's size rules, in manifest order, and factor FACTOR of the K/V
 * tile count of rule INDEX. */
ATTNC_API size_t attnc_kernel_num_size_rules(const attnc_kernel *kernel);
ATTNC_API attnc_status attnc_kernel_size_rule_info(const attnc_kernel *kernel,
                                                   size_t index,
                                                   attnc_size_rule *out);
ATTNC_API attnc_status attnc_kernel_size_rule_factor(const attnc_kernel *kernel,
                                                     size_t index,
                                                     size_t factor,
                                                     attnc_factor *out);
/* Evaluates the kernel's size rule for SYMBOL (e.g. "splits") into *OUT.
 * TENSORS are the leading tensor and workspace arguments of a call, in
 * manifest order as for attnc_plan_create; NUM_TENSORS may be fewer than a
 * plan takes (q, k, v of a split-KV kernel: its outputs are what the
 * result sizes). The symbols of the given tensors are bound and checked as
 * a plan does (rank, dtype, static extents, one value per symbol), except
 * SYMBOL itself, whose extent may be anything. Every symbol the rule reads
 * (the grid's and the K/V tiles', but SYMBOL) must be bound, else
 * ATTNC_ERROR_VALIDATION names the missing one. NUM_SMS is the device's SM
 * count; 0 asks the driver as a plan does (ATTNC_ERROR_NO_DRIVER without
 * one). ATTNC_ERROR_NOT_FOUND when the kernel has no rule for SYMBOL. */
ATTNC_API attnc_status attnc_kernel_size_rule(const attnc_kernel *kernel,
                                              const char *symbol,
                                              const attnc_tensor *tensors,
                                              size_t num_tensors,
                                              int32_t num_sms, int64_t *out);

/*--- Launch plans (CPU only but for tensormaps and num_sms) ----------------*/

/* Validates the arguments and computes everything a launch needs. TENSORS
 * holds one descriptor per `tensor` or `workspace` parameter and SCALARS one
 * value per `scalar` parameter, each in manifest order; nothing is passed
 * for `size`, `stride` and `tensormap` parameters. Tensormaps are encoded
 * here (this needs the driver). When KERNEL refuses the arguments
 * (ATTNC_ERROR_VALIDATION) and has a fallback, the plan is the fallback's
 * if it accepts them (attnc_plan_kernel tells which); if it refuses them
 * too, the status is KERNEL's and the message KERNEL's followed by "; its
 * fallback kernel NAME refuses them too: " and the fallback's. Other
 * errors never fall back. A kernel with size variants first plans the call
 * with the first variant whose conditions the tensors' sizes meet; if that
 * variant refuses the arguments, KERNEL plans it as above. Same as
 * attnc_plan_create_with_options with NULL options. */
ATTNC_API attnc_status attnc_plan_create(const attnc_kernel *kernel,
                                         const attnc_tensor *tensors,
                                         size_t num_tensors,
                                         const attnc_scalar *scalars,
                                         size_t num_scalars, attnc_plan **out);
/* OPTIONS may be NULL (the defaults). */
ATTNC_API attnc_status attnc_plan_create_with_options(
    const attnc_kernel *kernel, const attnc_tensor *tensors, size_t num_tensors,
    const attnc_scalar *scalars, size_t num_scalars,
    const attnc_plan_options *options, attnc_plan **out);
ATTNC_API void attnc_plan_destroy(attnc_plan *plan);
/* The kernel the plan launches: the kernel it was created for, or that
 * kernel's fallback. Parameter indices of attnc_plan_param and
 * attnc_plan_workspace_bytes are this kernel's. NULL for a NULL plan. */
ATTNC_API const attnc_kernel *attnc_plan_kernel(const attnc_plan *plan);
ATTNC_API void attnc_plan_grid(const attnc_plan *plan, int64_t grid[3]);
/* 1 when some grid extent is 0: a launch does nothing. */
ATTNC_API int attnc_plan_is_empty(const attnc_plan *plan);
/* The value a size symbol was bound to. */
ATTNC_API attnc_status attnc_plan_symbol(const attnc_plan *plan,
                                         const char *symbol, int64_t *value);
/* The minimum size in bytes of workspace parameter INDEX for this call. */
ATTNC_API attnc_status attnc_plan_workspace_bytes(const attnc_plan *plan,
                                                  size_t index,
                                                  uint64_t *bytes);
/* Number of kernel parameters (attnc_kernel_num_params of
 * attnc_plan_kernel), and the packed bytes of parameter INDEX exactly as
 * cuLaunchKernel will receive them (a tensormap: its 128 bytes, 64-byte
 * aligned). */
ATTNC_API size_t attnc_plan_num_params(const attnc_plan *plan);
ATTNC_API attnc_status attnc_plan_param(const attnc_plan *plan, size_t index,
                                        const void **bytes, size_t *size);

/*--- GPU ------------------------------------------------------------------*/

/* Loads every kernel's cubin into the current CUDA context (the device 0
 * primary context when none is current). Optional: launches do it lazily. */
ATTNC_API attnc_status attnc_module_load_gpu(attnc_module *module);
/* Launches a plan on STREAM in the current context: first zeroes its
 * zero_init workspaces on STREAM (cuMemsetD8Async), then the kernel. Both
 * are recorded when STREAM is being captured. */
ATTNC_API attnc_status attnc_plan_launch(const attnc_plan *plan,
                                         attnc_stream stream);
/* attnc_plan_create + attnc_plan_launch + attnc_plan_destroy: launches the
 * fallback when the plan chose it. */
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

/*--- Cost model (docs/cost-model.md) ---------------------------------------*/

/* A device the cost model prices kernels on: a built-in datasheet device
 * (h100, h200, a100) or a device file written by `python3 -m
 * attnc.calibrate`. */
typedef struct attnc_device_model attnc_device_model;

/* The predicted time of one launch and its terms, in microseconds. The
 * sm terms are the busiest SM's; dram, reduce and cta (starting the CTAs)
 * are device-wide. LIMITER names the term that sets the time ("tensor",
 * "exp", "shared", "latency", "dram", "reduce", "ctas", "launch"); REGIME is
 * "compute", "bandwidth" or "latency". */
typedef struct attnc_estimate {
  double time_us, launch_us;
  double mma_us, softmax_us, shared_us, fill_us, sm_us;
  double dram_us, reduce_us, cta_us;
  double waves, steps;
  int64_t ctas_per_sm;
  char limiter[16];
  char regime[16];
} attnc_estimate;

/* Parses a device file (JSON); ATTNC_ERROR_MANIFEST names the bad field. */
ATTNC_API attnc_status attnc_device_model_parse(const char *json, size_t length,
                                                attnc_device_model **out);
/* The built-in device NAME; ATTNC_ERROR_NOT_FOUND for another name. */
ATTNC_API attnc_status attnc_device_model_builtin(const char *name,
                                                  attnc_device_model **out);
ATTNC_API void attnc_device_model_destroy(attnc_device_model *model);
/* The model as a device file (JSON text, valid while MODEL lives). */
ATTNC_API const char *attnc_device_model_json(const attnc_device_model *model);
/* Prices PLAN's launch on MODEL from its kernel's schedule (kind, attrs,
 * block, shared memory, registers) and the plan's sizes. */
ATTNC_API attnc_status attnc_plan_estimate(const attnc_plan *plan,
                                           const attnc_device_model *model,
                                           attnc_estimate *out);

#ifdef __cplusplus
}
#endif

#endif /* ATTNC_C_RUNTIME_H */
