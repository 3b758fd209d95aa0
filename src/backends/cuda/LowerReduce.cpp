//===- LowerReduce.cpp - Reductions over the threads of a CTA -------------===//
//
// A reduction along a dimension runs in three steps that follow the
// operand's layout: registers of a thread that differ only along that
// dimension are combined; then lanes, with butterfly warp shuffles over
// the lane bits that map to it; then warps, through shared memory, for the
// warp bits that map to it. The result stays where it landed: in the
// operand's layout with that dimension removed, held by every thread that
// took part, so a broadcast back needs no data movement. Narrow types are
// reduced in 32 bits and rounded once at the end, and padding elements
// (past the logical shape) count as the identity.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Distribute.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <limits>

namespace pk::gpu {

using namespace mlir;

namespace {

bool isUnsignedKind(pk::ReductionKind k) {
  return k == pk::ReductionKind::MaxUI || k == pk::ReductionKind::MinUI;
}

bool isMaxKind(pk::ReductionKind k) {
  return k == pk::ReductionKind::MaxF || k == pk::ReductionKind::MaxSI ||
         k == pk::ReductionKind::MaxUI;
}

/// How to combine two partial results, in a type wide enough to keep
/// narrow values exact.
struct Combiner {
  pk::ReductionKind kind;
  Type narrow, wide;
  bool isArg = false; ///< arg_reduce: (value, index) pairs

  Value widen(Emitter &e, Value v) const {
    if (v.getType() == wide)
      return v;
    if (llvm::isa<FloatType>(wide))
      return arith::ExtFOp::create(e.b, e.loc, wide, v);
    if (isUnsignedKind(kind) || narrow.isInteger(1))
      return arith::ExtUIOp::create(e.b, e.loc, wide, v);
    return arith::ExtSIOp::create(e.b, e.loc, wide, v);
  }

  Value narrowed(Emitter &e, Value v) const {
    if (v.getType() == narrow)
      return v;
    if (llvm::isa<FloatType>(wide))
      return arith::TruncFOp::create(e.b, e.loc, narrow, v);
    return arith::TruncIOp::create(e.b, e.loc, narrow, v);
  }

  Value identity(Emitter &e) const {
    unsigned bits = wide.getIntOrFloatBitWidth();
    double inf = std::numeric_limits<double>::infinity();
    switch (kind) {
    case pk::ReductionKind::Add:
    case pk::ReductionKind::Or:
    case pk::ReductionKind::Xor:
    case pk::ReductionKind::MaxUI:
      return e.constant(wide, 0);
    case pk::ReductionKind::Mul:
      return e.constant(wide, 1);
    case pk::ReductionKind::MaxF:
      return e.constant(wide, -inf);
    case pk::ReductionKind::MinF:
      return e.constant(wide, inf);
    case pk::ReductionKind::And:
    case pk::ReductionKind::MinUI:
      return arith::ConstantOp::create(e.b, e.loc, wide, e.b.getIntegerAttr(wide, APInt::getAllOnes(bits)));
    case pk::ReductionKind::MaxSI:
      return arith::ConstantOp::create(e.b, e.loc, wide,
                                       e.b.getIntegerAttr(wide, APInt::getSignedMinValue(bits)));
    case pk::ReductionKind::MinSI:
      return arith::ConstantOp::create(e.b, e.loc, wide,
                                       e.b.getIntegerAttr(wide, APInt::getSignedMaxValue(bits)));
    }
    return {};
  }

