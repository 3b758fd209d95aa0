//===- ShapeText.cpp - Shapes as Python writes them -----------------------===//
#include "support/ShapeText.h"

#include <limits>

namespace pk {

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "(";
  // A size known only at run time (MLIR's ShapedType::kDynamic) is "?".
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + (shape[i] == std::numeric_limits<int64_t>::min()
                                ? std::string("?")
                                : std::to_string(shape[i]));
  return s + (shape.size() == 1 ? ",)" : ")");
}

} // namespace pk
