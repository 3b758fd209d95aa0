//===- PkDialect.cpp ------------------------------------------------------===//
#include "ir/PkDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "ir/PkDialect.cpp.inc"
#include "ir/PkEnums.cpp.inc"

namespace pk {

void PkDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "ir/PkOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/PkMosaicGpuOps.cpp.inc"
      ,
#define GET_OP_LIST
#include "ir/PkDmaOps.cpp.inc"
      >();
}

void registerPkDialects(mlir::DialectRegistry &registry) {
  registry.insert<PkDialect, mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect>();
}

ExportOp getEnclosingExport(mlir::Operation *op) {
  return op ? op->getParentOfType<ExportOp>() : ExportOp();
}

} // namespace pk
