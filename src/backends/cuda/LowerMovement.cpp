//===- LowerMovement.cpp - Data movement between threads ------------------===//
//
// Ops that only relabel elements (transposes, regrouping reshapes, layout
// conversions that permute registers, slices of whole registers,
// concatenations that only add constants after an operand in place) cost
// nothing; a butterfly (a sort's exchange) within a warp is a permutation
// of registers or a warp shuffle. The rest (slices,
// concatenations, irregular reshapes, general layout conversions) go
// through shared memory: owners write their elements at a row-major
// index, the CTA synchronizes, and each thread reads the elements its
// result layout gives it.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

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

bool isSplatConstant(Value v) {
  DenseElementsAttr dense;
  return matchPattern(v, m_Constant(&dense)) && dense.isSplat();
}

bool hasPadding(const Layout &layout, ArrayRef<int64_t> shape) {
  for (unsigned d = 0; d < layout.rank(); ++d)
    if (shape[d] < layout.shape[d])
      return true;
  return false;
}

void writeShared(Emitter &e, Value vector, const Layout &layout, ArrayRef<int64_t> shape,
                 IndexFn index, Emitter::Exchange exchange, Type element) {
  Value owner = e.isOwner(layout);
  auto store = [&](int64_t k, Value at) {
    Value value = e.extract(vector, k);
    e.storeValue(value, e.sharedPointer(e.index(exchange.offset), element, at), element);
  };
  if (!hasPadding(layout, shape)) {
    // Every register is in the shape: the owners write them all.
    e.guarded(owner, [&] {
      for (int64_t k = 0; k < layout.numRegisters(); ++k)
        if (Value at = index(e.coordinates(layout, k)))
          store(k, at);
    });
    return;
  }
  // A register that must not be written (padding, or a copy another
  // thread owns) goes to the thread's own slot past the elements: a select
  // rather than a branch per register, so that straight-line code stays
  // one block (thousands of branches made the lowering to LLVM quadratic
  // in a kernel's size), and no two threads write one address.
  assert(exchange.ownSlots && "a padded layout writes through an exchange with own slots");
  Value ownSlot;
  for (int64_t k = 0; k < layout.numRegisters(); ++k) {
    Value valid = e.andOf(owner, e.inShape(layout, shape, k));
    if (valid && matchPattern(valid, m_Zero()))
      continue;
    Value at = index(e.coordinates(layout, k));
    if (!at)
      continue;
    if (valid) {
      if (!ownSlot)
        ownSlot = arith::AddIOp::create(e.b, e.loc, e.index(exchange.elements), e.threadId());
      at = arith::SelectOp::create(e.b, e.loc, valid, at, ownSlot);
    }
    store(k, at);
  }
}

Value readShared(Emitter &e, VectorType type, const Layout &layout, ArrayRef<int64_t> shape,
                 IndexFn index, int64_t offset) {
  Type element = type.getElementType();
  SmallVector<Value> elements;
  Value zero = e.constant(element, 0);
  // A register outside the shape reads element 0, which every read has,
  // and keeps zero: a select rather than a branch per register, so that
  // straight-line code stays one block (thousands of branches made the
  // lowering to LLVM quadratic in a kernel's size).
  bool empty = product(shape) == 0;
  for (int64_t k = 0; k < layout.numRegisters(); ++k) {
    Value valid = e.inShape(layout, shape, k);
    if (empty || (valid && matchPattern(valid, m_Zero()))) {
      elements.push_back(zero);
      continue;
    }
    Value at = index(e.coordinates(layout, k));
    if (valid)
      at = arith::SelectOp::create(e.b, e.loc, valid, at, e.index(0));
    Value loaded = e.loadValue(e.sharedPointer(e.index(offset), element, at), element, element);
    elements.push_back(valid ? arith::SelectOp::create(e.b, e.loc, valid, loaded, zero) : loaded);
  }
  return e.fromElements(type, elements);
}

Value relayout(Emitter &e, Value vector, const Layout &from, const Layout &to, ArrayRef<int64_t> shape,
               Type element) {
  if (from == to)
    return vector;
  if (std::optional<SmallVector<int64_t>> mask = registerPermutation(from, to))
    return vector::ShuffleOp::create(e.b, e.loc, vector, vector, *mask);
  Emitter::Exchange exchange =
      e.beginSharedExchange(product(shape), element, hasPadding(from, shape));
  auto rowMajor = [&](ArrayRef<Value> c) { return e.linearIndex(c, shape); };
  writeShared(e, vector, from, shape, rowMajor, exchange, element);
  e.barrier();
  return readShared(e, VectorType::get({to.numRegisters()}, element), to, shape, rowMajor,
                    exchange.offset);
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
  Emitter::Exchange exchange = e.beginSharedExchange(from.getNumElements(), element,
                                                     hasPadding(fromLayout, from.getShape()));
  writeShared(
      e, source, fromLayout, from.getShape(),
      [&](ArrayRef<Value> c) { return e.linearIndex(c, from.getShape()); }, exchange, element);
  e.barrier();
  e.values.map(op.getResult(),
               readShared(
                   e, e.vectorType(to), toLayout, to.getShape(),
                   [&](ArrayRef<Value> c) { return e.linearIndex(c, to.getShape()); },
                   exchange.offset));
  return success();
}

