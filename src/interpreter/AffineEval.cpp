//===- AffineEval.cpp -----------------------------------------------------===//
#include "interpreter/AffineEval.h"

#include "mlir/IR/AffineExpr.h"

#include "llvm/Support/Casting.h"

namespace pk::interp {

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

} // namespace

int64_t evalAffine(mlir::AffineExpr expr, const std::vector<int64_t> &dims,
                   const std::vector<int64_t> &symbols) {
  if (auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(expr))
    return c.getValue();
  if (auto d = llvm::dyn_cast<mlir::AffineDimExpr>(expr))
    return dims.at(d.getPosition());
  if (auto s = llvm::dyn_cast<mlir::AffineSymbolExpr>(expr))
    return symbols.at(s.getPosition());
  auto binary = llvm::cast<mlir::AffineBinaryOpExpr>(expr);
  int64_t a = evalAffine(binary.getLHS(), dims, symbols);
  int64_t b = evalAffine(binary.getRHS(), dims, symbols);
  switch (expr.getKind()) {
  case mlir::AffineExprKind::Add:
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  case mlir::AffineExprKind::Mul:
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  case mlir::AffineExprKind::FloorDiv:
    return floorDiv(a, b);
  case mlir::AffineExprKind::CeilDiv:
    return b == 0 ? 0 : -floorDiv(-a, b);
  case mlir::AffineExprKind::Mod: {
    if (b == 0)
      return 0;
    int64_t m = a % b;
    return m < 0 ? m + (b < 0 ? -b : b) : m;
  }
  default:
    return 0;
  }
}

} // namespace pk::interp
