//===- LowerMovement.cpp - Data movement between threads ------------------===//
//
// Ops that only relabel elements (transposes, regrouping reshapes, layout
// conversions that permute registers) cost nothing. The rest (slices,
// concatenations, irregular reshapes, general layout conversions) go
// through shared memory: owners write their elements at a row-major
// index, the CTA synchronizes, and each thread reads the elements its
// result layout gives it.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace pk::gpu {

using namespace mlir;

namespace {

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Register k of `to` is register mask[k] of `from`, when the two layouts
/// differ only in the order of their register bits.
std::optional<SmallVector<int64_t>> registerPermutation(const Layout &from, const Layout &to) {
  if (from.shape != to.shape || from.lanes != to.lanes || from.warps != to.warps ||
      from.regs.size() != to.regs.size())
    return std::nullopt;
  SmallVector<int> position;
  for (const Basis &basis : to.regs) {
    auto it = llvm::find(from.regs, basis);
    if (it == from.regs.end())
      return std::nullopt;
    position.push_back(static_cast<int>(it - from.regs.begin()));
  }
  SmallVector<int64_t> mask;
  for (int64_t k = 0; k < to.numRegisters(); ++k) {
    int64_t source = 0;
    for (size_t r = 0; r < position.size(); ++r)
      if ((k >> r) & 1)
        source |= int64_t(1) << position[r];
    mask.push_back(source);
  }
  return mask;
}

} // namespace

void writeShared(Emitter &e, Value vector, const Layout &layout, ArrayRef<int64_t> shape,
                 IndexFn index, int64_t offset, Type element) {
  Value owner = e.isOwner(layout);
  for (int64_t k = 0; k < layout.numRegisters(); ++k) {
    Value valid = e.andOf(owner, e.inShape(layout, shape, k));
    e.guarded(valid, [&] {
      Value at = index(e.coordinates(layout, k));
      if (!at)
        return;
      e.storeValue(e.extract(vector, k), e.sharedPointer(e.index(offset), element, at), element);
    });
  }
}

Value readShared(Emitter &e, VectorType type, const Layout &layout, ArrayRef<int64_t> shape,
                 IndexFn index, int64_t offset) {
  Type element = type.getElementType();
  SmallVector<Value> elements;
  Value zero = e.constant(element, 0);
  for (int64_t k = 0; k < layout.numRegisters(); ++k)
    elements.push_back(e.guardedValue(
        e.inShape(layout, shape, k), element,
        [&] {
          Value at = index(e.coordinates(layout, k));
          return e.loadValue(e.sharedPointer(e.index(offset), element, at), element, element);
        },
        zero));
  return e.fromElements(type, elements);
}

Value relayout(Emitter &e, Value vector, const Layout &from, const Layout &to, ArrayRef<int64_t> shape,
               Type element) {
  if (from == to)
    return vector;
  if (std::optional<SmallVector<int64_t>> mask = registerPermutation(from, to))
    return vector::ShuffleOp::create(e.b, e.loc, vector, vector, *mask);
  int64_t offset = e.beginSharedTemporary(product(shape) * elementBytes(element));
  auto rowMajor = [&](ArrayRef<Value> c) { return e.linearIndex(c, shape); };
  writeShared(e, vector, from, shape, rowMajor, offset, element);
  e.barrier();
  return readShared(e, VectorType::get({to.numRegisters()}, element), to, shape, rowMajor, offset);
}

LogicalResult lowerConvertLayout(Emitter &e, ConvertLayoutOp op) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  e.values.map(op.getResult(), relayout(e, e.values.lookup(op.getSource()),
                                        *layoutOf(op.getSource().getType()), *layoutOf(type),
                                        type.getShape(), type.getElementType()));
  return success();
}

LogicalResult lowerTranspose(Emitter &e, pk::TransposeOp op) {
  // The result's layout is the operand's with its dimensions renamed.
  e.values.map(op.getResult(), e.values.lookup(op.getOperand()));
  return success();
}