LogicalResult lowerSlice(Emitter &e, pk::SliceOp op) {
  auto from = llvm::cast<RankedTensorType>(op.getOperand().getType());
  auto to = llvm::cast<RankedTensorType>(op.getType());
  Type element = to.getElementType();
  // Whole registers (AssignLayouts chose Layout::registerSlice): register
  // k of the result is the source register whose kept bits are k's and
  // whose dropped bits are the start's.
  Layout source = *layoutOf(from), result = *layoutOf(to);
  if (std::optional<Layout> picked =
          source.registerSlice(op.getStartIndices(), to.getShape(), from.getShape());
      picked && *picked == result &&
      llvm::all_of(op.getStrides(), [](int64_t s) { return s == 1; })) {
    int64_t fixed = 0;
    SmallVector<int> kept;
    for (auto [position, basis] : llvm::enumerate(source.regs)) {
      if (result.registerBit(basis) >= 0 || basis.isNone()) {
        kept.push_back(static_cast<int>(position));
        continue;
      }
      if ((op.getStartIndices()[basis.dim] >> basis.bit) & 1)
        fixed |= int64_t(1) << position;
    }
    SmallVector<int64_t> mask;
    for (int64_t k = 0; k < result.numRegisters(); ++k) {
      int64_t index = fixed;
      for (auto [bit, position] : llvm::enumerate(kept))
        if ((k >> bit) & 1)
          index |= int64_t(1) << position;
      mask.push_back(index);
    }
    Value registers = e.values.lookup(op.getOperand());
    e.values.map(op.getResult(),
                 vector::ShuffleOp::create(e.b, e.loc, registers, registers, mask).getResult());
    return success();
  }
  Emitter::Exchange exchange = e.beginSharedExchange(from.getNumElements(), element,
                                                     hasPadding(*layoutOf(from), from.getShape()));
  writeShared(
      e, e.values.lookup(op.getOperand()), *layoutOf(from), from.getShape(),
      [&](ArrayRef<Value> c) { return e.linearIndex(c, from.getShape()); }, exchange, element);
  e.barrier();
  ArrayRef<int64_t> start = op.getStartIndices(), strides = op.getStrides();
  e.values.map(
      op.getResult(), readShared(
                          e, e.vectorType(to), *layoutOf(to), to.getShape(),
                          [&](ArrayRef<Value> c) {
                            SmallVector<Value> source;
                            for (size_t d = 0; d < c.size(); ++d)
                              source.push_back(arith::AddIOp::create(
                                  e.b, e.loc, e.index(start[d]),
                                  arith::MulIOp::create(e.b, e.loc, c[d], e.index(strides[d]))));
                            return e.linearIndex(source, from.getShape());
                          },
                          exchange.offset));
  return success();
}

namespace {

/// A concatenation whose first operand already has the result's layout
/// (so each of its elements is in the register where the result wants it)
/// and whose other operands are splats: jnp.pad's padding after an axis.
/// Each register takes the first operand's register or a constant by its
/// coordinate along the axis, with no exchange; null when the operands
/// are not so.
Value concatenateInPlace(Emitter &e, pk::ConcatenateOp op) {
  auto to = llvm::cast<RankedTensorType>(op.getType());
  unsigned dim = static_cast<unsigned>(op.getDimension());
  Layout result = *layoutOf(to);
  Value first = op.getOperands().front();
  auto firstType = llvm::cast<RankedTensorType>(first.getType());
  if (*layoutOf(firstType) != result)
    return Value();
  // ends[i]: where operand i stops along the axis; splats[i]: the value of
  // every element of operand i > 0 (the first's come per register, below).
  SmallVector<int64_t> ends{firstType.getShape()[dim]};
  SmallVector<Value> splats{Value()};
  for (Value operand : op.getOperands().drop_front()) {
    if (!isSplatConstant(operand))
      return Value();
    splats.push_back(e.extract(e.values.lookup(operand), 0));
    ends.push_back(ends.back() + llvm::cast<RankedTensorType>(operand.getType()).getShape()[dim]);
  }
  Value registers = e.values.lookup(first);
  SmallVector<Value> elements;
  for (int64_t k = 0; k < result.numRegisters(); ++k) {
    Value c = e.coordinate(result, k, dim);
    std::optional<int64_t> fixed = getConstantIntValue(c);
    // From the last operand back: the element is operand i's where c lies
    // below its end.
    Value v = splats.back();
    for (size_t i = ends.size() - 1; i-- > 0;) {
      Value source = i == 0 ? e.extract(registers, k) : splats[i];
      if (fixed) {
        if (*fixed < ends[i])
          v = source;
        continue;
      }
      Value inside = e.below(c, e.index(ends[i]));
      v = inside ? arith::SelectOp::create(e.b, e.loc, inside, source, v).getResult() : source;
    }
    elements.push_back(v);
  }
  return e.fromElements(e.vectorType(to), elements);
}

} // namespace

