//===- LowerMemory.cpp - Ref reads and writes -----------------------------===//
//
// As Pallas lowers them (jax/_src/pallas/mosaic/lowering.py, load and
// swap): a VMEM window is read with vector.load (tpu.strided_load when a
// stride is not 1) over every memref axis - squeezed block axes at index
// 0 with size 1 - then shape_cast (or extracted, for a scalar) to the
// value's shape; writes shape_cast the value to the window and
// tpu.vector_store it (masked when pl.store has a mask). SMEM holds
// scalars, read and written with memref.load / memref.store. Bools live
// in memory as i32: loads compare with 0, stores zero-extend.
//
// Unlike Pallas's swap, a store does not first load the old contents (the
// value was unused; Mosaic's canonicalizer drops it).
//
// Dynamic offsets are used as given: a window that leaves the Ref is
// undefined on a TPU, as in Pallas (the interpreter's clamping and
// wrapping of negative indices is interpret-mode behaviour).
//
//===----------------------------------------------------------------------===//
#include "backends/tpu/BodyLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace pk::backends::tpu {

using namespace mlir;

namespace {

/// A Ref window in memref terms: one index, size and stride per memref
/// axis.
struct MemrefWindow {
  SmallVector<Value> indices;
  SmallVector<int64_t> shape;
  SmallVector<int32_t> strides;
  bool strided = false;
};

MemrefWindow memrefWindow(BodyLowering &l, const RefBinding &ref,
                          ArrayRef<OpFoldResult> offsets, ArrayRef<int64_t> sizes,
                          ArrayRef<int64_t> strides, Location loc) {
  MemrefWindow w;
  for (int axis : ref.refAxis) {
    if (axis < 0) { // a squeezed block axis
      w.indices.push_back(l.indexConstant(0, loc));
      w.shape.push_back(1);
      w.strides.push_back(1);
      continue;
    }
    OpFoldResult offset = offsets[axis];
    if (auto attr = llvm::dyn_cast<Attribute>(offset))
      w.indices.push_back(l.indexConstant(llvm::cast<IntegerAttr>(attr).getInt(), loc));
    else
      w.indices.push_back(l.lookup(llvm::cast<Value>(offset)));
    w.shape.push_back(sizes[axis]);
    w.strides.push_back(static_cast<int32_t>(strides[axis]));
    w.strided |= strides[axis] != 1;
  }
  return w;
}

bool isSmem(Value memref) {
  auto space = llvm::dyn_cast_or_null<mosaic::MemorySpaceAttr>(
      llvm::cast<MemRefType>(memref.getType()).getMemorySpace());
  return space && space.getValue() == mosaic::MemorySpace::SMEM;
}

/// A loaded i32 that stands for a bool, as i1.
Value i32ToBool(OpBuilder &b, Location loc, Value v) {
  Type type = v.getType();
  TypedAttr zero = b.getZeroAttr(type);
  Value zeros = arith::ConstantOp::create(b, loc, type, zero);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zeros);
}

Type withElement(Type type, Type element) {
  if (auto vector = llvm::dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

LogicalResult lowerLoad(Operation *op, BodyLowering &l) {
  auto load = llvm::cast<pk::LoadOp>(op);
  const RefBinding *ref = l.ref(load.getRef());
  if (!ref)
    return op->emitError("the TPU backend does not know this Ref");
  OpBuilder &b = l.builder();
  Location loc = op->getLoc();
  MemrefWindow w = memrefWindow(l, *ref, load.getMixedOffsets(), load.getSizes(),
                                load.getStrides(), loc);
  Type element = llvm::cast<MemRefType>(ref->memref.getType()).getElementType();
  Type result = BodyLowering::convertType(load.getType());
  Value v;
  if (isSmem(ref->memref)) {
    v = memref::LoadOp::create(b, loc, ref->memref, w.indices);
  } else {
    auto windowType = VectorType::get(w.shape, element);
    v = w.strided ? mosaic::StridedLoadOp::create(b, loc, windowType, ref->memref, w.indices,
                                                  b.getDenseI32ArrayAttr(w.strides))
                        .getResult()
                  : vector::LoadOp::create(b, loc, windowType, ref->memref, w.indices).getResult();
    if (!llvm::isa<VectorType>(result)) {
      SmallVector<int64_t> zeros(w.shape.size(), 0);
      v = vector::ExtractOp::create(b, loc, v, zeros);
    } else if (llvm::cast<VectorType>(result).getShape() != ArrayRef<int64_t>(w.shape)) {
      v = vector::ShapeCastOp::create(b, loc, withElement(result, element), v);
    }
  }
  if (ref->boolAsI32)
    v = i32ToBool(b, loc, v);
  l.map(load.getResult(), v);
  return success();
}

LogicalResult lowerStore(Operation *op, BodyLowering &l) {
  auto store = llvm::cast<pk::StoreOp>(op);
  const RefBinding *ref = l.ref(store.getRef());
  if (!ref)
    return op->emitError("the TPU backend does not know this Ref");
  OpBuilder &b = l.builder();
  Location loc = op->getLoc();
  MemrefWindow w = memrefWindow(l, *ref, store.getMixedOffsets(), store.getSizes(),
                                store.getStrides(), loc);
  Type element = llvm::cast<MemRefType>(ref->memref.getType()).getElementType();
  Value v = l.lookup(store.getValue());
  if (ref->boolAsI32)
    v = arith::ExtUIOp::create(b, loc, withElement(v.getType(), element), v);
  if (isSmem(ref->memref)) {
    memref::StoreOp::create(b, loc, v, ref->memref, w.indices);
    return success();
  }
  auto windowType = VectorType::get(w.shape, element);
  if (!llvm::isa<VectorType>(v.getType()))
    v = vector::BroadcastOp::create(b, loc, windowType, v); // a scalar into a 1x..x1 window
  else if (v.getType() != windowType)
    v = vector::ShapeCastOp::create(b, loc, windowType, v);
  if (w.strided) {
    mosaic::StridedStoreOp::create(b, loc, v, ref->memref, w.indices,
                                   b.getDenseI32ArrayAttr(w.strides));
    return success();
  }
  Value mask;
  if (Value pkMask = store.getMask()) {
    mask = l.lookup(pkMask);
    auto maskType = windowType.clone(b.getI1Type());
    if (mask.getType() != maskType)
      mask = vector::ShapeCastOp::create(b, loc, maskType, mask);
  }
  mosaic::VectorStoreOp::create(b, loc, v, ref->memref, w.indices, b.getDenseI32ArrayAttr({}), mask,
                                /*add=*/false);
  return success();
}

} // namespace

void addMemoryRules(RuleTable &rules) {
  rules[TypeID::get<pk::LoadOp>()] = lowerLoad;
  rules[TypeID::get<pk::StoreOp>()] = lowerStore;
}

} // namespace pk::backends::tpu
