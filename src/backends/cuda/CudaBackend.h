//===- CudaBackend.h - pk IR to cubin ---------------------------*- C++ -*-===//
//
// The CUDA backend's entry point. The stages it runs, in order, are listed
// in Pipeline.cpp; docs/cuda.md describes them.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_CUDABACKEND_H
#define PK_BACKENDS_CUDA_CUDABACKEND_H

#include "backends/Backend.h"

namespace pk::backends::cuda {

/// `options.emit`: "" (the cubin), "ptx", "llvm" (LLVM IR) or "gpu" (the
/// distributed GPU IR before LLVM).
std::optional<BackendOutput> compile(mlir::ModuleOp module, const BackendOptions &options);

} // namespace pk::backends::cuda

#endif // PK_BACKENDS_CUDA_CUDABACKEND_H
