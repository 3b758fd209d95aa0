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
    addDmaRules(t);
    addPipelineRules(t);
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

const RefBinding *BodyLowering::ref(Value pkRef) {
  auto it = refs.find(pkRef);
  if (it != refs.end())
    return &it->second;
  Operation *view = views.lookup(pkRef);
  if (!view)
    return nullptr;
  FailureOr<RefBinding> binding = lowerRefViewHere(view, *this);
  if (failed(binding))
    return nullptr;
  viewBindings.push_back(*binding);
  return &viewBindings.back();
}

RefBinding wholeRefBinding(Value memref, pk::RefType ref) {
  RefBinding binding;
  binding.memref = memref;
  for (int64_t d = 0; d < ref.getRank(); ++d)
    binding.refAxis.push_back(static_cast<int>(d));
  binding.boolAsI32 = ref.getElementType().isInteger(1);
  return binding;
}

Value sliceMemref(OpBuilder &b, Location loc, Value base, ValueRange starts,
                  ArrayRef<int64_t> shape, ArrayRef<int64_t> kept, ValueRange dynamicSizes) {
  auto type = llvm::cast<MemRefType>(base.getType());
  auto window = [&](ArrayRef<int64_t> dims) {
    return MemRefType::get(dims, type.getElementType(), MemRefLayoutAttrInterface(),
                           type.getMemorySpace());
  };
  Value slice = mosaic::MemRefSliceOp::create(b, loc, window(shape), base, starts, dynamicSizes);
  if (kept == shape)
    return slice;
  return mosaic::MemRefSqueezeOp::create(b, loc, window(kept), slice);
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

/// Python's floor division and modulo (rounding toward negative infinity)
/// from the truncating arith.divsi / remsi, built as jnp.floor_divide and
/// jnp.remainder build them for integers, so that an index map written
/// `i // 2` lowers as Pallas lowers it.
Value sign(OpBuilder &b, Location loc, Value x) {
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  auto positive = arith::ExtUIOp::create(
      b, loc, b.getI32Type(), arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero));
  auto negative = arith::ExtUIOp::create(
      b, loc, b.getI32Type(), arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero));
  return arith::SubIOp::create(b, loc, positive, negative);
}

Value floorDiv(OpBuilder &b, Location loc, Value a, Value d) {
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  Value q = arith::DivSIOp::create(b, loc, a, d);
  Value signA = sign(b, loc, a), signD = sign(b, loc, d);
  Value signsDiffer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, signA, signD);
  Value rem = arith::RemSIOp::create(b, loc, a, d);
  Value inexact = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rem, zero);
  Value adjust = arith::AndIOp::create(b, loc, signsDiffer, inexact);
  Value one = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
  return arith::SelectOp::create(b, loc, adjust, arith::SubIOp::create(b, loc, q, one), q);
}

Value floorMod(OpBuilder &b, Location loc, Value a, Value d) {
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
  Value rem = arith::RemSIOp::create(b, loc, a, d);
  Value inexact = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rem, zero);
  Value remNegative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rem, zero);
  Value divisorNegative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, d, zero);
  Value signsDiffer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, remNegative, divisorNegative);
  Value adjust = arith::AndIOp::create(b, loc, signsDiffer, inexact);
  return arith::SelectOp::create(b, loc, adjust, arith::AddIOp::create(b, loc, rem, d), rem);
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
    return floorDiv(b, loc, lhs, rhs);
  case AffineExprKind::Mod:
    return floorMod(b, loc, lhs, rhs);
  case AffineExprKind::CeilDiv: {
    // pl.cdiv(a, d) = (a + d - 1) // d, as Pallas writes it.
    Value one = i32Constant(1, loc);
    Value top = arith::SubIOp::create(b, loc, arith::AddIOp::create(b, loc, lhs, rhs), one);
    return floorDiv(b, loc, top, rhs);
  }
  default:
    return i32Constant(0, loc); // no other affine kinds exist
  }
}

} // namespace pk::backends::tpu