  Value combine(Emitter &e, Value a, Value c) const {
    OpBuilder &b = e.b;
    Location loc = e.loc;
    switch (kind) {
    case pk::ReductionKind::Add:
      return llvm::isa<FloatType>(wide) ? Value(arith::AddFOp::create(b, loc, a, c))
                                        : Value(arith::AddIOp::create(b, loc, a, c));
    case pk::ReductionKind::Mul:
      return llvm::isa<FloatType>(wide) ? Value(arith::MulFOp::create(b, loc, a, c))
                                        : Value(arith::MulIOp::create(b, loc, a, c));
    case pk::ReductionKind::MaxF:
      return arith::MaximumFOp::create(b, loc, a, c);
    case pk::ReductionKind::MinF:
      return arith::MinimumFOp::create(b, loc, a, c);
    case pk::ReductionKind::MaxSI:
      return arith::MaxSIOp::create(b, loc, a, c);
    case pk::ReductionKind::MinSI:
      return arith::MinSIOp::create(b, loc, a, c);
    case pk::ReductionKind::MaxUI:
      return arith::MaxUIOp::create(b, loc, a, c);
    case pk::ReductionKind::MinUI:
      return arith::MinUIOp::create(b, loc, a, c);
    case pk::ReductionKind::And:
      return arith::AndIOp::create(b, loc, a, c);
    case pk::ReductionKind::Or:
      return arith::OrIOp::create(b, loc, a, c);
    case pk::ReductionKind::Xor:
      return arith::XOrIOp::create(b, loc, a, c);
    }
    return {};
  }

  /// arg_reduce: whether candidate (v, i) beats the current (bv, bi). The
  /// first NaN wins, then the larger (smaller) value, then the smaller
  /// index: an order that does not depend on how elements are grouped.
  Value better(Emitter &e, Value v, Value i, Value bv, Value bi) const {
    OpBuilder &b = e.b;
    Location loc = e.loc;
    Value smallerIndex = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, bi);
    if (llvm::isa<FloatType>(wide)) {
      Value vNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
      Value bNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, bv, bv);
      Value strictly = arith::CmpFOp::create(
          b, loc, isMaxKind(kind) ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT, v, bv);
      Value equal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, v, bv);
      Value numbers = arith::OrIOp::create(b, loc, strictly,
                                           arith::AndIOp::create(b, loc, equal, smallerIndex));
      Value bothNan = arith::AndIOp::create(b, loc, vNan, bNan);
      Value onlyV = arith::AndIOp::create(
          b, loc, vNan, arith::XOrIOp::create(b, loc, bNan, e.constant(b.getI1Type(), 1)));
      Value eitherNan = arith::OrIOp::create(b, loc, vNan, bNan);
      Value neither = arith::XOrIOp::create(b, loc, eitherNan, e.constant(b.getI1Type(), 1));
      // (One op a statement: the order of a call's arguments is the
      // compiler's, and the IR must not depend on it.)
      Value nanTie = arith::AndIOp::create(b, loc, bothNan, smallerIndex);
      Value numberWins = arith::AndIOp::create(b, loc, neither, numbers);
      return arith::OrIOp::create(b, loc, onlyV, arith::OrIOp::create(b, loc, nanTie, numberWins));
    }
    arith::CmpIPredicate gt = isUnsignedKind(kind) ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
    arith::CmpIPredicate lt = isUnsignedKind(kind) ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
    Value strictly = arith::CmpIOp::create(b, loc, isMaxKind(kind) ? gt : lt, v, bv);
    Value equal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v, bv);
    return arith::OrIOp::create(b, loc, strictly, arith::AndIOp::create(b, loc, equal, smallerIndex));
  }
};

/// A partial result: the value, and for arg_reduce its index.
struct Partial {
  Value value, index;
};

Partial combine(Emitter &e, const Combiner &c, Partial a, Partial other) {
  if (!c.isArg)
    return {c.combine(e, a.value, other.value), {}};
  Value take = c.better(e, other.value, other.index, a.value, a.index);
  return {arith::SelectOp::create(e.b, e.loc, take, other.value, a.value),
          arith::SelectOp::create(e.b, e.loc, take, other.index, a.index)};
}

