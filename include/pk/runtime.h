/*===- pk/runtime.h - Load pkc artifacts and launch them (C API) -----------===
 *
 * The pkc runtime reads the JSON launch manifest that `pkc compile
 * --target=cuda:...` writes next to each cubin (docs/manifest.md), picks
 * the artifact that runs on the device, loads it, and launches an export
 * with arrays passed as DLPack tensors. Every argument is checked against
 * the manifest before anything is launched.
 *
 *   pk_module *m;
 *   if (pk_module_load("build/kernels/add.json", &m) != PK_OK)
 *     fprintf(stderr, "%s\n", pk_last_error());
 *   pk_kernel *k;
 *   pk_module_get(m, "add", &k);
 *   DLTensor args[3] = {x, y, out};   // device pointers, shapes, dtypes
 *   pk_launch(k, args, 3, stream);     // grid, shared memory and sizes come
 *                                      // from the manifest
 *   pk_module_destroy(m);
 *
 * ABI: the handles are opaque; pk_load_options carries its own size and
 * may grow at its end; the other structs and every enumerator's value are
 * fixed for the life of PK_RUNTIME_ABI_VERSION, which is the number in the
 * shared library's soname (libpk_runtime.so.1).
 *
 * Errors: every function that can fail returns a pk_status; on failure
 * pk_last_error() describes it in a sentence. The library never aborts or
 * exits the process, and never prints.
 *
 * Threads: everything may be called from any thread. A module may be
 * shared; launches of the same or different kernels may run concurrently
 * on different (or the same) streams. Only pk_module_destroy must not race
 * with other uses of the module it destroys.
 *
 * docs/runtime.md is the reference, with examples.
 *===----------------------------------------------------------------------===*/
#ifndef PK_RUNTIME_H
#define PK_RUNTIME_H

#include <dlpack/dlpack.h>

#include <stddef.h>
#include <stdint.h>

#if defined(PK_RUNTIME_BUILDING) && defined(__GNUC__)
#define PK_API __attribute__((visibility("default")))
#else
#define PK_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define PK_RUNTIME_ABI_VERSION 1

/* What a call returned. The values are part of the ABI. */
typedef enum pk_status {
  PK_OK = 0,
  PK_ERROR_INVALID_ARGUMENT = 1, /* a null pointer or a bad option */
  PK_ERROR_IO = 2,               /* a manifest or artifact file could not be read */
  PK_ERROR_MANIFEST = 3,         /* malformed JSON, or not what docs/manifest.md says */
  PK_ERROR_MANIFEST_VERSION = 4, /* not a pkc manifest, or a version this runtime does not read */
  PK_ERROR_ARTIFACT = 5,         /* an artifact whose size or sha256 differs, or lacks a kernel */
  PK_ERROR_NO_COMPATIBLE_ARTIFACT = 6, /* no artifact in the manifest runs on the device */
  PK_ERROR_NOT_FOUND = 7,              /* no export of that name */
  PK_ERROR_ARGUMENT_COUNT = 8,         /* not one array per param of the export */
  PK_ERROR_DEVICE_MISMATCH = 9,        /* an array that is not in the module's device's memory */
  PK_ERROR_DTYPE = 10,                 /* an array of the wrong element type */
  PK_ERROR_RANK = 11,                  /* an array with the wrong number of dimensions */
  PK_ERROR_SHAPE = 12,                 /* a wrong size, or a symbolic size bound inconsistently */
  PK_ERROR_LAYOUT = 13,                /* strides that are not dense row-major */
  PK_ERROR_ALIGNMENT = 14,             /* an address less aligned than the kernels assume */
  PK_ERROR_ALIASING = 15,              /* an output overlapping another argument */
  PK_ERROR_DRIVER_UNAVAILABLE = 16,    /* libcuda.so.1 missing, or older than this runtime needs */
  PK_ERROR_NO_DEVICE = 17,             /* no such CUDA device, or a module loaded without one */
  PK_ERROR_UNSUPPORTED = 18,   /* a launch the device cannot run (shared memory, clusters, grid) */
  PK_ERROR_OUT_OF_MEMORY = 19, /* device (or host) memory exhausted */
  PK_ERROR_CUDA = 20,          /* a CUDA driver call failed; pk_last_error() names it */
  PK_ERROR_INTERNAL = 21       /* a bug in the runtime; please report it */
} pk_status;

