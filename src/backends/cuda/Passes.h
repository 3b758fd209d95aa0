//===- Passes.h - The CUDA backend's stages ---------------------*- C++ -*-===//
#ifndef PK_BACKENDS_CUDA_PASSES_H
#define PK_BACKENDS_CUDA_PASSES_H

#include "backends/cuda/ir/PkGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace pk::gpu {

#define GEN_PASS_DECL
#include "backends/cuda/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "backends/cuda/Passes.h.inc"

/// Registers pkgpu and the dialects the CUDA stages produce.
void registerCudaDialects(mlir::DialectRegistry &registry);

} // namespace pk::gpu

#endif // PK_BACKENDS_CUDA_PASSES_H
