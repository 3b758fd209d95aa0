//===- Reductions.cpp - What each pk.reduce kind computes -----------------===//
#include "ir/Reductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace pk {

using namespace mlir;

TypedAttr reductionIdentity(ReductionKind kind, Type element) {
  if (auto f = llvm::dyn_cast<FloatType>(element)) {
    const llvm::fltSemantics &sem = f.getFloatSemantics();
    llvm::APFloat v = kind == ReductionKind::Mul    ? llvm::APFloat::getOne(sem)
                      : kind == ReductionKind::MaxF ? llvm::APFloat::getInf(sem, true)
                      : kind == ReductionKind::MinF ? llvm::APFloat::getInf(sem, false)
                                                    : llvm::APFloat::getZero(sem);
    return FloatAttr::get(element, v);
  }
  unsigned w = element.getIntOrFloatBitWidth();
  llvm::APInt v = llvm::APInt::getZero(w);
  switch (kind) {
  case ReductionKind::Mul:
    v = llvm::APInt(w, 1);
    break;
  case ReductionKind::MaxSI:
    v = llvm::APInt::getSignedMinValue(w);
    break;
  case ReductionKind::MinSI:
    v = llvm::APInt::getSignedMaxValue(w);
    break;
  case ReductionKind::MinUI:
  case ReductionKind::And:
    v = llvm::APInt::getAllOnes(w);
    break;
  default:
    break;
  }
  return IntegerAttr::get(element, v);
}

Value combineReduction(OpBuilder &builder, Location loc, ReductionKind kind, Value a, Value b) {
  bool isFloat = llvm::isa<FloatType>(getElementTypeOrSelf(a.getType()));
  switch (kind) {
  case ReductionKind::Add:
    return isFloat ? arith::AddFOp::create(builder, loc, a, b).getResult()
                   : arith::AddIOp::create(builder, loc, a, b).getResult();
  case ReductionKind::Mul:
    return isFloat ? arith::MulFOp::create(builder, loc, a, b).getResult()
                   : arith::MulIOp::create(builder, loc, a, b).getResult();
  case ReductionKind::MaxF:
    return arith::MaximumFOp::create(builder, loc, a, b);
  case ReductionKind::MinF:
    return arith::MinimumFOp::create(builder, loc, a, b);
  case ReductionKind::MaxSI:
    return arith::MaxSIOp::create(builder, loc, a, b);
  case ReductionKind::MinSI:
    return arith::MinSIOp::create(builder, loc, a, b);
  case ReductionKind::MaxUI:
    return arith::MaxUIOp::create(builder, loc, a, b);
  case ReductionKind::MinUI:
    return arith::MinUIOp::create(builder, loc, a, b);
  case ReductionKind::And:
    return arith::AndIOp::create(builder, loc, a, b);
  case ReductionKind::Or:
    return arith::OrIOp::create(builder, loc, a, b);
  case ReductionKind::Xor:
    return arith::XOrIOp::create(builder, loc, a, b);
  }
  llvm_unreachable("unknown reduction kind");
}

} // namespace pk
