//===- Compile.cpp - Dispatch to the target's backend ---------------------===//
#include "backends/Compile.h"

#include "backends/cuda/CudaBackend.h"
#include "backends/tpu/TpuBackend.h"

namespace pk::backends {

std::optional<BackendOutput> compile(mlir::ModuleOp module, const BackendOptions &options) {
  switch (options.target.kind) {
  case Target::Kind::Cuda:
    return cuda::compile(module, options);
  case Target::Kind::Tpu:
    return tpu::compile(module, options);
  }
  return std::nullopt;
}

} // namespace pk::backends