/// Reduces `axis` of the partials (one per register of `layout`), leaving
/// one per register of layout.reduced(axis).
void reduceAxis(Emitter &e, const Combiner &c, std::vector<Partial> &partials, Layout &layout,
                std::vector<int64_t> &logical, unsigned axis) {
  Location loc = e.loc;
  // Padding along the axis counts as the identity (and never wins an
  // arg_reduce: its index is the largest).
  if (logical[axis] < layout.shape[axis]) {
    Value identity = c.identity(e);
    Value lastIndex = e.i32(std::numeric_limits<int32_t>::max());
    for (int64_t k = 0; k < layout.numRegisters(); ++k) {
      Value inside = e.inShape(layout, logical, k);
      if (!inside)
        continue;
      partials[k].value = arith::SelectOp::create(e.b, loc, inside, partials[k].value, identity);
      if (c.isArg)
        partials[k].index = arith::SelectOp::create(e.b, loc, inside, partials[k].index, lastIndex);
    }
  }
  // 1. Registers.
  std::vector<unsigned> keptBits, axisBits;
  for (unsigned r = 0; r < layout.regs.size(); ++r)
    (layout.regs[r].dim == static_cast<int>(axis) ? axisBits : keptBits).push_back(r);
  std::vector<Partial> reduced;
  for (int64_t j = 0; j < (int64_t(1) << keptBits.size()); ++j) {
    int64_t base = 0;
    for (size_t i = 0; i < keptBits.size(); ++i)
      if ((j >> i) & 1)
        base |= int64_t(1) << keptBits[i];
    Partial acc;
    for (int64_t m = 0; m < (int64_t(1) << axisBits.size()); ++m) {
      int64_t k = base;
      for (size_t i = 0; i < axisBits.size(); ++i)
        if ((m >> i) & 1)
          k |= int64_t(1) << axisBits[i];
      acc = m == 0 ? partials[k] : combine(e, c, acc, partials[k]);
    }
    reduced.push_back(acc);
  }
  partials = std::move(reduced);
  // 2. Lanes: butterflies leave every lane of a group with the total.
  for (unsigned i = 0; i < layout.lanes.size(); ++i) {
    if (layout.lanes[i].dim != static_cast<int>(axis))
      continue;
    for (Partial &p : partials) {
      Partial other{e.shuffleXor(p.value, 1u << i),
                    c.isArg ? e.shuffleXor(p.index, 1u << i) : Value()};
      p = combine(e, c, p, other);
    }
  }
  Layout result = layout.reduced({static_cast<int64_t>(axis)});
  // 3. Warps: each warp group writes its partials to shared memory, every
  // thread reads and combines all groups.
  std::vector<unsigned> warpAxisBits;
  int64_t warpMask = 0;
  for (unsigned i = 0; i < layout.warps.size(); ++i) {
    if (layout.warps[i].dim == static_cast<int>(axis))
      warpAxisBits.push_back(i);
    else if (layout.warps[i].isNone())
      warpMask |= int64_t(1) << i;
  }
  if (!warpAxisBits.empty()) {
    int64_t slots = int64_t(1) << warpAxisBits.size();
    int64_t outputs = 1;
    for (int64_t d : result.shape)
      outputs *= d;
    int64_t valueBytes = elementBytes(c.wide), region = slots * outputs * valueBytes;
    int64_t offset = e.beginSharedTemporary(region + (c.isArg ? slots * outputs * 4 : 0));
    // Writers: one lane of each group holding a distinct partial.
    int64_t laneMask = 0;
    for (unsigned i = 0; i < result.lanes.size(); ++i)
      if (result.lanes[i].isNone())
        laneMask |= int64_t(1) << i;
    auto clear = [&](Value id, int64_t mask) -> Value {
      if (!mask)
        return {};
      return arith::CmpIOp::create(e.b, loc, arith::CmpIPredicate::eq,
                                   arith::AndIOp::create(e.b, loc, id, e.index(mask)), e.index(0));
    };
    Value laneClear = clear(e.laneId(), laneMask), warpClear = clear(e.warpId(), warpMask);
    Value writer = e.andOf(laneClear, warpClear);
    Value slot = e.index(0);
    for (size_t i = 0; i < warpAxisBits.size(); ++i) {
      Value bit = arith::AndIOp::create(
          e.b, loc, arith::ShRUIOp::create(e.b, loc, e.warpId(), e.index(warpAxisBits[i])), e.index(1));
      slot = arith::OrIOp::create(e.b, loc, slot,
                                  arith::ShLIOp::create(e.b, loc, bit, e.index(static_cast<int64_t>(i))));
    }
    std::vector<Value> linear;
    for (int64_t j = 0; j < static_cast<int64_t>(partials.size()); ++j)
      linear.push_back(e.linearIndex(e.coordinates(result, j), result.shape));
    Value slotBase = arith::MulIOp::create(e.b, loc, slot, e.index(outputs));
    for (size_t j = 0; j < partials.size(); ++j)
      e.guarded(writer, [&] {
        Value at = arith::AddIOp::create(e.b, loc, slotBase, linear[j]);
        e.storeValue(partials[j].value, e.sharedPointer(e.index(offset), c.wide, at), c.wide);
        if (c.isArg)
          e.storeValue(partials[j].index,
                       e.sharedPointer(e.index(offset + region), e.b.getI32Type(), at),
                       e.b.getI32Type());
      });
    e.barrier();
    for (size_t j = 0; j < partials.size(); ++j) {
      Partial acc;
      for (int64_t s = 0; s < slots; ++s) {
        Value at = arith::AddIOp::create(e.b, loc, e.index(s * outputs), linear[j]);
        Partial p{e.loadValue(e.sharedPointer(e.index(offset), c.wide, at), c.wide, c.wide), {}};
        if (c.isArg)
          p.index = e.loadValue(e.sharedPointer(e.index(offset + region), e.b.getI32Type(), at),
                                e.b.getI32Type(), e.b.getI32Type());
        acc = s == 0 ? p : combine(e, c, acc, p);
      }
      partials[j] = acc;
    }
  }
  layout = result;
  logical.erase(logical.begin() + axis);
}