LogicalResult lowerReshape(Emitter &e, pk::ReshapeOp op) {
  Value source = e.values.lookup(op.getOperand());
  auto from = llvm::dyn_cast<RankedTensorType>(op.getOperand().getType());
  auto to = llvm::dyn_cast<RankedTensorType>(op.getType());
  if (!to) { // one element to a scalar: every register holds it
    e.values.map(op.getResult(), e.extract(source, 0));
    return success();
  }
  if (!from) {
    e.values.map(op.getResult(), e.splat(e.vectorType(to), source));
    return success();
  }
  Layout fromLayout = *layoutOf(from), toLayout = *layoutOf(to);
  std::optional<Layout> regrouped = fromLayout.reshaped(from.getShape(), to.getShape());
  if (regrouped && *regrouped == toLayout) {
    e.values.map(op.getResult(), source);
    return success();
  }
  // Row-major order is what a reshape keeps: write by the source's linear
  // index, read by the result's.
  Type element = to.getElementType();
  int64_t offset = e.beginSharedTemporary(from.getNumElements() * elementBytes(element));
  writeShared(e, source, fromLayout, from.getShape(),
              [&](ArrayRef<Value> c) { return e.linearIndex(c, from.getShape()); }, offset, element);
  e.barrier();
  e.values.map(op.getResult(),
               readShared(e, e.vectorType(to), toLayout, to.getShape(),
                          [&](ArrayRef<Value> c) { return e.linearIndex(c, to.getShape()); }, offset));
  return success();
}

LogicalResult lowerSlice(Emitter &e, pk::SliceOp op) {
  auto from = llvm::cast<RankedTensorType>(op.getOperand().getType());
  auto to = llvm::cast<RankedTensorType>(op.getType());
  Type element = to.getElementType();
  int64_t offset = e.beginSharedTemporary(from.getNumElements() * elementBytes(element));
  writeShared(e, e.values.lookup(op.getOperand()), *layoutOf(from), from.getShape(),
              [&](ArrayRef<Value> c) { return e.linearIndex(c, from.getShape()); }, offset, element);
  e.barrier();
  ArrayRef<int64_t> start = op.getStartIndices(), strides = op.getStrides();
  e.values.map(op.getResult(),
               readShared(e, e.vectorType(to), *layoutOf(to), to.getShape(),
                          [&](ArrayRef<Value> c) {
                            SmallVector<Value> source;
                            for (size_t d = 0; d < c.size(); ++d)
                              source.push_back(arith::AddIOp::create(
                                  e.b, e.loc, e.index(start[d]),
                                  arith::MulIOp::create(e.b, e.loc, c[d], e.index(strides[d]))));
                            return e.linearIndex(source, from.getShape());
                          },
                          offset));
  return success();
}

LogicalResult lowerConcatenate(Emitter &e, pk::ConcatenateOp op) {
  auto to = llvm::cast<RankedTensorType>(op.getType());
  Type element = to.getElementType();
  unsigned dim = static_cast<unsigned>(op.getDimension());
  int64_t offset = e.beginSharedTemporary(to.getNumElements() * elementBytes(element));
  int64_t along = 0;
  for (Value operand : op.getOperands()) {
    auto from = llvm::cast<RankedTensorType>(operand.getType());
    writeShared(e, e.values.lookup(operand), *layoutOf(from), from.getShape(),
                [&](ArrayRef<Value> c) {
                  SmallVector<Value> placed(c.begin(), c.end());
                  placed[dim] = arith::AddIOp::create(e.b, e.loc, c[dim], e.index(along));
                  return e.linearIndex(placed, to.getShape());
                },
                offset, element);
    along += from.getShape()[dim];
  }
  e.barrier();
  e.values.map(op.getResult(),
               readShared(e, e.vectorType(to), *layoutOf(to), to.getShape(),
                          [&](ArrayRef<Value> c) { return e.linearIndex(c, to.getShape()); }, offset));
  return success();
}

} // namespace pk::gpu
