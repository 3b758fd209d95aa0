//===- fake_cuda.h - Inspecting the fake CUDA driver from tests -*- C++ -*-===//
//
// libpk_fake_cuda.so implements the driver entry points the runtime uses,
// over host memory, so the whole launch path runs in CI without a GPU. It
// plays two devices: 0 is Hopper-like (compute capability 9.0, memory
// pools, clusters, 227 KiB of opt-in shared memory), 1 is Ampere-like (8.6,
// no pools, no clusters, 99 KiB). It "runs" the kernels of
// tests/runtime/kernels/test_kernels.cu and samples/runtime/standin by
// host re-implementations that honor the launch's grid and block, and it
// logs what it was asked to do. With FAKE_CUDA_HOST_MEMORY set, copies
// and kernels accept any host pointer, not only the fake's allocations.
//
// Tests reach these functions with dlopen(RTLD_NOLOAD) + dlsym on the
// library the runtime opened ($PK_CUDA_DRIVER).
//
//===----------------------------------------------------------------------===//
#ifndef PK_TESTS_FAKE_CUDA_H
#define PK_TESTS_FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>

extern "C" {

struct fake_cuda_launch {
  char kernel[64];
  int device;
  unsigned grid[3], block[3], cluster[3];
  unsigned shared_memory;
  void *stream;
  int num_params;
  uint64_t params[8];
  int used_launch_ex; ///< through cuLaunchKernelEx
};

struct fake_cuda_copy {
  uint64_t dst, src;
  size_t bytes;
  void *stream;
};

typedef size_t (*fake_cuda_count_fn)(void);
typedef int (*fake_cuda_get_launch_fn)(size_t index, struct fake_cuda_launch *out);
typedef int (*fake_cuda_get_copy_fn)(size_t index, struct fake_cuda_copy *out);
typedef void (*fake_cuda_reset_fn)(void);
/// Makes the next `count` calls of `entry` ("cuMemAllocAsync") fail with
/// `result`.
typedef void (*fake_cuda_fail_fn)(const char *entry, int result, int count);
/// The value cuFuncSetAttribute last set for `attribute` of kernel `name`
/// on `device` (-1 if never).
typedef int (*fake_cuda_func_attribute_fn)(int device, const char *name, int attribute);
/// Counters: "live_allocations", "async_allocations", "sync_allocations",
/// "context_depth" (this thread), "stream_syncs", "module_loads",
/// "module_unloads".
typedef long (*fake_cuda_counter_fn)(const char *name);

} // extern "C"

#endif // PK_TESTS_FAKE_CUDA_H