Type wideType(Emitter &e, Type narrow) {
  unsigned bits = narrow.getIntOrFloatBitWidth();
  if (bits >= 32)
    return narrow;
  return llvm::isa<FloatType>(narrow) ? Type(e.b.getF32Type()) : Type(e.b.getI32Type());
}

} // namespace

LogicalResult lowerReduce(Emitter &e, pk::ReduceOp op) {
  auto operand = llvm::cast<RankedTensorType>(op.getOperand().getType());
  Combiner c{op.getKind(), operand.getElementType(), wideType(e, operand.getElementType())};
  Layout layout = *layoutOf(operand);
  std::vector<int64_t> logical(operand.getShape().begin(), operand.getShape().end());
  Value source = e.values.lookup(op.getOperand());
  std::vector<Partial> partials;
  for (int64_t k = 0; k < layout.numRegisters(); ++k)
    partials.push_back({c.widen(e, e.extract(source, k)), {}});
  SmallVector<int64_t> axes(op.getAxes());
  llvm::sort(axes, std::greater<int64_t>()); // later axes first keep the others' numbers
  for (int64_t axis : axes)
    reduceAxis(e, c, partials, layout, logical, static_cast<unsigned>(axis));
  SmallVector<Value> results;
  for (const Partial &p : partials)
    results.push_back(c.narrowed(e, p.value));
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(op.getType()))
    e.values.map(op.getResult(), e.fromElements(e.vectorType(tensor), results));
  else
    e.values.map(op.getResult(), results.front());
  return success();
}

LogicalResult lowerArgReduce(Emitter &e, pk::ArgReduceOp op) {
  auto operand = llvm::cast<RankedTensorType>(op.getOperand().getType());
  Combiner c{op.getKind(), operand.getElementType(), wideType(e, operand.getElementType())};
  c.isArg = true;
  unsigned axis = static_cast<unsigned>(op.getAxis());
  Layout layout = *layoutOf(operand);
  std::vector<int64_t> logical(operand.getShape().begin(), operand.getShape().end());
  Value source = e.values.lookup(op.getOperand());
  std::vector<Partial> partials;
  for (int64_t k = 0; k < layout.numRegisters(); ++k)
    partials.push_back({c.widen(e, e.extract(source, k)),
                        arith::IndexCastOp::create(e.b, e.loc, e.b.getI32Type(),
                                                   e.coordinate(layout, k, axis))});
  reduceAxis(e, c, partials, layout, logical, axis);
  Type resultElement = getElementTypeOrSelf(op.getType());
  SmallVector<Value> results;
  for (const Partial &p : partials)
    results.push_back(resultElement.isInteger(32)
                          ? p.index
                          : arith::ExtSIOp::create(e.b, e.loc, resultElement, p.index).getResult());
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(op.getType()))
    e.values.map(op.getResult(), e.fromElements(e.vectorType(tensor), results));
  else
    e.values.map(op.getResult(), results.front());
  return success();
}

} // namespace pk::gpu
