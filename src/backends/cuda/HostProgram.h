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

#include <map>
#include <string>

namespace pk::gpu {

/// An array a launch passes to a kernel operand parameter.
struct OperandArray {
  std::vector<backends::SizeExpr> shape;
  mlir::Type element;
};

/// The host programs of a module, and what compiling its kernels may
/// still add to their launches.
struct HostPrograms {
  std::vector<backends::CudaProgram> programs;
  /// Per pallas_call kernel (by name): its operand arrays, inputs then
  /// outputs, over which its tensor maps are described.
  std::map<std::string, std::vector<OperandArray>> operands;
};

/// One program per export of `module` (pk IR), launching the kernels
/// `plans` names. Shared memory and register counts are filled in later.
HostPrograms buildHostPrograms(mlir::ModuleOp module,
                               const std::map<mlir::Operation *, LaunchPlan> &plans);

/// Adds to each launch of a kernel of `module` (after the outline stage)
/// the tensor maps it reads its operands through
/// (pkgpu.operand_tensor_maps): parameters after those the host program
/// passed, each a box over a whole operand, row-major, its sizes the
/// operand's size expressions.
mlir::LogicalResult addOperandTensorMaps(mlir::ModuleOp module, HostPrograms &host);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_HOSTPROGRAM_H
