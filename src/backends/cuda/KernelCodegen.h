//===- KernelCodegen.h - Each kernel to PTX on its own thread ----*- C++ -*-===//
//
// After pk-gpu-split-kernel-modules has given each kernel a gpu.module of
// its own, each is translated to LLVM IR and PTX on the context's thread
// pool; ptxas then takes all the PTX files at once and links them into one
// cubin, as it does one module's kernels. The PTX of each kernel is the
// same as before the split: every function is compiled on its own either
// way.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_KERNELCODEGEN_H
#define PK_BACKENDS_CUDA_KERNELCODEGEN_H

#include "backends/cuda/Toolkit.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace pk::gpu {

/// The PTX of every gpu.module of `module` (its targets attached), in
/// order, made in parallel; libdevice is linked from `toolkit`. Failure
/// has been reported as a diagnostic.
mlir::FailureOr<std::vector<std::string>> kernelsToPtx(mlir::ModuleOp module,
                                                      const Toolkit &toolkit);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_KERNELCODEGEN_H