typedef struct pk_module pk_module; /* a loaded manifest and its artifact */
typedef struct pk_kernel pk_kernel; /* an export of a module; owned by it */

/* The message of the last failed call on this thread ("" if none). It
 * stays valid until the next failing call on this thread. Calls that
 * succeed leave it unchanged. */
PK_API const char *pk_last_error(void);
/* The enumerator's name: "PK_ERROR_SHAPE". Never null. */
PK_API const char *pk_status_name(pk_status status);
/* "0.1.0", and PK_RUNTIME_ABI_VERSION as the library was built. */
PK_API const char *pk_runtime_version(void);
PK_API int pk_runtime_abi_version(void);

/* ---- Loading ---------------------------------------------------------- */

/* An artifact's bytes in memory, for builds that embed their kernels:
 * `file` is the artifact's "file" in the manifest ("add.cubin"). */
typedef struct pk_artifact_data {
  const char *file;
  const void *data;
  size_t size;
} pk_artifact_data;

/* Read and check the manifest and artifact, but use no device: kernels can
 * be inspected and pk_validate()d, and pk_launch() fails with
 * PK_ERROR_NO_DEVICE. Needs no driver and no GPU. */
#define PK_LOAD_NO_DEVICE 1u

typedef struct pk_load_options {
  uint32_t struct_size; /* sizeof(pk_load_options); pk_load_options_init sets it */
  uint32_t flags;       /* PK_LOAD_* */
  /* The CUDA device ordinal; -1 (the default): the device of the calling
   * thread's current context, or device 0 when none is current. With
   * PK_LOAD_NO_DEVICE, -1 accepts arrays on any device. */
  int32_t device;
  /* Only with PK_LOAD_NO_DEVICE: choose (and check) the artifact as for a
   * device of this compute capability (major * 10 + minor: 90, 86); 0
   * chooses none. */
  int32_t compute_capability;
  /* Artifacts in memory, looked up by file name before the file system. */
  const pk_artifact_data *artifacts;
  size_t num_artifacts;
} pk_load_options;

/* Fills `options` with the defaults (and its struct_size). */
PK_API void pk_load_options_init(pk_load_options *options);

/* Loads the manifest at `manifest_path`; artifacts are read relative to
 * its directory. Checks the manifest, picks the artifact for the device's
 * compute capability, checks its size and sha256, loads it and resolves
 * every kernel. On failure *module is set to NULL. */
PK_API pk_status pk_module_load(const char *manifest_path, pk_module **module);
/* The same, with options (NULL for the defaults). */
PK_API pk_status pk_module_load_ex(const char *manifest_path, const pk_load_options *options,
                                   pk_module **module);
/* Loads a manifest held in memory (`size` bytes of JSON). Its artifacts
 * come from options->artifacts; there is no directory to read them from. */
PK_API pk_status pk_module_load_memory(const void *manifest_json, size_t size,
                                       const pk_load_options *options, pk_module **module);
/* Unloads the module. Launches already made must have completed (for
 * example, synchronize their streams first). NULL is ignored. */
PK_API void pk_module_destroy(pk_module *module);

/* The export named `name`. The kernel lives as long as the module. */
PK_API pk_status pk_module_get(pk_module *module, const char *name, pk_kernel **kernel);
/* The exports, in manifest order; NULL past the end. */
PK_API size_t pk_module_num_exports(const pk_module *module);
PK_API const char *pk_module_export_name(const pk_module *module, size_t index);
/* The chosen artifact's target ("cuda:sm_90a") and file as the manifest
 * names it ("add.sm_90a.cubin"), or "" when none was chosen. */
PK_API const char *pk_module_target(const pk_module *module);
PK_API const char *pk_module_artifact(const pk_module *module);
/* The device ordinal the module is loaded on; -1 with PK_LOAD_NO_DEVICE. */
PK_API int pk_module_device(const pk_module *module);

