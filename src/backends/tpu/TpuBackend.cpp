//===- TpuBackend.cpp -----------------------------------------------------===//
#include "backends/tpu/TpuBackend.h"

#include "mlir/IR/Diagnostics.h"

namespace pk::backends::tpu {

std::optional<BackendOutput> compile(mlir::ModuleOp module, const BackendOptions &) {
  mlir::emitError(module.getLoc()) << "the TPU backend is not available in this build yet";
  return std::nullopt;
}

} // namespace pk::backends::tpu
