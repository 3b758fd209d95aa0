//===- Rules.h - What a TPU can run, checked at the user's line -*- C++ -*-===//
//
// The TPU rules, each stated once: pk-tpu-check runs them over a whole
// module, and the lowering runs the op rules again right before lowering
// each op, so a rule and the code that relies on it cannot drift apart.
// A failed check has emitted an error on the op (whose location is the
// user's .pk line).
//
//===----------------------------------------------------------------------===//
#ifndef PK_BACKENDS_TPU_RULES_H
#define PK_BACKENDS_TPU_RULES_H

#include "ir/PkDialect.h"

namespace pk::backends::tpu {

/// The pallas_call-level rules: block shapes, memory spaces, grid,
/// dimension semantics, 64-bit operands.
mlir::LogicalResult checkCall(pk::PallasCallOp call);
/// The rules for one op inside a kernel or index map.
mlir::LogicalResult checkOp(mlir::Operation *op);
/// Every rule over every pallas_call of `module`; false after any error
/// (all are reported).
bool checkModule(mlir::ModuleOp module);

} // namespace pk::backends::tpu

#endif // PK_BACKENDS_TPU_RULES_H
