//===- DefineArith.cpp - The pk-gpu-define-arith pass ----------------------===//
//
// pk IR gives arith ops the language's total semantics (docs/language.md,
// "Numerics"): integer division by zero is -1 and its remainder the
// dividend, MIN / -1 wraps, shifts by the width or more give 0 (or the
// sign), and float-to-int conversions saturate with NaN as 0. LLVM leaves
// all of these undefined or poison, so before the kernels reach LLVM each
// such op gets operands it is defined for, and a select puts the
// language's answer where the operands were out of range. Canonicalization
// folds the guards away wherever an operand is a constant in range.
// Integer powers (math.ipowi), which have no LLVM lowering, become
// multiplications here too.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

namespace pk::gpu {

#define GEN_PASS_DEF_PKGPUDEFINEARITH
#include "backends/cuda/Passes.h.inc"

using namespace mlir;

namespace {

/// Builds the guards of one op, at the op, with constants of its types.
struct Guard {
  OpBuilder b;
  Location loc;

  Guard(Operation *op) : b(op), loc(op->getLoc()) {}

  /// A constant of `type` (a scalar or a tensor of it) holding `value`.
  Value constant(Type type, TypedAttr value) {
    if (auto shaped = llvm::dyn_cast<ShapedType>(type))
      return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(shaped, value));
    return arith::ConstantOp::create(b, loc, value);
  }
  Value integer(Type type, const APInt &value) {
    Type element = getElementTypeOrSelf(type);
    return constant(type, IntegerAttr::get(element, value));
  }
  Value integer(Type type, int64_t value) { return integer(type, APInt(bitWidth(type), value, true)); }
  Value real(Type type, double value) {
    return constant(type, FloatAttr::get(getElementTypeOrSelf(type), value));
  }

  static unsigned bitWidth(Type type) {
    Type element = getElementTypeOrSelf(type);
    return element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
  }

  Value cmp(arith::CmpIPredicate p, Value x, Value y) { return arith::CmpIOp::create(b, loc, p, x, y); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) { return arith::CmpFOp::create(b, loc, p, x, y); }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }
  Value orI(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }

  /// Replaces the uses `op`'s result has now with what `answer` builds
  /// from it after `op`.
  void replaceResult(Operation *op, llvm::function_ref<Value(Value)> answer) {
    Value result = op->getResult(0);
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : result.getUses())
      uses.push_back(&use);
    b.setInsertionPointAfter(op);
    Value replacement = answer(result);
    for (OpOperand *use : uses)
      use->set(replacement);
  }
};

/// Division and remainder: a divisor of 0 (and, signed, -1 under MIN)
/// becomes 1; the result where it was 0 is -1 (division) or the dividend
/// (remainder). With a divisor of 1, MIN / -1 gives MIN and MIN % -1 0,
/// the wrapped answers.
void defineDivision(Operation *op, bool isSigned, bool isRemainder) {
  Guard g(op);
  Value a = op->getOperand(0), d = op->getOperand(1);
  Type type = d.getType();
  Value zero = g.integer(type, 0), one = g.integer(type, 1);
  Value byZero = g.cmp(arith::CmpIPredicate::eq, d, zero);
  Value bad = byZero;
  if (isSigned) {
    Value min = g.integer(type, APInt::getSignedMinValue(Guard::bitWidth(type)));
    // Built in order (a call's arguments are evaluated in the compiler's).
    Value isMin = g.cmp(arith::CmpIPredicate::eq, a, min);
    Value byMinusOne = g.cmp(arith::CmpIPredicate::eq, d, g.integer(type, -1));
    Value overflow = g.andI(isMin, byMinusOne);
    bad = g.orI(byZero, overflow);
  }
  op->setOperand(1, g.select(bad, one, d));
  g.replaceResult(op, [&](Value result) {
    return g.select(byZero, isRemainder ? a : g.integer(type, -1), result);
  });
}

/// Shifts: amounts at or above the width (unsigned) shift by 0, or by
/// width - 1 for an arithmetic right shift, which then fills with the
/// sign as the language asks; the others give 0.
void defineShift(Operation *op, bool isArithmetic) {
  Guard g(op);
  Value s = op->getOperand(1);
  Type type = s.getType();
  unsigned width = Guard::bitWidth(type);
  Value tooFar = g.cmp(arith::CmpIPredicate::uge, s, g.integer(type, width));
  op->setOperand(1, g.select(tooFar, g.integer(type, isArithmetic ? width - 1 : 0), s));
  if (!isArithmetic)
    g.replaceResult(op, [&](Value result) { return g.select(tooFar, g.integer(type, 0), result); });
}

