//===- PkDialect.h - The pk dialect: types, attributes, ops -----*- C++ -*-===//
//
// The one header to include for the pk IR. See PkBase.td for what the
// dialect models.
//
//===----------------------------------------------------------------------===//
#ifndef PK_IR_PKDIALECT_H
#define PK_IR_PKDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "ir/PkDialect.h.inc"
#include "ir/PkEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "ir/PkTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/PkAttrs.h.inc"

#define GET_OP_CLASSES
#include "ir/PkOps.h.inc"

#define GET_OP_CLASSES
#include "ir/PkMosaicGpuOps.h.inc"

#define GET_OP_CLASSES
#include "ir/PkDmaOps.h.inc"

namespace pk {

/// Registers pk and the upstream dialects pk IR uses (arith, math, scf).
void registerPkDialects(mlir::DialectRegistry &registry);

/// Checks that `numIndices` indices pick one element of an array of
/// barriers or semaphores of `shape` (none for a single one).
mlir::LogicalResult verifyElementIndices(mlir::Operation *op, llvm::ArrayRef<int64_t> shape,
                                         size_t numIndices, llvm::StringRef what);

/// The export that encloses `op`, or null.
ExportOp getEnclosingExport(mlir::Operation *op);

/// The Ref a chain of `pk.ref_view`s of `ref` looks into (`ref` itself
/// when it is no view).
inline mlir::Value viewedRef(mlir::Value ref) {
  while (auto view = ref.getDefiningOp<RefViewOp>())
    ref = view.getRef();
  return ref;
}

/// The Ref whose memory `ref` aliases: `ref` seen through every view
/// (windows, `plgpu.transpose_ref`, `Ref.reshape`).
inline mlir::Value aliasedRef(mlir::Value ref) {
  while (mlir::Operation *def = ref.getDefiningOp()) {
    if (auto view = llvm::dyn_cast<RefViewOp>(def))
      ref = view.getRef();
    else if (auto transpose = llvm::dyn_cast<RefTransposeOp>(def))
      ref = transpose.getRef();
    else if (auto reshape = llvm::dyn_cast<RefReshapeOp>(def))
      ref = reshape.getRef();
    else if (auto member = llvm::dyn_cast<RefReinterpretOp>(def))
      ref = member.getBuffer(); // a plgpu.RefUnion's Refs share its buffer
    else
      break;
  }
  return ref;
}

} // namespace pk

#endif // PK_IR_PKDIALECT_H