LogicalResult lowerConcatenate(Emitter &e, pk::ConcatenateOp op) {
  if (Value inPlace = concatenateInPlace(e, op)) {
    e.values.map(op.getResult(), inPlace);
    return success();
  }
  auto to = llvm::cast<RankedTensorType>(op.getType());
  Type element = to.getElementType();
  unsigned dim = static_cast<unsigned>(op.getDimension());
  bool padded = llvm::any_of(op.getOperands(), [](Value operand) {
    auto from = llvm::cast<RankedTensorType>(operand.getType());
    return hasPadding(*layoutOf(from), from.getShape());
  });
  Emitter::Exchange exchange = e.beginSharedExchange(to.getNumElements(), element, padded);
  int64_t along = 0;
  for (Value operand : op.getOperands()) {
    auto from = llvm::cast<RankedTensorType>(operand.getType());
    writeShared(
        e, e.values.lookup(operand), *layoutOf(from), from.getShape(),
        [&](ArrayRef<Value> c) {
          SmallVector<Value> placed(c.begin(), c.end());
          placed[dim] = arith::AddIOp::create(e.b, e.loc, c[dim], e.index(along));
          return e.linearIndex(placed, to.getShape());
        },
        exchange, element);
    along += from.getShape()[dim];
  }
  e.barrier();
  e.values.map(op.getResult(),
               readShared(
                   e, e.vectorType(to), *layoutOf(to), to.getShape(),
                   [&](ArrayRef<Value> c) { return e.linearIndex(c, to.getShape()); },
                   exchange.offset));
  return success();
}

LogicalResult lowerButterfly(Emitter &e, pk::ButterflyOp op) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  Layout layout = *layoutOf(type);
  Value source = e.values.lookup(op.getOperand());
  int64_t distance = op.getDistance();
  Basis basis{static_cast<int>(op.getDimension()), static_cast<int>(llvm::Log2_64(distance))};
  // The partner is in one of the thread's registers: a permutation of them.
  if (int r = layout.registerBit(basis); r >= 0) {
    SmallVector<int64_t> mask;
    for (int64_t k = 0; k < layout.numRegisters(); ++k)
      mask.push_back(k ^ (int64_t(1) << r));
    e.values.map(op.getResult(),
                 vector::ShuffleOp::create(e.b, e.loc, source, source, mask).getResult());
    return success();
  }
  // In another lane of the warp, the same register: one shuffle each.
  if (auto lane = llvm::find(layout.lanes, basis); lane != layout.lanes.end()) {
    unsigned laneMask = 1u << (lane - layout.lanes.begin());
    SmallVector<Value> elements;
    for (int64_t k = 0; k < layout.numRegisters(); ++k)
      elements.push_back(e.shuffleXor(e.extract(source, k), laneMask));
    e.values.map(op.getResult(), e.fromElements(e.vectorType(type), elements));
    return success();
  }
  if (!llvm::is_contained(layout.warps, basis))
    return op.emitError() << "internal error: the layout has no bit for the exchange's distance";
  // In another warp: through shared memory, reading the partner's index.
  ArrayRef<int64_t> shape = type.getShape();
  Type element = type.getElementType();
  Emitter::Exchange exchange =
      e.beginSharedExchange(type.getNumElements(), element, hasPadding(layout, shape));
  writeShared(
      e, source, layout, shape, [&](ArrayRef<Value> c) { return e.linearIndex(c, shape); },
      exchange, element);
  e.barrier();
  unsigned dim = op.getDimension();
  e.values.map(op.getResult(), readShared(
                                   e, e.vectorType(type), layout, shape,
                                   [&](ArrayRef<Value> c) {
                                     SmallVector<Value> partner(c.begin(), c.end());
                                     partner[dim] = arith::XOrIOp::create(e.b, e.loc, c[dim],
                                                                          e.index(distance));
                                     return e.linearIndex(partner, shape);
                                   },
                                   exchange.offset));
  return success();
}

} // namespace pk::gpu