/// Float to integer: NaN gives 0 and values past the integer range its
/// nearest end; the conversion itself only sees values it truncates into
/// range. The bounds are powers of two, exact in every float type once
/// f16 and bf16 are widened to f32.
void defineFloatToInt(Operation *op, bool isSigned) {
  Guard g(op);
  Value x = op->getOperand(0);
  Type resultType = op->getResult(0).getType();
  unsigned width = Guard::bitWidth(resultType);
  Type element = getElementTypeOrSelf(x.getType());
  if (element.getIntOrFloatBitWidth() < 32) {
    Type f32 = g.b.getF32Type();
    Type wide = f32;
    if (auto shaped = llvm::dyn_cast<ShapedType>(x.getType()))
      wide = shaped.clone(f32);
    x = arith::ExtFOp::create(g.b, g.loc, wide, x);
  }
  Type floatType = x.getType();
  double high = std::ldexp(1.0, isSigned ? width - 1 : width); // first value past the range
  double low = isSigned ? -high : 0.0;
  Value isNaN = g.cmp(arith::CmpFPredicate::UNO, x, x);
  Value above = g.cmp(arith::CmpFPredicate::OGE, x, g.real(floatType, high));
  Value below = isSigned ? g.cmp(arith::CmpFPredicate::OLT, x, g.real(floatType, low))
                         : g.cmp(arith::CmpFPredicate::OLE, x, g.real(floatType, -1.0));
  Value outside = g.orI(isNaN, g.orI(above, below));
  op->setOperand(0, g.select(outside, g.real(floatType, 0.0), x));
  APInt max = isSigned ? APInt::getSignedMaxValue(width) : APInt::getMaxValue(width);
  APInt min = isSigned ? APInt::getSignedMinValue(width) : APInt::getZero(width);
  g.replaceResult(op, [&](Value result) {
    Value maxValue = g.integer(resultType, max), minValue = g.integer(resultType, min);
    Value nanOrResult = g.select(isNaN, g.integer(resultType, 0), result);
    return g.select(above, maxValue, g.select(below, minValue, nanOrResult));
  });
}

/// x ** n for integers by squaring, over the exponent's bits; negative
/// exponents give 1 / x ** -n truncated: 1 for x = 1, +-1 for x = -1, else 0.
void expandIntegerPower(math::IPowIOp op) {
  Guard g(op);
  Value x = op.getLhs(), n = op.getRhs();
  Type type = x.getType();
  unsigned width = Guard::bitWidth(type);
  Value zero = g.integer(type, 0), one = g.integer(type, 1);
  Value lower = arith::ConstantIndexOp::create(g.b, g.loc, 0);
  Value upper = arith::ConstantIndexOp::create(g.b, g.loc, width);
  Value step = arith::ConstantIndexOp::create(g.b, g.loc, 1);
  auto loop = scf::ForOp::create(
      g.b, g.loc, lower, upper, step, ValueRange{one, x, n},
      [&](OpBuilder &b, Location loc, Value, ValueRange carried) {
        Value result = carried[0], base = carried[1], exponent = carried[2];
        Value bit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          arith::AndIOp::create(b, loc, exponent, one), zero);
        Value product = arith::MulIOp::create(b, loc, result, base);
        scf::YieldOp::create(b, loc,
                             ValueRange{arith::SelectOp::create(b, loc, bit, product, result),
                                        arith::MulIOp::create(b, loc, base, base),
                                        arith::ShRUIOp::create(b, loc, exponent, one)});
      });
  Value minusOne = g.integer(type, -1);
  Value odd = g.cmp(arith::CmpIPredicate::ne, arith::AndIOp::create(g.b, g.loc, n, one), zero);
  Value isOne = g.cmp(arith::CmpIPredicate::eq, x, one);
  Value isMinusOne = g.cmp(arith::CmpIPredicate::eq, x, minusOne);
  Value oddSign = g.select(odd, minusOne, one);
  Value reciprocal = g.select(isOne, one, g.select(isMinusOne, oddSign, zero));
  Value negative = g.cmp(arith::CmpIPredicate::slt, n, zero);
  op.getResult().replaceAllUsesWith(g.select(negative, reciprocal, loop.getResult(0)));
  op.erase();
}

struct DefineArithPass : impl::PkGpuDefineArithBase<DefineArithPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (llvm::isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::FloorDivSIOp,
                    arith::CeilDivSIOp, arith::CeilDivUIOp, arith::ShLIOp, arith::ShRSIOp,
                    arith::ShRUIOp, arith::FPToSIOp, arith::FPToUIOp, math::IPowIOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      llvm::TypeSwitch<Operation *>(op)
          .Case<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(
              [](Operation *op) { defineDivision(op, true, false); })
          .Case<arith::DivUIOp, arith::CeilDivUIOp>([](Operation *op) { defineDivision(op, false, false); })
          .Case<arith::RemSIOp>([](Operation *op) { defineDivision(op, true, true); })
          .Case<arith::RemUIOp>([](Operation *op) { defineDivision(op, false, true); })
          .Case<arith::ShLIOp, arith::ShRUIOp>([](Operation *op) { defineShift(op, false); })
          .Case<arith::ShRSIOp>([](Operation *op) { defineShift(op, true); })
          .Case<arith::FPToSIOp>([](Operation *op) { defineFloatToInt(op, true); })
          .Case<arith::FPToUIOp>([](Operation *op) { defineFloatToInt(op, false); })
          .Case<math::IPowIOp>([](math::IPowIOp op) { expandIntegerPower(op); });
  }
};

} // namespace

} // namespace pk::gpu
