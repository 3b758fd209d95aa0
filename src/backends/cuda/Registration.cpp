//===- Registration.cpp - Dialects the CUDA stages use --------------------===//
#include "backends/cuda/Passes.h"

#include "ir/PkDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace pk::gpu {

void registerCudaDialects(mlir::DialectRegistry &registry) {
  registry.insert<PkGpuDialect, mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                  mlir::NVVM::NVVMDialect, mlir::vector::VectorDialect,
                  mlir::cf::ControlFlowDialect, mlir::affine::AffineDialect>();
}

} // namespace pk::gpu
