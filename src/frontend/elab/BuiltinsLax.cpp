//===- BuiltinsLax.cpp - jax.lax and jax.nn -------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Operators.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <iterator>
#include <limits>

namespace pk::elab {

using ast::BinaryOp;
using ast::CompareOp;

namespace {

ArrayPtr asArray(Elaborator &el, const Obj &o, SourceRange r) { return el.arrays().toArray(o, r); }

void unaryFn(NamespaceObj &ns, const std::string &name,
             std::function<Obj(Elaborator &, const Obj &, SourceRange)> fn) {
  define(ns, name, [fn](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    return fn(el, a[0], args.range);
  });
}

void binaryFn(NamespaceObj &ns, const std::string &name,
              std::function<Obj(Elaborator &, const Obj &, const Obj &, SourceRange)> fn) {
  define(ns, name, [fn](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"y"}});
    return fn(el, a[0], a[1], args.range);
  });
}

Obj logistic(Elaborator &el, const Obj &x, SourceRange r) {
  ArrayOps &ops = el.arrays();
  ArrayPtr a = ops.toArray(x, r, toInexact(ops.typeOf(x, r)));
  Obj e = ops.floatUnary(FloatUnary::Exp, ops.negate(a, r), r);
  return binaryOperator(el, BinaryOp::Div, makeFloat(1.0),
                        binaryOperator(el, BinaryOp::Add, makeFloat(1.0), e, r), r);
}

Obj softplus(Elaborator &el, const Obj &x, SourceRange r) {
  // log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), stable for large |x|.
  ArrayOps &ops = el.arrays();
  ArrayPtr a = ops.toArray(x, r, toInexact(ops.typeOf(x, r)));
  Obj tail = ops.floatUnary(FloatUnary::Log1p,
                            ops.floatUnary(FloatUnary::Exp, ops.negate(ops.abs(a, r), r), r), r);
  return binaryOperator(el, BinaryOp::Add, ops.maximum(a, makeFloat(0.0), r), tail, r);
}

/// lax.erf_inv as Pallas lowers it on both of its backends (float32
/// only): Giles' single-precision approximation, a degree-8 polynomial
/// in w = -log(1 - x^2) on two ranges of w, and +-inf at +-1.
Obj erfInv(Elaborator &el, const Obj &x, SourceRange r) {
  static const double kWBelow5[] = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                    -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                    -0.00417768164,  0.246640727,    1.50140941};
  static const double kWAbove5[] = {-0.000200214257, 0.000100950558, 0.00134934322,
                                    -0.00367342844,  0.00573950773,  -0.0076224613,
                                    0.00943887047,   1.00167406,     2.83297682};
  ArrayOps &ops = el.arrays();
  ArrayPtr a = ops.toArray(x, r, toInexact(ops.typeOf(x, r)));
  if (a->dtype != DType::F32)
    el.fail(r, std::string("lax.erf_inv supports float32 (as Pallas does), got ") +
                   numpyName(a->dtype));
  auto mul = [&](const Obj &p, const Obj &q) { return binaryOperator(el, BinaryOp::Mul, p, q, r); };
  auto add = [&](const Obj &p, const Obj &q) { return binaryOperator(el, BinaryOp::Add, p, q, r); };
  Obj w = ops.negate(ops.floatUnary(FloatUnary::Log1p, mul(a, ops.negate(a, r)), r), r);
  Obj below5 = compareOperator(el, CompareOp::Lt, w, makeFloat(5.0), r);
  // (One op a statement: a call's arguments are evaluated in the
  // compiler's order, and the IR must not depend on it.)
  Obj wBelow = add(w, makeFloat(-2.5));
  Obj wAbove = add(ops.floatUnary(FloatUnary::Sqrt, w, r), makeFloat(-3.0));
  w = ops.where(below5, wBelow, wAbove, r);
  Obj p = ops.where(below5, makeFloat(kWBelow5[0]), makeFloat(kWAbove5[0]), r);
  for (size_t i = 1; i < std::size(kWBelow5); ++i) {
    Obj coefficient = ops.where(below5, makeFloat(kWBelow5[i]), makeFloat(kWAbove5[i]), r);
    p = add(coefficient, mul(p, w));
  }
  Obj atOne = compareOperator(el, CompareOp::Eq, ops.abs(a, r), makeFloat(1.0), r);
  Obj infinite = mul(makeFloat(std::numeric_limits<double>::infinity()), a);
  return ops.where(atOne, infinite, mul(p, a), r);
}

Obj gelu(Elaborator &el, const Obj &x, bool approximate, SourceRange r) {
  ArrayOps &ops = el.arrays();
  ArrayPtr a = ops.toArray(x, r, toInexact(ops.typeOf(x, r)));
  auto mul = [&](const Obj &p, const Obj &q) { return binaryOperator(el, BinaryOp::Mul, p, q, r); };
  auto add = [&](const Obj &p, const Obj &q) { return binaryOperator(el, BinaryOp::Add, p, q, r); };
  if (approximate) {
    // jax.nn.gelu: x * cdf, cdf = 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
    // associated as JAX writes it so that float rounding matches.
    Obj cube = mul(a, mul(a, a));
    Obj inner = mul(makeFloat(std::sqrt(2.0 / M_PI)), add(a, mul(makeFloat(0.044715), cube)));
    Obj cdf = mul(makeFloat(0.5), add(makeFloat(1.0), ops.floatUnary(FloatUnary::Tanh, inner, r)));
    return mul(a, cdf);
  }
  // 0.5 x (1 + erf(x / sqrt(2)))
  Obj scaled = mul(a, makeFloat(1.0 / std::sqrt(2.0)));
  Obj half = mul(makeFloat(0.5), a);
  return mul(half, add(makeFloat(1.0), ops.floatUnary(FloatUnary::Erf, scaled, r)));
}

