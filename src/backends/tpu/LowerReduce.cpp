//===- LowerReduce.cpp - Reductions and argmax/argmin ---------------------===//
//
// As Pallas lowers reduce_{sum,max,min}: vector.multi_reduction from the
// kind's identity. A reduction to a scalar first adds a leading unit axis
// (Mosaic has no 0-d vectors), reduces all other axes and extracts the
// element. jnp.all / jnp.any reduce bools through floats (select 1.0 /
// 0.0, min / max, compare with 0), as Pallas does, since Mosaic's
// reductions take numbers. argmax/argmin are tpu.reduce_index on f32.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/BodyLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

namespace pk::backends::tpu {

using namespace mlir;

namespace {

/// The combining kind and identity for a numeric reduction.
std::pair<vector::CombiningKind, TypedAttr> kindAndIdentity(OpBuilder &b, pk::ReductionKind kind,
                                                            Type element) {
  bool isFloat = llvm::isa<FloatType>(element);
  auto floatAttr = [&](double v) { return b.getFloatAttr(element, v); };
  auto intAttr = [&](int64_t v) { return b.getIntegerAttr(element, v); };
  double inf = std::numeric_limits<double>::infinity();
  switch (kind) {
  case pk::ReductionKind::Add:
    return {vector::CombiningKind::ADD, isFloat ? TypedAttr(floatAttr(0.0)) : TypedAttr(intAttr(0))};
  case pk::ReductionKind::MaxF:
    return {vector::CombiningKind::MAXIMUMF, floatAttr(-inf)};
  case pk::ReductionKind::MinF:
    return {vector::CombiningKind::MINIMUMF, floatAttr(inf)};
  case pk::ReductionKind::MaxSI:
    return {vector::CombiningKind::MAXSI, intAttr(std::numeric_limits<int32_t>::min())};
  case pk::ReductionKind::MinSI:
    return {vector::CombiningKind::MINSI, intAttr(std::numeric_limits<int32_t>::max())};
  default: // pk-tpu-check rejects the rest
    return {vector::CombiningKind::ADD, isFloat ? TypedAttr(floatAttr(0.0)) : TypedAttr(intAttr(0))};
  }
}

/// multi_reduction of `x` over `axes` to `resultType` (a vector or, for a
/// full reduction, a scalar).
Value reduceNumbers(OpBuilder &b, Location loc, Value x, pk::ReductionKind kind,
                    ArrayRef<int64_t> axes, Type resultType) {
  auto in = llvm::cast<VectorType>(x.getType());
  Type element = in.getElementType();
  auto [combining, identity] = kindAndIdentity(b, kind, element);
  if (auto out = llvm::dyn_cast<VectorType>(resultType)) {
    Value acc = arith::ConstantOp::create(b, loc, out, DenseElementsAttr::get(out, identity));
    return vector::MultiDimReductionOp::create(b, loc, out, combining, x, acc, axes);
  }
  // To a scalar: reduce a (1, ...) vector to (1,) and take its element.
  SmallVector<int64_t> shape{1};
  llvm::append_range(shape, in.getShape());
  Value expanded = vector::ShapeCastOp::create(b, loc, VectorType::get(shape, element), x);
  SmallVector<int64_t> shifted;
  for (int64_t a : axes)
    shifted.push_back(a + 1);
  auto one = VectorType::get({1}, element);
  Value acc = arith::ConstantOp::create(b, loc, one, DenseElementsAttr::get(one, identity));
  Value reduced = vector::MultiDimReductionOp::create(b, loc, one, combining, expanded, acc, shifted);
  // Pallas reduces with keepdims and squeezes: (1,) -> (1, 1, ...) -> scalar.
  SmallVector<int64_t> ones(shape.size(), 1);
  Value kept = vector::ShapeCastOp::create(b, loc, VectorType::get(ones, element), reduced);
  return vector::ExtractOp::create(b, loc, kept, SmallVector<int64_t>(ones.size(), 0));
}

/// `splat` of `value` with the shape of `like` (a vector) or a scalar.
Value constantLike(OpBuilder &b, Location loc, Type like, TypedAttr value) {
  if (auto vector = llvm::dyn_cast<VectorType>(like))
    return arith::ConstantOp::create(b, loc, vector, DenseElementsAttr::get(vector, value));
  return arith::ConstantOp::create(b, loc, like, value);
}

LogicalResult lowerReduce(Operation *op, BodyLowering &l) {
  auto reduce = llvm::cast<pk::ReduceOp>(op);
  OpBuilder &b = l.builder();
  Location loc = op->getLoc();
  Value x = l.lookup(reduce.getOperand());
  Type result = BodyLowering::convertType(reduce.getType());
  pk::ReductionKind kind = reduce.getKind();
  if (kind != pk::ReductionKind::And && kind != pk::ReductionKind::Or) {
    l.map(reduce.getResult(), reduceNumbers(b, loc, x, kind, reduce.getAxes(), result));
    return success();
  }
  // all = min(where(x, 1.0, 0.0)) > 0; any = max(...) > 0.
  auto floats = llvm::cast<VectorType>(x.getType()).clone(b.getF32Type());
  Value ones = constantLike(b, loc, floats, b.getF32FloatAttr(1.0));
  Value zeros = constantLike(b, loc, floats, b.getF32FloatAttr(0.0));
  Value asFloat = arith::SelectOp::create(b, loc, x, ones, zeros);
  Type floatResult = llvm::isa<VectorType>(result)
                         ? Type(llvm::cast<VectorType>(result).clone(b.getF32Type()))
                         : Type(b.getF32Type());
  Value reduced = reduceNumbers(
      b, loc, asFloat, kind == pk::ReductionKind::And ? pk::ReductionKind::MinF : pk::ReductionKind::MaxF,
      reduce.getAxes(), floatResult);
  Value zero = constantLike(b, loc, floatResult, b.getF32FloatAttr(0.0));
  l.map(reduce.getResult(), arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, reduced, zero));
  return success();
}

LogicalResult lowerArgReduce(Operation *op, BodyLowering &l) {
  auto arg = llvm::cast<pk::ArgReduceOp>(op);
  OpBuilder &b = l.builder();
  Location loc = op->getLoc();
  Value x = l.lookup(arg.getOperand());
  auto in = llvm::cast<VectorType>(x.getType());
  auto kind = arg.getKind() == pk::ReductionKind::MaxF ? mosaic::ReductionKind::ArgMax
                                                       : mosaic::ReductionKind::ArgMin;
  auto kindAttr = mosaic::ReductionKindAttr::get(b.getContext(), kind);
  int64_t axis = arg.getAxis();
  Type result = BodyLowering::convertType(arg.getType());
  if (in.getRank() == 1) {
    // Mosaic reduces rank >= 2: go through (1, N).
    Value twoD = vector::ShapeCastOp::create(
        b, loc, VectorType::get({1, in.getDimSize(0)}, in.getElementType()), x);
    Value index = mosaic::ReduceIndexOp::create(b, loc, VectorType::get({1}, b.getI32Type()), twoD,
                                                b.getI32IntegerAttr(1), kindAttr);
    l.map(arg.getResult(), vector::ExtractOp::create(b, loc, index, ArrayRef<int64_t>{0}));
    return success();
  }
  l.map(arg.getResult(), mosaic::ReduceIndexOp::create(b, loc, result, x,
                                                      b.getI32IntegerAttr(axis), kindAttr));
  return success();
}

} // namespace

void addReduceRules(RuleTable &rules) {
  rules[TypeID::get<pk::ReduceOp>()] = lowerReduce;
  rules[TypeID::get<pk::ArgReduceOp>()] = lowerArgReduce;
}

} // namespace pk::backends::tpu
