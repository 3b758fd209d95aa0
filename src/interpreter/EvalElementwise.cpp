//===- EvalElementwise.cpp - arith and math ops ---------------------------===//
//
// Floats compute in double and round to the result type after every op.
// Integer ops compute on the zero- or sign-extended bits, with XLA's
// answers where C++ or arith leave the result undefined: division by zero
// gives -1 (all ones) and a remainder of the dividend, INT_MIN / -1 wraps,
// oversized shifts give 0 (or the sign, for arithmetic right shifts), and
// float-to-int conversions saturate with NaN becoming 0.
//
//===----------------------------------------------------------------------===//
#include "interpreter/Evaluator.h"

#include "llvm/ADT/bit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace pk {
double referenceRsqrt(double x) { return 1.0 / std::sqrt(x); }
} // namespace pk

namespace pk::interp {

using namespace mlir;

namespace {

template <typename F>
TensorPtr mapFloat(const ElementKind &out, const Tensor &a, F f) {
  TensorPtr r = makeTensor(out, a.shape);
  for (size_t k = 0; k < a.f.size(); ++k)
    r->f[k] = roundFloat(f(a.f[k]), out);
  return r;
}

template <typename F>
TensorPtr mapFloat2(const ElementKind &out, const Tensor &a, const Tensor &b, F f) {
  TensorPtr r = makeTensor(out, a.shape);
  for (size_t k = 0; k < a.f.size(); ++k)
    r->f[k] = roundFloat(f(a.f[k], b.f[k]), out);
  return r;
}

template <typename F>
TensorPtr mapInt2(const ElementKind &out, const Tensor &a, const Tensor &b, F f) {
  TensorPtr r = makeTensor(out, a.shape);
  for (size_t k = 0; k < a.i.size(); ++k)
    r->i[k] = wrapInt(f(a.i[k], b.i[k]), out.width);
  return r;
}

double maximumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

double minimumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

int64_t add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

int64_t minSigned(unsigned width) {
  return width >= 64 ? INT64_MIN : -(int64_t(1) << (width - 1));
}

int64_t divSigned(int64_t a, int64_t b, unsigned width) {
  if (b == 0)
    return -1;
  if (b == -1 && a == minSigned(width))
    return a;
  return a / b;
}

int64_t floorDivSigned(int64_t a, int64_t b, unsigned width) {
  if (b == 0)
    return -1;
  if (b == -1 && a == minSigned(width))
    return a;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceilDivSigned(int64_t a, int64_t b, unsigned width) {
  if (b == 0)
    return -1;
  if (b == -1 && a == minSigned(width))
    return a;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

int64_t remSigned(int64_t a, int64_t b) {
  if (b == 0)
    return a;
  if (b == -1)
    return 0;
  return a % b;
}

/// Saturating float -> integer conversion; NaN becomes 0.
int64_t floatToInt(double v, unsigned width, bool isUnsignedResult) {
  if (std::isnan(v))
    return 0;
  v = std::trunc(v);
  if (isUnsignedResult) {
    double max = width >= 64 ? 18446744073709551615.0 : std::ldexp(1.0, width) - 1;
    if (v <= 0)
      return 0;
    if (v >= max)
      return wrapInt(static_cast<int64_t>(width >= 64 ? UINT64_MAX : (uint64_t(1) << width) - 1), width);
    return wrapInt(static_cast<int64_t>(static_cast<uint64_t>(v)), width);
  }
  double max = std::ldexp(1.0, width - 1) - 1, min = -std::ldexp(1.0, width - 1);
  if (v >= max)
    return width >= 64 ? INT64_MAX : (int64_t(1) << (width - 1)) - 1;
  if (v <= min)
    return minSigned(width);
  return static_cast<int64_t>(v);
}

bool compareFloat(arith::CmpFPredicate p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (p) {
  case arith::CmpFPredicate::AlwaysFalse: return false;
  case arith::CmpFPredicate::OEQ: return !unordered && a == b;
  case arith::CmpFPredicate::OGT: return !unordered && a > b;
  case arith::CmpFPredicate::OGE: return !unordered && a >= b;
  case arith::CmpFPredicate::OLT: return !unordered && a < b;
  case arith::CmpFPredicate::OLE: return !unordered && a <= b;
  case arith::CmpFPredicate::ONE: return !unordered && a != b;
  case arith::CmpFPredicate::ORD: return !unordered;
  case arith::CmpFPredicate::UEQ: return unordered || a == b;
  case arith::CmpFPredicate::UGT: return unordered || a > b;
  case arith::CmpFPredicate::UGE: return unordered || a >= b;
  case arith::CmpFPredicate::ULT: return unordered || a < b;
  case arith::CmpFPredicate::ULE: return unordered || a <= b;
  case arith::CmpFPredicate::UNE: return unordered || a != b;
  case arith::CmpFPredicate::UNO: return unordered;
  case arith::CmpFPredicate::AlwaysTrue: return true;
  }
  return false;
}

bool compareInt(arith::CmpIPredicate p, int64_t a, int64_t b, unsigned width) {
  uint64_t ua = asUnsigned(a, width), ub = asUnsigned(b, width);
  switch (p) {
  case arith::CmpIPredicate::eq: return a == b;
  case arith::CmpIPredicate::ne: return a != b;
  case arith::CmpIPredicate::slt: return a < b;
  case arith::CmpIPredicate::sle: return a <= b;
  case arith::CmpIPredicate::sgt: return a > b;
  case arith::CmpIPredicate::sge: return a >= b;
  case arith::CmpIPredicate::ult: return ua < ub;
  case arith::CmpIPredicate::ule: return ua <= ub;
  case arith::CmpIPredicate::ugt: return ua > ub;
  case arith::CmpIPredicate::uge: return ua >= ub;
  }
  return false;
}

int64_t integerPower(int64_t base, int64_t exponent, unsigned width) {
  if (exponent < 0)
    return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
  int64_t result = 1;
  while (exponent) {
    if (exponent & 1)
      result = wrapInt(mul(result, base), width);
    base = wrapInt(mul(base, base), width);
    exponent >>= 1;
  }
  return result;
}

} // namespace

TensorPtr Evaluator::constant(Operation *op) {
  auto it = constants.find(op);
  if (it != constants.end())
    return it->second;
  auto c = llvm::cast<arith::ConstantOp>(op);
  Type type = c.getType();
  ElementKind kind = elementKindOf(type);
  std::vector<int64_t> shape;
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
    shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  TensorPtr t = makeTensor(kind, shape);
  Attribute value = c.getValue();
  auto fill = [&](Attribute element, int64_t k) {
    if (auto f = llvm::dyn_cast<FloatAttr>(element))
      t->f[k] = f.getValueAsDouble();
    else if (auto i = llvm::dyn_cast<IntegerAttr>(element))
      t->i[k] = wrapInt(i.getValue().getSExtValue(), kind.width);
    else if (auto b = llvm::dyn_cast<BoolAttr>(element))
      t->i[k] = b.getValue();
  };
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat()) {
      Attribute splat = dense.getSplatValue<Attribute>();
      for (int64_t k = 0; k < t->size(); ++k)
        fill(splat, k);
    } else {
      int64_t k = 0;
      for (Attribute element : dense.getValues<Attribute>())
        fill(element, k++);
    }
  } else {
    fill(value, 0);
  }
  constants[op] = t;
  return t;
}

bool Evaluator::evalArith(Operation *op) {
  if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "arith")
    return false;
  if (llvm::isa<arith::ConstantOp>(op)) {
    set(op->getResult(0), constant(op));
    return true;
  }
  Type resultType = op->getResult(0).getType();
  ElementKind out = elementKindOf(resultType);
  auto operand = [&](unsigned i) -> const Tensor & { return *get(op->getOperand(i)); };

