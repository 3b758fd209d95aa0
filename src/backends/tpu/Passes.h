//===- Passes.h - The TPU backend's passes ----------------------*- C++ -*-===//
#ifndef PK_BACKENDS_TPU_PASSES_H
#define PK_BACKENDS_TPU_PASSES_H

#include "backends/tpu/ir/MosaicDialect.h"
#include "ir/PkDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace pk::backends::tpu {

#define GEN_PASS_DECL
#include "backends/tpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "backends/tpu/Passes.h.inc"

/// Registers the dialects the TPU backend's output uses (for pk-opt).
inline void registerTpuDialects(mlir::DialectRegistry &registry) {
  mosaic::registerMosaicDialects(registry);
}

} // namespace pk::backends::tpu

#endif // PK_BACKENDS_TPU_PASSES_H
