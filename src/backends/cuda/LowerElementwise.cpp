//===- LowerElementwise.cpp - Element-wise ops, constants, iota, broadcasts ===//
//
// Element-wise ops act on each register alike, so they keep their ops and
// take vectors. Constants and iota depend on which elements a thread
// holds; broadcasts of a value whose layout is the result's with the
// broadcast dimensions dropped only pick registers.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace pk::gpu {

using namespace mlir;

LogicalResult lowerElementwise(Emitter &e, Operation *op) {
  OperationState state(op->getLoc(), op->getName());
  for (Value v : op->getOperands())
    state.addOperands(e.values.lookup(v));
  for (Type t : op->getResultTypes())
    state.addTypes(llvm::isa<RankedTensorType>(t) ? Type(e.vectorType(t)) : t);
  state.addAttributes(op->getAttrs());
  state.propertiesAttr = op->getPropertiesAsAttribute();
  Operation *copy = e.b.create(state);
  e.values.map(op->getResults(), copy->getResults());
  return success();
}

LogicalResult lowerConstant(Emitter &e, arith::ConstantOp op) {
  auto tensor = llvm::cast<RankedTensorType>(op.getType());
  auto dense = llvm::cast<DenseElementsAttr>(op.getValue());
  VectorType type = e.vectorType(tensor);
  if (dense.isSplat()) {
    e.values.map(op.getResult(),
                 arith::ConstantOp::create(e.b, op.getLoc(), type,
                                           DenseElementsAttr::get(type, dense.getSplatValue<Attribute>())));
    return success();
  }
  // Which element a register holds depends on the thread: select it from
  // the constant's values by the register's row-major index.
  Layout layout = *layoutOf(tensor);
  SmallVector<Attribute> values(dense.getValues<Attribute>());
  SmallVector<Value> elements;
  for (int64_t k = 0; k < layout.numRegisters(); ++k) {
    SmallVector<Value> c = e.coordinates(layout, k);
    Value linear = e.linearIndex(c, tensor.getShape());
    Value v = arith::ConstantOp::create(e.b, op.getLoc(), llvm::cast<TypedAttr>(values[0]));
    for (size_t i = 1; i < values.size(); ++i) {
      Value is = arith::CmpIOp::create(e.b, op.getLoc(), arith::CmpIPredicate::eq, linear, e.index(i));
      Value candidate = arith::ConstantOp::create(e.b, op.getLoc(), llvm::cast<TypedAttr>(values[i]));
      v = arith::SelectOp::create(e.b, op.getLoc(), is, candidate, v);
    }
    elements.push_back(v);
  }
  e.values.map(op.getResult(), e.fromElements(type, elements));
  return success();
}

LogicalResult lowerIota(Emitter &e, pk::IotaOp op) {
  auto tensor = llvm::cast<RankedTensorType>(op.getType());
  Layout layout = *layoutOf(tensor);
  VectorType type = e.vectorType(tensor);
  SmallVector<Value> elements;
  for (int64_t k = 0; k < layout.numRegisters(); ++k) {
    Value c = e.coordinate(layout, k, static_cast<unsigned>(op.getDimension()));
    Type element = tensor.getElementType();
    elements.push_back(llvm::isa<FloatType>(element)
                           ? arith::UIToFPOp::create(e.b, op.getLoc(), element,
                                                     arith::IndexCastOp::create(e.b, op.getLoc(), e.b.getI64Type(), c))
                                 .getResult()
                           : arith::IndexCastOp::create(e.b, op.getLoc(), element, c).getResult());
  }
  e.values.map(op.getResult(), e.fromElements(type, elements));
  return success();
}

LogicalResult lowerBroadcast(Emitter &e, pk::BroadcastInDimOp op) {
  auto result = llvm::cast<RankedTensorType>(op.getType());
  VectorType type = e.vectorType(result);
  Value source = e.values.lookup(op.getOperand());
  auto sourceTensor = llvm::dyn_cast<RankedTensorType>(op.getOperand().getType());
  if (!sourceTensor) {
    e.values.map(op.getResult(), e.splat(type, source));
    return success();
  }
  // The operand's layout is the result's with the broadcast dimensions
  // dropped (pk-gpu-assign-layouts made it so): result register k holds
  // what source register k' does, k' being k without those bits.
  Layout layout = *layoutOf(result);
  ArrayRef<int64_t> dims = op.getBroadcastDimensions();
  std::vector<bool> kept(layout.rank(), false);
  for (size_t i = 0; i < dims.size(); ++i)
    if (sourceTensor.getShape()[i] != 1)
      kept[dims[i]] = true;
  SmallVector<int64_t> mask;
  for (int64_t k = 0; k < layout.numRegisters(); ++k) {
    int64_t from = 0, bit = 0;
    for (size_t r = 0; r < layout.regs.size(); ++r) {
      const Basis &basis = layout.regs[r];
      if (basis.isNone() || !kept[basis.dim])
        continue;
      if ((k >> r) & 1)
        from |= int64_t(1) << bit;
      ++bit;
    }
    mask.push_back(from);
  }
  e.values.map(op.getResult(), vector::ShuffleOp::create(e.b, op.getLoc(), source, source, mask));
  return success();
}

} // namespace pk::gpu