  // Binary float ops.
  using FloatFn = double (*)(double, double);
  FloatFn floatFn = llvm::TypeSwitch<Operation *, FloatFn>(op)
                        .Case<arith::AddFOp>([](auto) { return +[](double a, double b) { return a + b; }; })
                        .Case<arith::SubFOp>([](auto) { return +[](double a, double b) { return a - b; }; })
                        .Case<arith::MulFOp>([](auto) { return +[](double a, double b) { return a * b; }; })
                        .Case<arith::DivFOp>([](auto) { return +[](double a, double b) { return a / b; }; })
                        .Case<arith::RemFOp>([](auto) { return +[](double a, double b) { return std::fmod(a, b); }; })
                        .Case<arith::MaximumFOp>([](auto) { return &maximumF; })
                        .Case<arith::MinimumFOp>([](auto) { return &minimumF; })
                        .Case<arith::MaxNumFOp>([](auto) { return +[](double a, double b) { return std::fmax(a, b); }; })
                        .Case<arith::MinNumFOp>([](auto) { return +[](double a, double b) { return std::fmin(a, b); }; })
                        .Default([](Operation *) { return FloatFn(nullptr); });
  if (floatFn) {
    set(op->getResult(0), mapFloat2(out, operand(0), operand(1), floatFn));
    return true;
  }

