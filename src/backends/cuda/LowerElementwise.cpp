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
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

namespace {

/// Constants of more distinct elements than this are read from a table in
/// global memory; smaller ones select their value among the elements in
/// registers (a chain of selects per register, no memory traffic).
constexpr size_t kMaxSelectedElements = 32;

/// The constant's elements as an array in global memory: an internal
/// constant global of the kernel's gpu.module, one per distinct constant.
/// Booleans are stored as bytes, as in buffers.
LLVM::GlobalOp constantTable(Emitter &e, DenseElementsAttr dense) {
  auto module = e.func->getParentOfType<::mlir::gpu::GPUModuleOp>();
  Type element = dense.getElementType();
  int64_t count = dense.getNumElements();
  DenseElementsAttr flat;
  if (element.isInteger(1)) {
    SmallVector<int8_t> bytes;
    for (bool value : dense.getValues<bool>())
      bytes.push_back(value ? 1 : 0);
    flat = DenseElementsAttr::get(RankedTensorType::get({count}, e.b.getI8Type()),
                                  ArrayRef<int8_t>(bytes));
  } else {
    flat = dense.reshape(RankedTensorType::get({count}, element));
  }
  for (auto global : module.getOps<LLVM::GlobalOp>())
    if (global.getConstant() && global.getValueOrNull() == flat)
      return global;
  unsigned n = 0;
  std::string name;
  do
    name = "pk_constant_" + std::to_string(n++);
  while (module.lookupSymbol(name));
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(flat.getElementType(), static_cast<unsigned>(count));
  return LLVM::GlobalOp::create(b, e.loc, type, /*isConstant=*/true, LLVM::Linkage::Internal, name,
                                flat,
                                /*alignment=*/16, /*addrSpace=*/1);
}

} // namespace

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
  // Which element a register holds depends on the thread: each register
  // takes the element at its row-major index.
  Layout layout = *layoutOf(tensor);
  Type element = tensor.getElementType();
  SmallVector<Value> elements;
  if (static_cast<size_t>(dense.getNumElements()) > kMaxSelectedElements) {
    LLVM::GlobalOp table = constantTable(e, dense);
    Value base = e.cached("constant-" + table.getSymName().str(), [&](OpBuilder &p) -> Value {
      return LLVM::AddressOfOp::create(p, e.loc, LLVM::LLVMPointerType::get(p.getContext(), 1),
                                       table.getSymName());
    });
    // Registers in a layout's padding read the last element rather than
    // past the table.
    Value last =
        hasPadding(layout, tensor.getShape()) ? e.index(dense.getNumElements() - 1) : Value();
    for (int64_t k = 0; k < layout.numRegisters(); ++k) {
      Value linear = e.linearIndex(e.coordinates(layout, k), tensor.getShape());
      if (last)
        linear = arith::MinUIOp::create(e.b, op.getLoc(), linear, last);
      elements.push_back(e.loadValue(e.globalPointer(base, element, linear), element, element));
    }
    e.values.map(op.getResult(), e.fromElements(type, elements));
    return success();
  }
  SmallVector<Attribute> values(dense.getValues<Attribute>());
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