Obj softmax(Elaborator &el, const Obj &x, const Obj &axisObj, bool logarithm, SourceRange r) {
  ArrayOps &ops = el.arrays();
  ArrayPtr a = ops.toArray(x, r, toInexact(ops.typeOf(x, r)));
  std::vector<int64_t> axes = el.normalizeAxes(axisObj, a->rank(), r);
  Obj max = ops.reduce(Reduction::Max, a, axes, true, r);
  Obj shifted = binaryOperator(el, BinaryOp::Sub, a, max, r);
  Obj e = ops.floatUnary(FloatUnary::Exp, shifted, r);
  Obj sum = ops.reduce(Reduction::Sum, e, axes, true, r);
  if (logarithm)
    return binaryOperator(el, BinaryOp::Sub, shifted, ops.floatUnary(FloatUnary::Log, sum, r), r);
  return binaryOperator(el, BinaryOp::Div, e, sum, r);
}

} // namespace

/// lax.div and lax.rem round toward zero, unlike Python's // and %.
Obj truncatedDivision(Elaborator &el, bool remainder, const Obj &x, const Obj &y, SourceRange r) {
  el.requireKernel(r, remainder ? "lax.rem" : "lax.div");
  JaxType t;
  std::vector<ArrayPtr> ops = el.arrays().promoteAndBroadcast({x, y}, r, &t);
  mlir::OpBuilder &b = el.builder();
  mlir::Location loc = el.loc(r);
  mlir::Value a = ops[0]->value, c = ops[1]->value, v;
  if (isFloat(t.dtype))
    v = remainder ? mlir::Value(mlir::arith::RemFOp::create(b, loc, a, c))
                  : mlir::Value(mlir::arith::DivFOp::create(b, loc, a, c));
  else if (isUnsigned(t.dtype) || t.dtype == DType::Bool)
    v = remainder ? mlir::Value(mlir::arith::RemUIOp::create(b, loc, a, c))
                  : mlir::Value(mlir::arith::DivUIOp::create(b, loc, a, c));
  else
    v = remainder ? mlir::Value(mlir::arith::RemSIOp::create(b, loc, a, c))
                  : mlir::Value(mlir::arith::DivSIOp::create(b, loc, a, c));
  return el.arrays().wrap(v, ops[0]->shape, t.dtype, t.weak);
}

namespace {

/// lax.reduce_precision as XLA's elemental emitter computes it, in the
/// operand's own bits: the mantissa rounds to nearest even at
/// `mantissa_bits`; then exponents the narrower format cannot hold become
/// +-inf (too large) or +-0 (too small: that format's denormals too); a NaN
/// stays NaN.
Obj reducePrecision(Elaborator &el, CallArgs &args) {
  BoundArgs a = el.bind(args, {{"operand"}, {"exponent_bits"}, {"mantissa_bits"}});
  int64_t exponentBits = el.toInt(a[1], a.range(1), "exponent_bits");
  int64_t mantissaBits = el.toInt(a[2], a.range(2), "mantissa_bits");
  if (exponentBits < 1)
    el.fail(a.range(1), "reduce_precision: exponent_bits must be positive; got " +
                            std::to_string(exponentBits));
  if (mantissaBits < 0)
    el.fail(a.range(2), "reduce_precision: mantissa_bits must be non-negative; got " +
                            std::to_string(mantissaBits));
  ArrayPtr x = asArray(el, a[0], a.range(0));
  struct Format {
    int64_t exponent, mantissa;
    DType bits;
  };
  Format source;
  switch (x->dtype) {
  case DType::F16:
    source = {5, 10, DType::I16};
    break;
  case DType::BF16:
    source = {8, 7, DType::I16};
    break;
  case DType::F32:
    source = {8, 23, DType::I32};
    break;
  case DType::F64:
    source = {11, 52, DType::I64};
    break;
  default:
    el.fail(a.range(0), std::string("lax.reduce_precision takes float16, bfloat16, float32 or "
                                    "float64 values, got ") +
                            numpyName(x->dtype));
  }
  SourceRange r = args.range;
  ArrayOps &ops = el.arrays();
  // The bits as a signed integer of their width: the masks below keep
  // every shifted or compared value non-negative, and a constant is its
  // two's-complement value at that width.
  int64_t width = static_cast<int64_t>(bitWidth(source.bits));
  auto constant = [&](uint64_t v) {
    int64_t value = static_cast<int64_t>(v << (64 - width)) >> (64 - width);
    return ops.constantInt(value, source.bits, {}, r);
  };
  Obj bits = ops.bitcast(x, source.bits, r);
  if (mantissaBits < source.mantissa) {
    int64_t dropped = source.mantissa - mantissaBits;
    uint64_t lastKept = uint64_t(1) << dropped;
    Obj lastKeptMask = constant(lastKept);
    Obj keptBits = ops.binary(BinaryOp::BitAnd, bits, lastKeptMask, r);
    Obj lastKeptBit =
        ops.binary(BinaryOp::RShift, keptBits, constant(static_cast<uint64_t>(dropped)), r);
    Obj bias = ops.binary(BinaryOp::Add, lastKeptBit, constant((lastKept >> 1) - 1), r);
    Obj rounded = ops.binary(BinaryOp::Add, bits, bias, r);
    bits = ops.binary(BinaryOp::BitAnd, rounded, constant(~(lastKept - 1)), r);
  }
  if (exponentBits < source.exponent) {
    uint64_t signMask = uint64_t(1) << (width - 1);
    uint64_t exponentMask = ((uint64_t(1) << source.exponent) - 1) << source.mantissa;
    uint64_t bias = (uint64_t(1) << (source.exponent - 1)) - 1;
    uint64_t reducedBias = (uint64_t(1) << (exponentBits - 1)) - 1;
    Obj exponent = ops.binary(BinaryOp::BitAnd, bits, constant(exponentMask), r);
    Obj overflows =
        ops.compare(CompareOp::Gt, exponent, constant((bias + reducedBias) << source.mantissa), r);
    Obj underflows =
        ops.compare(CompareOp::Le, exponent, constant((bias - reducedBias) << source.mantissa), r);
    Obj signedZero = ops.binary(BinaryOp::BitAnd, bits, constant(signMask), r);
    Obj signedInf = ops.binary(BinaryOp::BitOr, signedZero, constant(exponentMask), r);
    bits = ops.where(overflows, signedInf, ops.where(underflows, signedZero, bits, r), r);
  }
  // NaN's exponent overflows and its payload may round away; XLA keeps it.
  Obj isNan = ops.isNan(x, r);
  Obj reduced = ops.bitcast(ops.toArray(bits, r), x->dtype, r);
  return ops.where(isNan, x, reduced, r);
}

} // namespace

