//===- BodyLowering.cpp - The op-by-op driver and shared helpers ----------===//
#include "backends/tpu/BodyLowering.h"

#include "backends/tpu/Rules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace pk::backends::tpu {

using namespace mlir;

namespace {

const RuleTable &rules() {
  static const RuleTable table = [] {
    RuleTable t;
    addGridRules(t);
    addMemoryRules(t);
    addShapeRules(t);
    addReduceRules(t);
    addDotRules(t);
    addElementwiseRules(t);
    return t;
  }();
  return table;
}

} // namespace

Type BodyLowering::convertType(Type type) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
    return VectorType::get(tensor.getShape(), tensor.getElementType());
  return type;
}

const RefBinding *BodyLowering::ref(Value pkRef) const {
  auto it = refs.find(pkRef);
  return it == refs.end() ? nullptr : &it->second;
}

LogicalResult BodyLowering::lowerOps(Block &block) {
  for (Operation &op : block)
    if (failed(lowerOp(&op)))
      return failure();
  return success();
}

LogicalResult BodyLowering::lowerOp(Operation *op) {
  if (failed(checkOp(op)))
    return failure();
  if (auto yield = llvm::dyn_cast<pk::YieldOp>(op)) {
    if (!onYield)
      return op->emitError("the TPU backend found a pk.yield it cannot place");
    return onYield(yield);
  }
  if (Rule rule = rules().lookup(op->getName().getTypeID()))
    return rule(op, *this);
  llvm::StringRef dialect = op->getName().getDialectNamespace();
  if (dialect == "arith" || dialect == "math" || dialect == "scf")
    return lowerStructurally(op);
  return op->emitError() << "the TPU backend cannot lower '" << op->getName() << "'";
}

LogicalResult BodyLowering::lowerStructurally(Operation *op) {
  OperationState state(op->getLoc(), op->getName());
  for (Value operand : op->getOperands()) {
    Value mapped = lookup(operand);
    if (!mapped)
      return op->emitError("the TPU backend has no value for an operand of this op");
    state.operands.push_back(mapped);
  }
  for (Type t : op->getResultTypes())
    state.types.push_back(convertType(t));
  // Inherent attributes (predicates, fastmath flags) come along with the
  // discardable ones.
  state.addAttributes(op->getAttrDictionary().getValue());
  for (unsigned i = 0; i < op->getNumRegions(); ++i)
    state.addRegion();
  Operation *lowered = b.create(state);
  for (auto [from, to] : llvm::zip(op->getRegions(), lowered->getRegions())) {
    for (Block &block : from) {
      auto *copy = new Block();
      to.push_back(copy);
      for (BlockArgument arg : block.getArguments())
        map(arg, copy->addArgument(convertType(arg.getType()), arg.getLoc()));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(copy);
      if (failed(lowerOps(block)))
        return failure();
    }
  }
  for (auto [from, to] : llvm::zip(op->getResults(), lowered->getResults()))
    map(from, to);
  return success();
}

Value BodyLowering::indexConstant(int64_t value, Location loc) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value BodyLowering::i32Constant(int64_t value, Location loc) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

Value BodyLowering::symbolValue(unsigned symbol, Location loc) {
  const SmallVector<unsigned> &table = kernelPlan.symbols;
  auto it = llvm::find(table, symbol);
  // planKernel lists every symbol an index map or symbolic_size reads.
  int64_t slot = it == table.end() ? 0 : it - table.begin();
  return memref::LoadOp::create(b, loc, symbols, ValueRange{indexConstant(slot, loc)});
}

namespace {

/// Python's floor division and modulo by a constant or a value, from the
/// truncating ops Mosaic has (arith.divsi / remsi), as jnp lowers them.
Value floorDivOrMod(OpBuilder &b, Location loc, Value a, Value d, bool wantMod) {
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  Value q = arith::DivSIOp::create(b, loc, a, d);
  Value r = arith::RemSIOp::create(b, loc, a, d);
  // Round toward negative infinity: adjust when r != 0 and r, d differ in sign.
  Value rNonZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
  Value rNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
  Value dNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, d, zero);
  Value signsDiffer = arith::XOrIOp::create(b, loc, rNeg, dNeg);
  Value adjust = arith::AndIOp::create(b, loc, rNonZero, signsDiffer);
  if (wantMod)
    return arith::SelectOp::create(b, loc, adjust, arith::AddIOp::create(b, loc, r, d), r);
  Value one = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
  return arith::SelectOp::create(b, loc, adjust, arith::SubIOp::create(b, loc, q, one), q);
}

} // namespace

Value BodyLowering::affineValue(AffineExpr expr, ValueRange dims, Location loc) {
  if (auto c = llvm::dyn_cast<AffineConstantExpr>(expr))
    return i32Constant(c.getValue(), loc);
  if (auto d = llvm::dyn_cast<AffineDimExpr>(expr))
    return dims[d.getPosition()];
  if (auto s = llvm::dyn_cast<AffineSymbolExpr>(expr))
    return symbolValue(s.getPosition(), loc);
  auto binary = llvm::cast<AffineBinaryOpExpr>(expr);
  Value lhs = affineValue(binary.getLHS(), dims, loc);
  Value rhs = affineValue(binary.getRHS(), dims, loc);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(b, loc, lhs, rhs);
  case AffineExprKind::Mul:
    return arith::MulIOp::create(b, loc, lhs, rhs);
  case AffineExprKind::FloorDiv:
    return floorDivOrMod(b, loc, lhs, rhs, false);
  case AffineExprKind::Mod:
    return floorDivOrMod(b, loc, lhs, rhs, true);
  case AffineExprKind::CeilDiv: {
    // ceil(a / d) = -floor(-a / d)
    Value zero = i32Constant(0, loc);
    Value negA = arith::SubIOp::create(b, loc, zero, lhs);
    return arith::SubIOp::create(b, loc, zero, floorDivOrMod(b, loc, negA, rhs, false));
  }
  default:
    return i32Constant(0, loc); // no other affine kinds exist
  }
}

} // namespace pk::backends::tpu
