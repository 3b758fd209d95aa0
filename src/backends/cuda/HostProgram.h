//===- HostProgram.h - What the runtime does to run an export ---*- C++ -*-===//
//
// An export calls pallas_calls in order, passing arrays from one to the
// next. The host program assigns every array a buffer (the export's
// params, or a temporary) and lists the steps: a copy where an output
// starts as an aliased input, and one launch per pallas_call.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_CUDA_HOSTPROGRAM_H
#define PK_BACKENDS_CUDA_HOSTPROGRAM_H

#include "backends/Manifest.h"
#include "backends/cuda/LaunchPlan.h"

namespace pk::gpu {

/// One program per export of `module` (pk IR), launching the kernels
/// `plans` names. Shared memory and register counts are filled in later.
std::vector<backends::CudaProgram> buildHostPrograms(mlir::ModuleOp module,
                                                     const std::map<mlir::Operation *, LaunchPlan> &plans);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_HOSTPROGRAM_H
