//===- ShapeText.cpp - Shapes as Python writes them -----------------------===//
#include "support/ShapeText.h"

namespace pk {

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

} // namespace pk
