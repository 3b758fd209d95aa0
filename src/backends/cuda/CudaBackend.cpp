//===- CudaBackend.cpp ----------------------------------------------------===//
#include "backends/cuda/CudaBackend.h"

#include "mlir/IR/Diagnostics.h"

namespace pk::backends::cuda {

std::optional<BackendOutput> compile(mlir::ModuleOp module, const BackendOptions &) {
  mlir::emitError(module.getLoc()) << "the CUDA backend is not available in this build yet";
  return std::nullopt;
}

} // namespace pk::backends::cuda
