//===- LowerElementwise.cpp - arith and math on block values --------------===//
//
// Element-wise arith and math ops are the same ops on vectors (the generic
// rule in BodyLowering rebuilds them). The ops here need more: a dense
// tensor constant becomes a dense vector constant, and a bitcast of a
// vector is tpu.bitcast (arith.bitcast stays for scalars), as Pallas
// lowers bitcast_convert_type; so is pk.bitcast, which packs rows between
// widths, as Pallas lowers pltpu.bitcast; and jnp.isfinite's |x| < inf
// is the negation of tpu.weird, as Pallas lowers lax.is_finite.
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/BodyLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

namespace pk::backends::tpu {

using namespace mlir;

namespace {

LogicalResult lowerConstant(Operation *op, BodyLowering &l) {
  auto constant = llvm::cast<arith::ConstantOp>(op);
  Type type = BodyLowering::convertType(constant.getType());
  TypedAttr value = constant.getValue();
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value))
    value = dense.reshape(llvm::cast<ShapedType>(type));
  l.map(constant.getResult(), arith::ConstantOp::create(l.builder(), op->getLoc(), type, value));
  return success();
}

LogicalResult lowerBitcast(Operation *op, BodyLowering &l) {
  auto bitcast = llvm::cast<arith::BitcastOp>(op);
  Type type = BodyLowering::convertType(bitcast.getType());
  Value in = l.lookup(bitcast.getIn());
  Value out = llvm::isa<VectorType>(type)
                  ? mosaic::BitcastOp::create(l.builder(), op->getLoc(), type, in).getResult()
                  : arith::BitcastOp::create(l.builder(), op->getLoc(), type, in).getResult();
  l.map(bitcast.getResult(), out);
  return success();
}

/// `|x| < inf` (the elaborator's jnp.isfinite): not(tpu.weird(x)). Other
/// comparisons are rebuilt as they are.
LogicalResult lowerCompareFloat(Operation *op, BodyLowering &l) {
  auto cmp = llvm::cast<arith::CmpFOp>(op);
  auto abs = cmp.getLhs().getDefiningOp<math::AbsFOp>();
  if (cmp.getPredicate() != arith::CmpFPredicate::OLT || !abs ||
      !matchPattern(cmp.getRhs(), m_PosInfFloat()))
    return l.lowerStructurally(op);
  Type type = BodyLowering::convertType(cmp.getType());
  OpBuilder &b = l.builder();
  Value weird = mosaic::WeirdOp::create(b, op->getLoc(), type, l.lookup(abs.getOperand()));
  Value ones =
      llvm::isa<VectorType>(type)
          ? arith::ConstantOp::create(b, op->getLoc(), type,
                                      DenseElementsAttr::get(llvm::cast<ShapedType>(type), true))
                .getResult()
          : arith::ConstantIntOp::create(b, op->getLoc(), 1, 1).getResult();
  l.map(cmp.getResult(), arith::XOrIOp::create(b, op->getLoc(), weird, ones));
  return success();
}

LogicalResult lowerPackingBitcast(Operation *op, BodyLowering &l) {
  auto bitcast = llvm::cast<pk::BitcastOp>(op);
  Type type = BodyLowering::convertType(bitcast.getType());
  l.map(bitcast.getResult(),
        mosaic::BitcastOp::create(l.builder(), op->getLoc(), type, l.lookup(bitcast.getOperand())));
  return success();
}

} // namespace

void addElementwiseRules(RuleTable &rules) {
  rules[TypeID::get<arith::ConstantOp>()] = lowerConstant;
  rules[TypeID::get<arith::BitcastOp>()] = lowerBitcast;
  rules[TypeID::get<arith::CmpFOp>()] = lowerCompareFloat;
  rules[TypeID::get<pk::BitcastOp>()] = lowerPackingBitcast;
}

} // namespace pk::backends::tpu