/* ---- Inspecting an export --------------------------------------------- */

typedef enum pk_param_role { PK_PARAM_INPUT = 0, PK_PARAM_OUTPUT = 1 } pk_param_role;

typedef struct pk_param_info {
  const char *name;   /* "x"; outputs are "out0", "out1", ... */
  pk_param_role role; /* inputs come first, then outputs */
  DLDataType dtype;   /* bool is {kDLBool (6), 8, 1} */
  int32_t ndim;
  uint64_t alignment; /* bytes the kernels assume for the base address */
} pk_param_info;

PK_API const char *pk_kernel_name(const pk_kernel *kernel);
PK_API size_t pk_kernel_num_params(const pk_kernel *kernel);
PK_API pk_status pk_kernel_param(const pk_kernel *kernel, size_t index, pk_param_info *info);
/* The symbolic sizes ("N"), in manifest order; NULL past the end. */
PK_API size_t pk_kernel_num_symbols(const pk_kernel *kernel);
PK_API const char *pk_kernel_symbol_name(const pk_kernel *kernel, size_t index);
/* Where symbol `index` takes its value: dimension `*dim` of param `*param`,
 * whose size there is exactly the symbol. When every symbol comes from an
 * input, this and pk_kernel_param_shape give the outputs' shapes from the
 * inputs'. */
PK_API pk_status pk_kernel_symbol_source(const pk_kernel *kernel, size_t index, size_t *param,
                                         int32_t *dim);
/* The shape of param `index` (ndim values into `shape`) for the given
 * values of the symbols, in order: how big to make an output. */
PK_API pk_status pk_kernel_param_shape(const pk_kernel *kernel, size_t index,
                                       const int64_t *symbol_values, size_t num_symbols,
                                       int64_t *shape);

/* ---- Launching -------------------------------------------------------- */

/* Checks `args` (one per param: inputs, then outputs) against the export
 * without launching anything: count, device, dtypes, ranks, shapes with
 * every symbolic size bound consistently, dense row-major strides
 * (NULL strides mean exactly that), alignment, and that no output overlaps
 * another argument. */
PK_API pk_status pk_validate(const pk_kernel *kernel, const DLTensor *args, size_t num_args);

/* Validates, then runs the export's program on `stream` (a CUstream or
 * cudaStream_t of the module's device; NULL is the legacy default stream):
 * allocates its temporaries, copies aliased outputs, launches its kernels
 * with the manifest's grid, block, cluster and shared memory. Returns once
 * the work is queued; nothing is launched when validation fails. */
PK_API pk_status pk_launch(const pk_kernel *kernel, const DLTensor *args, size_t num_args,
                           void *stream);

/* ---- Devices, memory and streams -------------------------------------- *
 * Small conveniences for programs that do not use the CUDA runtime API
 * themselves. Each works in the device's primary context (the one the CUDA
 * runtime uses), so pointers and streams are interchangeable with it. */

/* The number of CUDA devices; PK_ERROR_DRIVER_UNAVAILABLE without a driver. */
PK_API pk_status pk_device_count(int *count);
PK_API pk_status pk_device_compute_capability(int device, int *major, int *minor);
PK_API pk_status pk_device_name(int device, char *name, size_t size);
PK_API pk_status pk_device_alloc(int device, size_t bytes, void **pointer);
PK_API pk_status pk_device_free(int device, void *pointer);
/* Synchronous copies. They wait for work queued on the legacy default
 * stream and on streams from pk_stream_create (which synchronize with it,
 * as cudaStreamCreate streams do). */
PK_API pk_status pk_memcpy_to_device(int device, void *dst, const void *src, size_t bytes);
PK_API pk_status pk_memcpy_to_host(int device, void *dst, const void *src, size_t bytes);
PK_API pk_status pk_stream_create(int device, void **stream);
PK_API pk_status pk_stream_destroy(int device, void *stream);
PK_API pk_status pk_stream_synchronize(int device, void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PK_RUNTIME_H */
