//===- MosaicDialect.h - The subset of Mosaic's tpu dialect -----*- C++ -*-===//
//
// The `tpu` dialect as pkc emits it (see MosaicBase.td): the one header to
// include for its attributes and ops.
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_TPU_IR_MOSAICDIALECT_H
#define PK_BACKENDS_TPU_IR_MOSAICDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "backends/tpu/ir/MosaicDialect.h.inc"
#include "backends/tpu/ir/MosaicEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "backends/tpu/ir/MosaicTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "backends/tpu/ir/MosaicAttrs.h.inc"

#define GET_OP_CLASSES
#include "backends/tpu/ir/MosaicOps.h.inc"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace pk::mosaic {

/// Registers `tpu` and every dialect a Mosaic kernel module uses (func,
/// arith, math, scf, vector, memref).
void registerMosaicDialects(mlir::DialectRegistry &registry);

} // namespace pk::mosaic

#endif // PK_BACKENDS_TPU_IR_MOSAICDIALECT_H