std::shared_ptr<NamespaceObj> makeLaxNamespace(Elaborator &el) {
  auto ns = std::make_shared<NamespaceObj>("jax.lax");
  NamespaceObj &n = *ns;
#define PK_FLOAT_UNARY(Enum, Name, Op, Reference)                                \
  unaryFn(n, Name, [](Elaborator &el, const Obj &x, SourceRange r) {             \
    return el.arrays().floatUnary(FloatUnary::Enum, x, r);                       \
  });
#include "ir/ElementwiseMath.def"
  unaryFn(n, "abs", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().abs(x, r); });
  unaryFn(n, "population_count", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().bitCount(x, /*leadingZeros=*/false, r);
  });
  unaryFn(n, "clz", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().bitCount(x, /*leadingZeros=*/true, r);
  });
  unaryFn(n, "neg", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().negate(x, r); });
  unaryFn(n, "sign", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().sign(x, r); });
  unaryFn(n, "floor", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().round(Rounding::Floor, x, r); });
  unaryFn(n, "ceil", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().round(Rounding::Ceil, x, r); });
  define(n, "round", [](Elaborator &el, CallArgs &args) -> Obj {
    // lax.round rounds half away from zero unless told otherwise.
    BoundArgs a = el.bind(args, {{"x"}, {"rounding_method", makeInt(0)}});
    int64_t method = el.toInt(a[1], a.range(1), "rounding_method");
    ArrayPtr x = asArray(el, a[0], a.range(0));
    if (method == 1)
      return el.arrays().round(Rounding::RoundEven, x, args.range);
    if (!isFloat(x->dtype))
      return x;
    return el.arrays().wrap(mlir::math::RoundOp::create(el.builder(), el.loc(args.range), x->value),
                            x->shape, x->dtype, x->weak);
  });
  unaryFn(n, "square", [](Elaborator &el, const Obj &x, SourceRange r) {
    return binaryOperator(el, BinaryOp::Mul, x, x, r);
  });
  unaryFn(n, "logistic", logistic);
  unaryFn(n, "erf_inv", erfInv);
  unaryFn(n, "not", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().invert(x, r); });
  unaryFn(n, "stop_gradient", [](Elaborator &, const Obj &x, SourceRange) { return x; });
  unaryFn(n, "reciprocal", [](Elaborator &el, const Obj &x, SourceRange r) {
    return binaryOperator(el, BinaryOp::Div, makeFloat(1.0), x, r);
  });
  unaryFn(n, "is_finite", [](Elaborator &el, const Obj &x, SourceRange r) { return el.arrays().isFinite(x, r); });
  binaryFn(n, "add", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return binaryOperator(el, BinaryOp::Add, x, y, r); });
  binaryFn(n, "sub", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return binaryOperator(el, BinaryOp::Sub, x, y, r); });
  binaryFn(n, "mul", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return binaryOperator(el, BinaryOp::Mul, x, y, r); });
  binaryFn(n, "div", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return truncatedDivision(el, false, x, y, r); });
  binaryFn(n, "rem", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return truncatedDivision(el, true, x, y, r); });
  binaryFn(n, "pow", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return el.arrays().power(x, y, r); });
  binaryFn(n, "max", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return el.arrays().maximum(x, y, r); });
  binaryFn(n, "min", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return el.arrays().minimum(x, y, r); });
  binaryFn(n, "atan2", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return el.arrays().arctan2(x, y, r); });
  binaryFn(n, "bitwise_and", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return binaryOperator(el, BinaryOp::BitAnd, x, y, r); });
  binaryFn(n, "bitwise_or", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return binaryOperator(el, BinaryOp::BitOr, x, y, r); });
  binaryFn(n, "bitwise_xor", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return binaryOperator(el, BinaryOp::BitXor, x, y, r); });
  binaryFn(n, "shift_left", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) { return binaryOperator(el, BinaryOp::LShift, x, y, r); });
  binaryFn(n, "shift_right_arithmetic", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) {
    JaxType t;
    std::vector<ArrayPtr> ops = el.arrays().promoteAndBroadcast({x, y}, r, &t);
    return el.arrays().wrap(mlir::arith::ShRSIOp::create(el.builder(), el.loc(r), ops[0]->value, ops[1]->value),
                            ops[0]->shape, t.dtype, t.weak);
  });
  binaryFn(n, "shift_right_logical", [](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) {
    JaxType t;
    std::vector<ArrayPtr> ops = el.arrays().promoteAndBroadcast({x, y}, r, &t);
    return el.arrays().wrap(mlir::arith::ShRUIOp::create(el.builder(), el.loc(r), ops[0]->value, ops[1]->value),
                            ops[0]->shape, t.dtype, t.weak);
  });
  for (auto [name, op] : std::initializer_list<std::pair<const char *, CompareOp>>{
           {"eq", CompareOp::Eq}, {"ne", CompareOp::Ne}, {"lt", CompareOp::Lt},
           {"le", CompareOp::Le}, {"gt", CompareOp::Gt}, {"ge", CompareOp::Ge}}) {
    CompareOp which = op;
    binaryFn(n, name, [which](Elaborator &el, const Obj &x, const Obj &y, SourceRange r) {
      return compareOperator(el, which, x, y, r);
    });
  }
  define(n, "integer_pow", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"y"}});
    el.toInt(a[1], a.range(1), "exponent");
    return el.arrays().power(a[0], a[1], args.range);
  });
  define(n, "clamp", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"min"}, {"x"}, {"max"}});
    return el.arrays().minimum(el.arrays().maximum(a[1], a[0], args.range), a[2], args.range);
  });
  define(n, "select", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"pred"}, {"on_true"}, {"on_false"}});
    return el.arrays().where(a[0], a[1], a[2], args.range);
  });
  define(n, "convert_element_type", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"new_dtype"}});
    DType t = el.toDType(a[1], a.range(1), "new_dtype");
    return el.arrays().cast(asArray(el, a[0], a.range(0)), t, args.range);
  });
  define(n, "reduce_precision", reducePrecision);
  define(n, "bitcast_convert_type", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"new_dtype"}});
    return el.arrays().bitcast(asArray(el, a[0], a.range(0)),
                               el.toDType(a[1], a.range(1), "new_dtype"), args.range);
  });
  define(n, "broadcasted_iota", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"dtype"}, {"shape"}, {"dimension"}});
    std::vector<int64_t> shape = el.toShape(a[1], a.range(1), "shape");
    return el.arrays().iota(shape, el.normalizeAxis(a[2], static_cast<int64_t>(shape.size()), a.range(2)),
                            el.toDType(a[0], a.range(0), "dtype"), args.range);
  });
  define(n, "iota", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"dtype"}, {"size"}});
    return el.arrays().iota({el.toInt(a[1], a.range(1), "size")}, 0,
                            el.toDType(a[0], a.range(0), "dtype"), args.range);
  });
  define(n, "broadcast_in_dim", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"shape"}, {"broadcast_dimensions"}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    std::vector<int64_t> shape = el.toShape(a[1], a.range(1), "shape");
    std::vector<int64_t> dims = el.toShape(a[2], a.range(2), "broadcast_dimensions");
    if (dims.size() != x->shape.size())
      el.fail(a.range(2), "broadcast_dimensions needs one entry per operand axis");
    // Reshape to the result's rank with 1s, then broadcast.
    std::vector<int64_t> expanded(shape.size(), 1);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] >= static_cast<int64_t>(shape.size()) || (i && dims[i] <= dims[i - 1]))
        el.fail(a.range(2), "broadcast_dimensions must be increasing and within the result's rank");
      expanded[dims[i]] = x->shape[i];
    }
    return el.arrays().broadcastTo(el.arrays().reshape(x, expanded, args.range), shape, args.range);
  });
  define(n, "broadcast", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"sizes"}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    std::vector<int64_t> shape = el.toShape(a[1], a.range(1), "sizes");
    shape.insert(shape.end(), x->shape.begin(), x->shape.end());
    return el.arrays().broadcastTo(x, shape, args.range);
  });
  define(n, "reshape", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"new_sizes"}, {"dimensions", none()}});
    if (!isNone(a[2]))
      el.fail(a.range(2), "lax.reshape with dimensions= is not supported");
    return el.arrays().reshape(asArray(el, a[0], a.range(0)), el.toShape(a[1], a.range(1), "new_sizes"), args.range);
  });
  define(n, "transpose", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"permutation"}});
    return el.arrays().transpose(asArray(el, a[0], a.range(0)), el.toShape(a[1], a.range(1), "permutation"), args.range);
  });
  define(n, "expand_dims", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"array"}, {"dimensions"}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    std::vector<int64_t> dims = el.toShape(a[1], a.range(1), "dimensions");
    return el.arrays().expandDims(x, dims, args.range);
  });
  define(n, "squeeze", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"array"}, {"dimensions"}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    return el.arrays().squeeze(x, el.normalizeAxes(a[1], x->rank(), a.range(1)), args.range);
  });
  define(n, "slice", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operand"}, {"start_indices"}, {"limit_indices"}, {"strides", none()}});
    ArrayPtr x = asArray(el, a[0], a.range(0));
    std::vector<int64_t> start = el.toShape(a[1], a.range(1), "start_indices");
    std::vector<int64_t> limit = el.toShape(a[2], a.range(2), "limit_indices");
    std::vector<int64_t> strides = isNone(a[3]) ? std::vector<int64_t>(start.size(), 1)
                                                : el.toShape(a[3], a.range(3), "strides");
    if (start.size() != x->shape.size() || limit.size() != start.size() || strides.size() != start.size())
      el.fail(args.range, "lax.slice needs one start, limit and stride per axis");
    for (size_t d = 0; d < start.size(); ++d)
      if (limit[d] > x->shape[d] || strides[d] <= 0)
        el.fail(args.range, "lax.slice window is out of bounds on axis " + std::to_string(d));
    return el.arrays().slice(x, start, limit, strides, args.range);
  });
  define(n, "concatenate", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"operands"}, {"dimension"}});
    std::vector<Obj> operands = el.iterate(a[0], a.range(0));
    if (operands.empty())
      el.fail(args.range, "need at least one operand");
    int64_t rank = asArray(el, operands[0], a.range(0))->rank();
    return el.arrays().concatenate(operands, el.normalizeAxis(a[1], rank, a.range(1)), args.range);
  });
  auto reduceFn = [](Reduction kind) {
    return [kind](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"operand"}, {"axes"}});
      ArrayPtr x = asArray(el, a[0], a.range(0));
      std::vector<int64_t> axes = el.normalizeAxes(a[1], x->rank(), a.range(1));
      return el.arrays().reduce(kind, x, axes, false, args.range);
    };
  };
  define(n, "reduce_sum", reduceFn(Reduction::Sum));
  define(n, "reduce_prod", reduceFn(Reduction::Prod));
  define(n, "reduce_max", reduceFn(Reduction::Max));
  define(n, "reduce_min", reduceFn(Reduction::Min));
  // lax.reduce_and / reduce_or / reduce_xor are bitwise on integers (and
  // logical on booleans), unlike jnp.all / jnp.any, which test for nonzero.
  auto bitwiseReduceFn = [](pk::ReductionKind kind, Reduction onBool) {
    return [kind, onBool](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"operand"}, {"axes"}});
      ArrayPtr x = asArray(el, a[0], a.range(0));
      std::vector<int64_t> axes = el.normalizeAxes(a[1], x->rank(), a.range(1));
      if (isFloat(x->dtype))
        el.fail(a.range(0), "lax bitwise reductions take integers or booleans, not " +
                                std::string(numpyName(x->dtype)));
      if (x->dtype == DType::Bool && kind != pk::ReductionKind::Xor)
        return el.arrays().reduce(onBool, x, axes, false, args.range);
      return el.arrays().reduceBitwise(kind, x, std::move(axes), args.range);
    };
  };
  define(n, "reduce_and", bitwiseReduceFn(pk::ReductionKind::And, Reduction::All));
  define(n, "reduce_or", bitwiseReduceFn(pk::ReductionKind::Or, Reduction::Any));
  define(n, "reduce_xor", bitwiseReduceFn(pk::ReductionKind::Xor, Reduction::Any));
  auto argFn = [](bool isMax) {
    return [isMax](Elaborator &el, CallArgs &args) -> Obj {
      BoundArgs a = el.bind(args, {{"operand"}, {"axis"}, {"index_dtype"}});
      ArrayPtr x = asArray(el, a[0], a.range(0));
      Obj result = el.arrays().argReduce(isMax, x, el.normalizeAxis(a[1], x->rank(), a.range(1)),
                                         false, args.range);
      return el.arrays().cast(std::static_pointer_cast<ArrayObj>(result),
                              el.toDType(a[2], a.range(2), "index_dtype"), args.range);
    };
  };
  define(n, "argmax", argFn(true));
  define(n, "argmin", argFn(false));
  define(n, "dot", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"lhs"}, {"rhs"}, {"precision", none()}, {"preferred_element_type", none()}});
    return dotBuiltin(el, a[0], a[1], false, false, a[3], a[2], args.range);
  });
  // dot_general: defineArrayFunctions (any contracting and batch axes).
  define(n, "fori_loop", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"lower"}, {"upper"}, {"body_fun"}, {"init_val"}, {"unroll", none(), true}});
    return el.foriLoop(a[0], a[1], a[2], a[3], args.range, a[4]);
  });
  define(n, "while_loop", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"cond_fun"}, {"body_fun"}, {"init_val"}});
    return el.whileLoop(a[0], a[1], a[2], args.range);
  });
  define(n, "cond", [](Elaborator &el, CallArgs &args) -> Obj {
    if (args.positional.size() < 3)
      el.fail(args.range, "lax.cond(pred, true_fun, false_fun, *operands) needs at least three arguments");
    std::vector<Obj> operands(args.positional.begin() + 3, args.positional.end());
    // The older keyword form: operand=x is the one operand (None too).
    for (const auto &[name, value] : args.keywords) {
      if (name != "operand")
        el.fail(args.rangeOfKeyword(name),
                "lax.cond() got an unexpected keyword argument '" + name + "'");
      if (!operands.empty())
        el.raise(args.rangeOfKeyword(name), "TypeError",
                 "if the 'operand' keyword is passed to cond, no positional operands can be "
                 "passed");
      operands.push_back(value);
    }
    return el.cond(args.positional[0], args.positional[1], args.positional[2], operands, args.range);
  });
  auto precision = std::make_shared<NamespaceObj>("jax.lax.Precision");
  for (const char *p : {"DEFAULT", "HIGH", "HIGHEST"})
    precision->members[p] = makeStr(p);
  n.members["Precision"] = precision;
  // lax.DotAlgorithmPreset (axlearn's kernels pass it as a dot's
  // precision): its members as "DotAlgorithmPreset.NAME", which
  // tf32Allowed reads.
  auto preset = std::make_shared<NamespaceObj>("jax.lax.DotAlgorithmPreset");
  for (const char *p :
       {"DEFAULT", "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
        "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
        "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
        "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64"})
    preset->members[p] = makeStr(std::string("DotAlgorithmPreset.") + p);
  n.members["DotAlgorithmPreset"] = preset;
  // lax.round's rounding_method: the enum's values, as lax.round reads them.
  auto roundingMethod = std::make_shared<NamespaceObj>("jax.lax.RoundingMethod");
  roundingMethod->members["AWAY_FROM_ZERO"] = makeInt(0);
  roundingMethod->members["TO_NEAREST_EVEN"] = makeInt(1);
  n.members["RoundingMethod"] = roundingMethod;
  return ns;
}

