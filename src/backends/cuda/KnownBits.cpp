//===- KnownBits.cpp - Low bits of index arithmetic known to be zero ------===//
#include "backends/cuda/KnownBits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace pk::gpu {

using namespace mlir;

namespace {

/// Deep enough for a layout's bits (an or of one shifted mask per bit)
/// under an address's sums and products; each level asks at most as much
/// of its operands as it needs, so a walk stays short.
constexpr unsigned kMaxDepth = 24;

/// The power of two `v` is, if it is a constant one.
std::optional<unsigned> constantLog2(Value v) {
  APInt c;
  if (!matchPattern(v, m_ConstantInt(&c)) || !c.isPowerOf2())
    return std::nullopt;
  return c.logBase2();
}

unsigned trailingZeros(Value value, unsigned enough, unsigned depth) {
  if (enough == 0)
    return 0;
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.isZero() ? enough : std::min(enough, constant.countTrailingZeros());
  Operation *def = value.getDefiningOp();
  if (!def || depth >= kMaxDepth)
    return 0;
  auto operand = [&](unsigned i, unsigned need) {
    return trailingZeros(def->getOperand(i), need, depth + 1);
  };
  // Both operands keep their common low zeros.
  auto both = [&](unsigned first, unsigned second) {
    unsigned a = operand(first, enough);
    return a == 0 ? 0 : std::min(a, operand(second, a));
  };
  if (isa<arith::AddIOp, arith::SubIOp, arith::OrIOp, arith::XOrIOp, arith::MinSIOp, arith::MinUIOp,
          arith::MaxSIOp, arith::MaxUIOp>(def))
    return both(0, 1);
  if (isa<arith::SelectOp>(def))
    return both(1, 2);
  if (isa<arith::AndIOp>(def))
    return std::max(operand(0, enough), operand(1, enough));
  if (isa<arith::MulIOp>(def)) {
    unsigned a = operand(0, enough);
    return a == enough ? a : a + operand(1, enough - a);
  }
  if (isa<arith::ShLIOp>(def)) {
    APInt amount;
    if (!matchPattern(def->getOperand(1), m_ConstantInt(&amount)) || amount.uge(64))
      return 0;
    unsigned s = static_cast<unsigned>(amount.getZExtValue());
    return s >= enough ? enough : s + operand(0, enough - s);
  }
  if (isa<arith::ShRUIOp, arith::DivUIOp>(def)) {
    // x >> s (x / 2^s) keeps the zeros of x above bit s.
    APInt amount;
    unsigned s;
    if (isa<arith::ShRUIOp>(def)) {
      if (!matchPattern(def->getOperand(1), m_ConstantInt(&amount)) || amount.uge(64))
        return 0;
      s = static_cast<unsigned>(amount.getZExtValue());
    } else if (std::optional<unsigned> log = constantLog2(def->getOperand(1))) {
      s = *log;
    } else {
      return 0;
    }
    unsigned z = operand(0, enough + s);
    return z > s ? z - s : 0;
  }
  if (isa<arith::RemUIOp>(def)) {
    // x % 2^s is x's low s bits: their zeros, all of them when x has s.
    std::optional<unsigned> log = constantLog2(def->getOperand(1));
    if (!log)
      return 0;
    unsigned z = operand(0, enough);
    return z >= *log ? enough : z;
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp, arith::ExtSIOp>(def))
    return operand(0, enough);
  return 0;
}

} // namespace

unsigned knownTrailingZeros(Value value, unsigned enough) {
  return trailingZeros(value, enough, 0);
}

bool knownMultipleOf(Value value, int64_t multiple) {
  if (multiple <= 1)
    return true;
  unsigned log = llvm::Log2_64(static_cast<uint64_t>(multiple));
  return knownTrailingZeros(value, log) >= log;
}

} // namespace pk::gpu
