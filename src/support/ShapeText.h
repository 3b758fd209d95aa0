//===- ShapeText.h - Shapes as Python writes them -------------*- C++ -*-===//
//
// Diagnostics quote shapes the way the user's Python prints them:
// (8, 128), (8,) for one dimension, () for a scalar.
//
//===----------------------------------------------------------------------===//
#ifndef PK_SUPPORT_SHAPETEXT_H
#define PK_SUPPORT_SHAPETEXT_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace pk {

/// A shape (or any tuple of ints, such as an index) as a Python tuple.
std::string shapeText(llvm::ArrayRef<int64_t> shape);

} // namespace pk

#endif // PK_SUPPORT_SHAPETEXT_H