std::shared_ptr<NamespaceObj> makeNnNamespace(Elaborator &el) {
  auto ns = std::make_shared<NamespaceObj>("jax.nn");
  NamespaceObj &n = *ns;
  unaryFn(n, "relu", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().maximum(x, makeInt(0), r);
  });
  unaryFn(n, "relu6", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().minimum(el.arrays().maximum(x, makeInt(0), r), makeInt(6), r);
  });
  unaryFn(n, "sigmoid", logistic);
  unaryFn(n, "silu", [](Elaborator &el, const Obj &x, SourceRange r) {
    return binaryOperator(el, BinaryOp::Mul, x, logistic(el, x, r), r);
  });
  n.members["swish"] = n.members["silu"];
  unaryFn(n, "softplus", softplus);
  unaryFn(n, "log_sigmoid", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().negate(softplus(el, el.arrays().negate(x, r), r), r);
  });
  unaryFn(n, "hard_tanh", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().minimum(el.arrays().maximum(x, makeFloat(-1.0), r), makeFloat(1.0), r);
  });
  unaryFn(n, "tanh", [](Elaborator &el, const Obj &x, SourceRange r) {
    return el.arrays().floatUnary(FloatUnary::Tanh, x, r);
  });
  define(n, "gelu", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"approximate", makeBool(true)}});
    return gelu(el, a[0], el.truthy(a[1], a.range(1)), args.range);
  });
  // The rest of jax.nn's activations, each as JAX writes it.
  auto hardSigmoid = [](Elaborator &el, const Obj &x, SourceRange r) -> Obj {
    ArrayOps &ops = el.arrays();
    Obj relu6 = ops.minimum(
        ops.maximum(binaryOperator(el, BinaryOp::Add, x, makeFloat(3.0), r), makeInt(0), r),
        makeInt(6), r);
    return binaryOperator(el, BinaryOp::Div, relu6, makeFloat(6.0), r);
  };
  unaryFn(n, "hard_sigmoid", hardSigmoid);
  unaryFn(n, "hard_silu", [hardSigmoid](Elaborator &el, const Obj &x, SourceRange r) {
    return binaryOperator(el, BinaryOp::Mul, x, hardSigmoid(el, x, r), r);
  });
  n.members["hard_swish"] = n.members["hard_silu"];
  unaryFn(n, "mish", [](Elaborator &el, const Obj &x, SourceRange r) {
    return binaryOperator(el, BinaryOp::Mul, x,
                          el.arrays().floatUnary(FloatUnary::Tanh, softplus(el, x, r), r), r);
  });
  unaryFn(n, "sparse_plus", [](Elaborator &el, const Obj &x, SourceRange r) {
    // 0 below -1, x above 1, (x + 1)^2 / 4 between.
    ArrayOps &ops = el.arrays();
    Obj shifted = binaryOperator(el, BinaryOp::Add, x, makeFloat(1.0), r);
    Obj quadratic =
        binaryOperator(el, BinaryOp::Div, binaryOperator(el, BinaryOp::Mul, shifted, shifted, r),
                       makeFloat(4.0), r);
    Obj upper =
        ops.where(compareOperator(el, CompareOp::Ge, x, makeFloat(1.0), r), x, quadratic, r);
    return ops.where(compareOperator(el, CompareOp::Le, x, makeFloat(-1.0), r), makeFloat(0.0),
                     upper, r);
  });
  define(n, "squareplus", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"b", makeFloat(4.0)}});
    SourceRange r = args.range;
    Obj root = el.arrays().floatUnary(
        FloatUnary::Sqrt,
        binaryOperator(el, BinaryOp::Add, binaryOperator(el, BinaryOp::Mul, a[0], a[0], r), a[1],
                       r),
        r);
    return binaryOperator(el, BinaryOp::Div, binaryOperator(el, BinaryOp::Add, a[0], root, r),
                          makeFloat(2.0), r);
  });
  define(n, "celu", [](Elaborator &el, CallArgs &args) -> Obj {
    // max(x, 0) + alpha * expm1(min(x, 0) / alpha)
    BoundArgs a = el.bind(args, {{"x"}, {"alpha", makeFloat(1.0)}});
    ArrayOps &ops = el.arrays();
    SourceRange r = args.range;
    Obj negative = ops.floatUnary(
        FloatUnary::Expm1,
        binaryOperator(el, BinaryOp::Div, ops.minimum(a[0], makeFloat(0.0), r), a[1], r), r);
    Obj positive = ops.maximum(a[0], makeFloat(0.0), r);
    return binaryOperator(el, BinaryOp::Add, positive,
                          binaryOperator(el, BinaryOp::Mul, a[1], negative, r), r);
  });
  unaryFn(n, "selu", [](Elaborator &el, const Obj &x, SourceRange r) {
    // scale * elu(x, alpha), with JAX's constants.
    const double alpha = 1.6732632423543772848170429916717;
    const double scale = 1.0507009873554804934193349852946;
    ArrayOps &ops = el.arrays();
    Obj negative =
        binaryOperator(el, BinaryOp::Mul, makeFloat(alpha),
                       ops.floatUnary(FloatUnary::Expm1, ops.minimum(x, makeFloat(0.0), r), r), r);
    Obj elu = ops.where(compareOperator(el, CompareOp::Gt, x, makeInt(0), r), x, negative, r);
    return binaryOperator(el, BinaryOp::Mul, makeFloat(scale), elu, r);
  });
  define(n, "glu", [](Elaborator &el, CallArgs &args) -> Obj {
    // The first half along `axis` times the sigmoid of the second.
    BoundArgs a = el.bind(args, {{"x"}, {"axis", makeInt(-1)}});
    ArrayOps &ops = el.arrays();
    ArrayPtr x = asArray(el, a[0], a.range(0));
    int64_t axis = el.normalizeAxis(a[1], x->rank(), a.range(1));
    int64_t size = x->shape[axis];
    if (size % 2 != 0)
      el.fail(a.range(0), "jax.nn.glu splits axis " + std::to_string(axis) +
                              " in two halves; its size " + std::to_string(size) + " is odd");
    std::vector<int64_t> start(x->rank(), 0), limit = x->shape, stride(x->rank(), 1);
    limit[axis] = size / 2;
    ArrayPtr first = ops.slice(x, start, limit, stride, args.range);
    start[axis] = size / 2;
    limit[axis] = size;
    ArrayPtr second = ops.slice(x, start, limit, stride, args.range);
    return binaryOperator(el, BinaryOp::Mul, first, logistic(el, second, args.range), args.range);
  });
  define(n, "standardize", [](Elaborator &el, CallArgs &args) -> Obj {
    // (x - mean) * rsqrt(variance + epsilon), the variance as
    // E[x^2] - E[x]^2, over `axis` (all axes when None).
    BoundArgs a = el.bind(args, {{"x"},
                                 {"axis", makeInt(-1)},
                                 {"mean", none()},
                                 {"variance", none()},
                                 {"epsilon", makeFloat(1e-5)},
                                 {"where", none(), true}});
    if (!isNone(a[5]))
      el.fail(a.range(5), "jax.nn.standardize(where=) is not supported");
    ArrayOps &ops = el.arrays();
    SourceRange r = args.range;
    ArrayPtr x = asArray(el, a[0], a.range(0));
    std::vector<int64_t> axes;
    if (!isNone(a[1])) {
      if (auto *seq = llvm::dyn_cast<SequenceObj>(a[1].get())) {
        for (const Obj &axis : seq->items)
          axes.push_back(el.normalizeAxis(axis, x->rank(), a.range(1)));
      } else {
        axes.push_back(el.normalizeAxis(a[1], x->rank(), a.range(1)));
      }
    }
    Obj mean = isNone(a[2]) ? ops.mean(x, axes, true, r) : a[2];
    Obj variance = a[3];
    if (isNone(variance)) {
      Obj meanOfSquares = ops.mean(binaryOperator(el, BinaryOp::Mul, x, x, r), axes, true, r);
      Obj squaredMean = binaryOperator(el, BinaryOp::Mul, mean, mean, r);
      variance = binaryOperator(el, BinaryOp::Sub, meanOfSquares, squaredMean, r);
    }
    Obj scale =
        ops.floatUnary(FloatUnary::Rsqrt, binaryOperator(el, BinaryOp::Add, variance, a[4], r), r);
    return binaryOperator(el, BinaryOp::Mul, binaryOperator(el, BinaryOp::Sub, x, mean, r), scale,
                          r);
  });
  define(n, "one_hot", [](Elaborator &el, CallArgs &args) -> Obj {
    // As JAX builds it: x with an axis of 1 inserted at `axis`, compared
    // with an iota of x's dtype along that axis, cast to `dtype` (float32
    // by default).
    BoundArgs a = el.bind(
        args, {{"x"}, {"num_classes"}, {"dtype", none(), true}, {"axis", makeInt(-1), true}});
    ArrayOps &ops = el.arrays();
    ArrayPtr x = asArray(el, a[0], a.range(0));
    int64_t classes = el.toInt(a[1], a.range(1), "num_classes");
    if (classes < 0)
      el.fail(a.range(1), "num_classes must not be negative, got " + std::to_string(classes));
    int64_t axis = el.normalizeAxis(a[3], x->rank() + 1, a.range(3));
    std::vector<int64_t> expanded = x->shape, classShape(x->shape.size(), 1);
    expanded.insert(expanded.begin() + axis, 1);
    classShape.insert(classShape.begin() + axis, classes);
    ArrayPtr lhs = ops.reshape(x, expanded, args.range);
    ArrayPtr rhs = ops.iota(classShape, axis, x->dtype, args.range);
    Obj equal = compareOperator(el, CompareOp::Eq, lhs, rhs, args.range);
    DType dtype = isNone(a[2]) ? DType::F32 : el.toDType(a[2], a.range(2), "dtype");
    return ops.cast(asArray(el, equal, args.range), dtype, args.range);
  });
  define(n, "leaky_relu", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"negative_slope", makeFloat(0.01)}});
    Obj scaled = binaryOperator(el, BinaryOp::Mul, a[1], a[0], args.range);
    Obj positive = compareOperator(el, CompareOp::Ge, a[0], makeInt(0), args.range);
    return el.arrays().where(positive, a[0], scaled, args.range);
  });
  define(n, "elu", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"alpha", makeFloat(1.0)}});
    Obj negative = binaryOperator(el, BinaryOp::Mul, a[1],
                                  el.arrays().floatUnary(FloatUnary::Expm1, a[0], args.range), args.range);
    Obj positive = compareOperator(el, CompareOp::Gt, a[0], makeInt(0), args.range);
    return el.arrays().where(positive, a[0], negative, args.range);
  });
  define(n, "softmax", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"axis", makeInt(-1)}});
    return softmax(el, a[0], a[1], false, args.range);
  });
  define(n, "log_softmax", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"axis", makeInt(-1)}});
    return softmax(el, a[0], a[1], true, args.range);
  });
  return ns;
}