  // Binary integer ops.
  unsigned w = out.width;
  std::function<int64_t(int64_t, int64_t)> intFn =
      llvm::TypeSwitch<Operation *, std::function<int64_t(int64_t, int64_t)>>(op)
          .Case<arith::AddIOp>([](auto) { return add; })
          .Case<arith::SubIOp>([](auto) { return sub; })
          .Case<arith::MulIOp>([](auto) { return mul; })
          .Case<arith::DivSIOp>([w](auto) { return [w](int64_t a, int64_t b) { return divSigned(a, b, w); }; })
          .Case<arith::DivUIOp>([w](auto) {
            return [w](int64_t a, int64_t b) -> int64_t {
              uint64_t ub = asUnsigned(b, w);
              return ub == 0 ? -1 : static_cast<int64_t>(asUnsigned(a, w) / ub);
            };
          })
          .Case<arith::FloorDivSIOp>([w](auto) { return [w](int64_t a, int64_t b) { return floorDivSigned(a, b, w); }; })
          .Case<arith::CeilDivSIOp>([w](auto) { return [w](int64_t a, int64_t b) { return ceilDivSigned(a, b, w); }; })
          .Case<arith::CeilDivUIOp>([w](auto) {
            return [w](int64_t a, int64_t b) -> int64_t {
              uint64_t ua = asUnsigned(a, w), ub = asUnsigned(b, w);
              return ub == 0 ? -1 : static_cast<int64_t>(ua / ub + (ua % ub != 0));
            };
          })
          .Case<arith::RemSIOp>([](auto) { return remSigned; })
          .Case<arith::RemUIOp>([w](auto) {
            return [w](int64_t a, int64_t b) -> int64_t {
              uint64_t ub = asUnsigned(b, w);
              return ub == 0 ? a : static_cast<int64_t>(asUnsigned(a, w) % ub);
            };
          })
          .Case<arith::AndIOp>([](auto) { return [](int64_t a, int64_t b) { return a & b; }; })
          .Case<arith::OrIOp>([](auto) { return [](int64_t a, int64_t b) { return a | b; }; })
          .Case<arith::XOrIOp>([](auto) { return [](int64_t a, int64_t b) { return a ^ b; }; })
          .Case<arith::ShLIOp>([w](auto) {
            return [w](int64_t a, int64_t b) -> int64_t {
              uint64_t s = asUnsigned(b, w);
              return s >= w ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << s);
            };
          })
          .Case<arith::ShRUIOp>([w](auto) {
            return [w](int64_t a, int64_t b) -> int64_t {
              uint64_t s = asUnsigned(b, w);
              return s >= w ? 0 : static_cast<int64_t>(asUnsigned(a, w) >> s);
            };
          })
          .Case<arith::ShRSIOp>([w](auto) {
            return [w](int64_t a, int64_t b) -> int64_t {
              uint64_t s = asUnsigned(b, w);
              return s >= w ? (a < 0 ? -1 : 0) : (a >> s);
            };
          })
          .Case<arith::MaxSIOp>([](auto) { return [](int64_t a, int64_t b) { return std::max(a, b); }; })
          .Case<arith::MinSIOp>([](auto) { return [](int64_t a, int64_t b) { return std::min(a, b); }; })
          .Case<arith::MaxUIOp>([w](auto) {
            return [w](int64_t a, int64_t b) { return asUnsigned(a, w) >= asUnsigned(b, w) ? a : b; };
          })
          .Case<arith::MinUIOp>([w](auto) {
            return [w](int64_t a, int64_t b) { return asUnsigned(a, w) <= asUnsigned(b, w) ? a : b; };
          })
          .Default([](Operation *) { return nullptr; });
  if (intFn) {
    set(op->getResult(0), mapInt2(out, operand(0), operand(1), intFn));
    return true;
  }

  if (auto cmp = llvm::dyn_cast<arith::CmpFOp>(op)) {
    const Tensor &a = operand(0), &b = operand(1);
    TensorPtr r = makeTensor(out, a.shape);
    for (size_t k = 0; k < a.f.size(); ++k)
      r->i[k] = compareFloat(cmp.getPredicate(), a.f[k], b.f[k]);
    set(op->getResult(0), r);
    return true;
  }
  if (auto cmp = llvm::dyn_cast<arith::CmpIOp>(op)) {
    const Tensor &a = operand(0), &b = operand(1);
    TensorPtr r = makeTensor(out, a.shape);
    for (size_t k = 0; k < a.i.size(); ++k)
      r->i[k] = compareInt(cmp.getPredicate(), a.i[k], b.i[k], a.element.width);
    set(op->getResult(0), r);
    return true;
  }
  if (llvm::isa<arith::SelectOp>(op)) {
    const Tensor &c = operand(0);
    TensorPtr x = get(op->getOperand(1)), y = get(op->getOperand(2));
    if (c.rank() == 0 && x->rank() != 0) {
      set(op->getResult(0), c.i[0] ? x : y);
      return true;
    }
    TensorPtr r = makeTensor(out, x->shape);
    for (int64_t k = 0; k < r->size(); ++k) {
      bool pick = c.i[c.rank() == 0 ? 0 : k] != 0;
      if (out.isFloat)
        r->f[k] = pick ? x->f[k] : y->f[k];
      else
        r->i[k] = pick ? x->i[k] : y->i[k];
    }
    set(op->getResult(0), r);
    return true;
  }
  if (llvm::isa<arith::NegFOp>(op)) {
    set(op->getResult(0), mapFloat(out, operand(0), [](double a) { return -a; }));
    return true;
  }

  // Conversions.
  const Tensor &in = operand(0);
  TensorPtr r = makeTensor(out, in.shape);
  unsigned inWidth = in.element.width;
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case<arith::ExtFOp, arith::TruncFOp>([&](auto) {
        for (size_t k = 0; k < in.f.size(); ++k)
          r->f[k] = roundFloat(in.f[k], out);
      })
      .Case<arith::SIToFPOp>([&](auto) {
        for (size_t k = 0; k < in.i.size(); ++k)
          r->f[k] = roundFloat(static_cast<double>(in.i[k]), out);
      })
      .Case<arith::UIToFPOp>([&](auto) {
        for (size_t k = 0; k < in.i.size(); ++k)
          r->f[k] = roundFloat(static_cast<double>(asUnsigned(in.i[k], inWidth)), out);
      })
      .Case<arith::FPToSIOp>([&](auto) {
        for (size_t k = 0; k < in.f.size(); ++k)
          r->i[k] = floatToInt(in.f[k], out.width, false);
      })
      .Case<arith::FPToUIOp>([&](auto) {
        for (size_t k = 0; k < in.f.size(); ++k)
          r->i[k] = floatToInt(in.f[k], out.width, true);
      })
      .Case<arith::ExtSIOp, arith::TruncIOp, arith::IndexCastOp>([&](auto) {
        for (size_t k = 0; k < in.i.size(); ++k)
          r->i[k] = wrapInt(in.i[k], out.width);
      })
      .Case<arith::ExtUIOp, arith::IndexCastUIOp>([&](auto) {
        for (size_t k = 0; k < in.i.size(); ++k)
          r->i[k] = wrapInt(static_cast<int64_t>(asUnsigned(in.i[k], inWidth)), out.width);
      })
      .Case<arith::BitcastOp>([&](auto) {
        for (int64_t k = 0; k < in.size(); ++k)
          setElementBits(*r, k, elementBits(in, k));
      })
      .Default([&](Operation *) { handled = false; });
  if (!handled)
    return false;
  set(op->getResult(0), r);
  return true;
}

