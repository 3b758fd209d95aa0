//===- KnownRange.cpp - Bounds of index arithmetic known while compiling --===//
#include "backends/cuda/KnownRange.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>

namespace pk::gpu {

using namespace mlir;

namespace {

/// Deep enough for an address (a block offset plus a layout's bits under
/// sums and products); a query walks each value once.
constexpr unsigned kMaxDepth = 24;

/// What a query knows of a value: its range, and how many of its low bits
/// are zero. Ranges alone lose the second: a layout's coordinate is an or
/// of shifted thread bits, which range inference widens to every value
/// below a power of two (`lane << 2` over 32 lanes: [0, 127], not
/// [0, 124]), and then `coordinate + 3 < 128` is not known.
struct Known {
  IntegerValueRange range;
  unsigned zeros = 0;
};

/// The low zero bits of an op's result from its operands'.
unsigned resultZeros(Operation *def, ArrayRef<Known> operands) {
  auto zerosOf = [&](unsigned i) { return operands[i].zeros; };
  if (isa<arith::AddIOp, arith::SubIOp, arith::OrIOp, arith::XOrIOp, arith::MinSIOp, arith::MinUIOp,
          arith::MaxSIOp, arith::MaxUIOp>(def))
    return std::min(zerosOf(0), zerosOf(1));
  if (isa<arith::SelectOp>(def))
    return std::min(zerosOf(1), zerosOf(2));
  if (isa<arith::AndIOp>(def))
    return std::max(zerosOf(0), zerosOf(1));
  if (isa<arith::MulIOp>(def))
    return std::min(64u, zerosOf(0) + zerosOf(1));
  if (isa<arith::ShLIOp>(def)) {
    APInt amount;
    if (!matchPattern(def->getOperand(1), m_ConstantInt(&amount)) || amount.uge(64))
      return 0;
    return std::min<unsigned>(64, zerosOf(0) + static_cast<unsigned>(amount.getZExtValue()));
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp, arith::ExtSIOp>(def))
    return zerosOf(0);
  return 0;
}

/// `range` with bounds that are multiples of 2^zeros, for values that
/// are never negative (the ones a layout's coordinates take).
IntegerValueRange tightened(const IntegerValueRange &range, unsigned zeros) {
  if (range.isUninitialized() || zeros == 0)
    return range;
  const ConstantIntRanges &r = range.getValue();
  unsigned width = r.umax().getBitWidth();
  if (zeros >= width || r.smin().isNegative())
    return range;
  APInt low = APInt::getLowBitsSet(width, zeros);
  APInt umax = r.umax() & ~low;
  APInt umin = (r.umin() + low) & ~low;
  if (umin.ult(r.umin()) || umin.ugt(umax)) // rounding up wrapped, or nothing is left
    return range;
  return IntegerValueRange(ConstantIntRanges::fromUnsigned(umin, umax).intersection(r));
}

/// The ranges of the values one query reaches. Nothing is kept between
/// queries: the IR is being built, and an op folded away may leave its
/// address to a new one.
class RangeWalk {
public:
  Known of(Value value, unsigned depth) {
    if (auto it = known.find(value); it != known.end())
      return it->second;
    Known result;
    result.range = IntegerValueRange::getMaxRange(value);
    APInt constant;
    if (matchPattern(value, m_ConstantInt(&constant)))
      result.zeros = constant.isZero() ? 64 : constant.countTrailingZeros();
    Operation *def = value.getDefiningOp();
    auto infer = def ? llvm::dyn_cast<InferIntRangeInterface>(def) : InferIntRangeInterface();
    if (infer && depth < kMaxDepth && !result.range.isUninitialized()) {
      llvm::SmallVector<Known> operands;
      llvm::SmallVector<IntegerValueRange> ranges;
      for (Value operand : def->getOperands()) {
        operands.push_back(of(operand, depth + 1));
        ranges.push_back(operands.back().range);
      }
      infer.inferResultRangesFromOptional(ranges, [&](Value r, const IntegerValueRange &range) {
        if (r == value && !range.isUninitialized())
          result.range = range;
      });
      result.zeros = std::max(result.zeros, resultZeros(def, operands));
    }
    result.range = tightened(result.range, result.zeros);
    known[value] = result;
    return result;
  }

private:
  llvm::DenseMap<Value, Known> known;
};

} // namespace

bool knownBelow(Value value, Value limit) {
  if (value.getType() != limit.getType())
    return false;
  RangeWalk walk;
  IntegerValueRange v = walk.of(value, 0).range, l = walk.of(limit, 0).range;
  if (v.isUninitialized() || l.isUninitialized())
    return false;
  return v.getValue().umax().ult(l.getValue().umin());
}

} // namespace pk::gpu