void defineLaxPrimitives(NamespaceObj &lax) {
  // JAX's primitives behind lax's element-wise functions: tests bind them
  // directly (`functools.partial(lax.exp_p.bind, accuracy=None)`). Each
  // is an object with the primitive's name and a bind() that calls the
  // function (an `accuracy` of None is the function's default).
  static const std::pair<const char *, const char *> kPrimitives[] = {
      {"neg", "neg"},
      {"not", "bitwise_not"},
      {"abs", "abs"},
      {"exp", "exp"},
      {"exp2", "exp2"},
      {"tanh", "tanh"},
      {"logistic", "logistic"},
      {"rsqrt", "rsqrt"},
      {"log", "log"},
      {"log1p", "log1p"},
      {"expm1", "expm1"},
      {"sin", "sin"},
      {"cos", "cos"},
      {"tan", "tan"},
      {"sqrt", "sqrt"},
      {"cbrt", "cbrt"},
      {"floor", "floor"},
      {"ceil", "ceil"},
      {"sign", "sign"},
      {"erf", "erf"},
      {"erf_inv", "erf_inv"},
      {"is_finite", "is_finite"},
      {"population_count", "population_count"},
      {"clz", "clz"},
      {"add", "add"},
      {"sub", "sub"},
      {"mul", "mul"},
      {"div", "div"},
      {"rem", "rem"},
      {"max", "max"},
      {"min", "min"},
      {"pow", "pow"},
      {"atan2", "atan2"},
      {"and", "bitwise_and"},
      {"or", "bitwise_or"},
      {"xor", "bitwise_xor"},
      {"eq", "eq"},
      {"ne", "ne"},
      {"lt", "lt"},
      {"le", "le"},
      {"gt", "gt"},
      {"ge", "ge"},
      {"shift_left", "shift_left"},
      {"shift_right_logical", "shift_right_logical"},
      {"shift_right_arithmetic", "shift_right_arithmetic"}};
  for (auto [name, function] : kPrimitives) {
    auto it = lax.members.find(function);
    if (it == lax.members.end())
      continue;
    Obj fn = it->second;
    auto primitive = std::make_shared<NamespaceObj>(std::string("jax.lax.") + name + "_p");
    primitive->members["name"] = makeStr(name);
    primitive->members["bind"] =
        builtin(primitive->name + ".bind", [fn](Elaborator &el, CallArgs &args) -> Obj {
          // An `accuracy` of None is the function's default; any other
          // reaches the function, which names it.
          CallArgs call = args;
          if (Obj accuracy = call.takeKeyword("accuracy"); accuracy && !isNone(accuracy))
            call = args;
          return el.call(fn, call);
        });
    lax.members[std::string(name) + "_p"] = primitive;
  }
}

} // namespace pk::elab
