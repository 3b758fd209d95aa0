//===- Reductions.h - What each pk.reduce kind computes ---------*- C++ -*-===//
//
// The identity and the combining op of each ReductionKind, for the code
// that builds reductions out of element-wise ops: the array-code tracer's
// accumulation across tiles, the TPU scalar core's loops.
//
//===----------------------------------------------------------------------===//
#ifndef PK_IR_REDUCTIONS_H
#define PK_IR_REDUCTIONS_H

#include "ir/PkDialect.h"

#include "mlir/IR/Builders.h"

namespace pk {

/// The element `kind` starts from: 0 for add, 1 for mul, -inf for maxf,
/// the smallest signed integer for maxsi, all ones for and and minui.
mlir::TypedAttr reductionIdentity(ReductionKind kind, mlir::Type element);

/// `a` combined with `b` as `kind` does (element-wise on tensors): arith's
/// add, mul, maximumf (NaN propagates, as in JAX), maxsi, ...
mlir::Value combineReduction(mlir::OpBuilder &builder, mlir::Location loc, ReductionKind kind,
                             mlir::Value a, mlir::Value b);

} // namespace pk

#endif // PK_IR_REDUCTIONS_H
