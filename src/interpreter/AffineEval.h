//===- AffineEval.h - Evaluating affine expressions -------------*- C++ -*-===//
//
// Grids, symbolic shapes and index maps are affine expressions of the
// grid indices (dims) and symbolic sizes (symbols); the interpreter and
// the runtime evaluate them with MLIR's semantics (floordiv and mod round
// toward negative infinity).
//
//===----------------------------------------------------------------------===//
#ifndef PK_INTERPRETER_AFFINEEVAL_H
#define PK_INTERPRETER_AFFINEEVAL_H

#include "mlir/IR/AffineExpr.h"

#include <cstdint>
#include <vector>

namespace pk::interp {

int64_t evalAffine(mlir::AffineExpr expr, const std::vector<int64_t> &dims,
                   const std::vector<int64_t> &symbols);

} // namespace pk::interp

#endif // PK_INTERPRETER_AFFINEEVAL_H