bool Evaluator::evalMath(Operation *op) {
  if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "math")
    return false;
  ElementKind out = elementKindOf(op->getResult(0).getType());
  const Tensor &a = *get(op->getOperand(0));
  using Fn = double (*)(double);
  Fn fn = llvm::TypeSwitch<Operation *, Fn>(op)
#define PK_FLOAT_UNARY(Enum, Name, Op, Reference)                                \
  .Case<Op>([](auto) { return +[](double x) { return static_cast<double>(Reference(x)); }; })
#include "ir/ElementwiseMath.def"
              .Case<math::FloorOp>([](auto) { return +[](double x) { return std::floor(x); }; })
              .Case<math::CeilOp>([](auto) { return +[](double x) { return std::ceil(x); }; })
              .Case<math::TruncOp>([](auto) { return +[](double x) { return std::trunc(x); }; })
              .Case<math::RoundEvenOp>([](auto) { return +[](double x) { return std::nearbyint(x); }; })
              .Case<math::RoundOp>([](auto) { return +[](double x) { return std::round(x); }; })
              .Case<math::AbsFOp>([](auto) { return +[](double x) { return std::fabs(x); }; })
              .Default([](Operation *) { return Fn(nullptr); });
  if (fn) {
    set(op->getResult(0), mapFloat(out, a, fn));
    return true;
  }
  if (llvm::isa<math::CtPopOp, math::CountLeadingZerosOp>(op)) {
    // The element's bits at its width (signed values are stored extended).
    TensorPtr r = makeTensor(out, a.shape);
    unsigned width = out.width;
    uint64_t mask = width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
    for (size_t k = 0; k < a.i.size(); ++k) {
      uint64_t bits = static_cast<uint64_t>(a.i[k]) & mask;
      int64_t count =
          llvm::isa<math::CtPopOp>(op)
              ? llvm::popcount(bits)
              : static_cast<int64_t>(width) - static_cast<int64_t>(llvm::bit_width(bits));
      r->i[k] = wrapInt(count, width);
    }
    set(op->getResult(0), r);
    return true;
  }
  if (llvm::isa<math::AbsIOp>(op)) {
    TensorPtr r = makeTensor(out, a.shape);
    for (size_t k = 0; k < a.i.size(); ++k)
      r->i[k] = wrapInt(a.i[k] < 0 ? sub(0, a.i[k]) : a.i[k], out.width);
    set(op->getResult(0), r);
    return true;
  }
  if (llvm::isa<math::Atan2Op, math::PowFOp, math::CopySignOp>(op)) {
    const Tensor &b = *get(op->getOperand(1));
    using Fn2 = double (*)(double, double);
    Fn2 fn2 = llvm::isa<math::Atan2Op>(op) ? Fn2(+[](double x, double y) { return std::atan2(x, y); })
              : llvm::isa<math::PowFOp>(op) ? Fn2(+[](double x, double y) { return std::pow(x, y); })
                                            : Fn2(+[](double x, double y) { return std::copysign(x, y); });
    set(op->getResult(0), mapFloat2(out, a, b, fn2));
    return true;
  }
  if (llvm::isa<math::IPowIOp>(op)) {
    const Tensor &b = *get(op->getOperand(1));
    unsigned w = out.width;
    set(op->getResult(0), mapInt2(out, a, b, [w](int64_t x, int64_t y) { return integerPower(x, y, w); }));
    return true;
  }
  return false;
}

} // namespace pk::interp
