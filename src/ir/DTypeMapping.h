//===- DTypeMapping.h - .pk dtypes as MLIR types ----------------*- C++ -*-===//
//
// Full arrays and Refs keep signedness in their element type (ui8 vs i8);
// block values are signless, as arith requires, and the ops that care
// (divui, cmpi ult, uitofp) carry signedness instead.
//
//===----------------------------------------------------------------------===//
#ifndef PK_IR_DTYPEMAPPING_H
#define PK_IR_DTYPEMAPPING_H

#include "support/DType.h"

#include "mlir/IR/Types.h"

#include <optional>

namespace pk {

/// The storage type of `dtype`: ui8 for u8, i8 for i8, i1 for bool.
mlir::Type storageType(mlir::MLIRContext *context, DType dtype);
/// The signless type block values of `dtype` have.
mlir::Type signlessType(mlir::MLIRContext *context, DType dtype);
/// Inverse of storageType; signless integers read as signed.
std::optional<DType> dtypeOf(mlir::Type type);

} // namespace pk

#endif // PK_IR_DTYPEMAPPING_H
