//===- Driver.h - libcuda.so.1, opened at run time --------------*- C++ -*-===//
//
// Programs that use the runtime link and start on machines without a GPU:
// the driver is dlopen()ed on first use. $PK_CUDA_DRIVER names another
// library to open instead (a specific driver, or the tests' fake one). A
// failed attempt is not remembered, so a later call tries again; a loaded
// driver stays loaded for the life of the process.
//
//===----------------------------------------------------------------------===//
#ifndef PK_RUNTIME_DRIVER_H
#define PK_RUNTIME_DRIVER_H

#include "runtime/CudaApi.h"

#include "pk/runtime.h"

#include <string>

namespace pk::rt {

struct Driver {
  using CUresult = cu::CUresult;
  using CUdevice = cu::CUdevice;
  using CUdeviceptr = cu::CUdeviceptr;
  using CUcontext = cu::CUcontext;
  using CUmodule = cu::CUmodule;
  using CUfunction = cu::CUfunction;
  using CUstream = cu::CUstream;
  using CUlaunchConfig = cu::CUlaunchConfig;
  using CUtensorMap = cu::CUtensorMap;
  using cuuint32_t = cu::cuuint32_t;
  using cuuint64_t = cu::cuuint64_t;

#define PK_CUDA_ENTRY(member, symbol, required, parameters) CUresult(*member) parameters = nullptr;
#include "runtime/CudaEntryPoints.def"

  std::string path;                       ///< what was opened
  int version = 0;                        ///< cuDriverGetVersion: 12040 for CUDA 12.4
  CUresult initResult = cu::CUDA_SUCCESS; ///< cuInit's; NO_DEVICE on a machine without GPUs

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string describe(CUresult result) const;
  /// Throws when `result` is not CUDA_SUCCESS: PK_ERROR_OUT_OF_MEMORY,
  /// PK_ERROR_NO_DEVICE or PK_ERROR_CUDA, with "`call` failed: ...".
  void check(CUresult result, const char *call) const;
  void check(CUresult result, const std::string &call) const { check(result, call.c_str()); }
};

/// The driver, loaded and initialized on first use. Throws
/// PK_ERROR_DRIVER_UNAVAILABLE when it cannot be opened or lacks a
/// required entry point.
const Driver &driver();

/// The pk_status a CUDA error maps to.
pk_status statusOf(cu::CUresult result);

} // namespace pk::rt

#endif // PK_RUNTIME_DRIVER_H
