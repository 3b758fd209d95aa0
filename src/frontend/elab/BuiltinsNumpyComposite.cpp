//===- BuiltinsNumpyComposite.cpp - jnp functions built from others -------===//
//
// NumPy functions with no op of their own, written the way jax.numpy
// writes them (same formulas, so the same results at the edges: NaN, inf,
// signed zeros), from element-wise ops the backends already lower.
//
//===----------------------------------------------------------------------===//
#include "frontend/elab/Builtins.h"
#include "frontend/elab/Elaborator.h"
#include "frontend/elab/Indexing.h"
#include "frontend/elab/Operators.h"
#include "frontend/elab/Promotion.h"

#include <cmath>
#include <limits>

namespace pk::elab {

using ast::BinaryOp;
using ast::CompareOp;

namespace {

/// Both operands promoted to a common inexact type and broadcast, as
/// jnp's promote_args_inexact does.
std::vector<ArrayPtr> inexactPair(Elaborator &el, const Obj &a, const Obj &b, SourceRange r) {
  ArrayOps &ops = el.arrays();
  JaxType t;
  std::vector<ArrayPtr> pair = ops.promoteAndBroadcast({a, b}, r, &t);
  JaxType inexact = toInexact(t);
  return {ops.castTo(pair[0], inexact, r), ops.castTo(pair[1], inexact, r)};
}

Obj signBit(Elaborator &el, const Obj &x, SourceRange r) {
  ArrayOps &ops = el.arrays();
  ArrayPtr a = ops.toArray(x, r);
  if (a->dtype == DType::Bool)
    return ops.compare(CompareOp::Ne, a, a, r); // all False
  if (!isFloat(a->dtype))
    return ops.compare(CompareOp::Lt, a, makeInt(0), r);
  // The sign bit itself, so that -0.0 and -NaN count as negative.
  DType bits = bitWidth(a->dtype) == 64   ? DType::I64
               : bitWidth(a->dtype) == 16 ? DType::I16
                                          : DType::I32;
  return ops.compare(CompareOp::Lt, ops.bitcast(a, bits, r), makeInt(0), r);
}

Obj fmaxOrFmin(Elaborator &el, bool isMax, const Obj &a, const Obj &b, SourceRange r) {
  // NaN only when both are NaN.
  ArrayOps &ops = el.arrays();
  std::vector<ArrayPtr> p = ops.promoteAndBroadcast({a, b}, r);
  Obj m = isMax ? ops.maximum(p[0], p[1], r) : ops.minimum(p[0], p[1], r);
  Obj firstNan = ops.isNan(p[0], r);
  Obj secondOrM = ops.where(ops.isNan(p[1], r), p[0], m, r);
  return ops.where(firstNan, p[1], secondOrM, r);
}

double largestFinite(DType t) {
  switch (t) {
  case DType::F16:
    return 65504.0;
  case DType::BF16:
    return 3.3895313892515355e+38;
  case DType::F64:
    return std::numeric_limits<double>::max();
  default:
    return std::numeric_limits<float>::max();
  }
}

} // namespace

void defineNumpyComposites(NamespaceObj &n) {
  define(n, "fmax", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
    return fmaxOrFmin(el, true, a[0], a[1], args.range);
  });
  define(n, "fmin", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
    return fmaxOrFmin(el, false, a[0], a[1], args.range);
  });
  define(n, "fmod", [](Elaborator &el, CallArgs &args) -> Obj {
    // lax.rem: the sign of the dividend. Integer x % 0 is 0 in jnp.fmod.
    BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
    SourceRange r = args.range;
    ArrayOps &ops = el.arrays();
    JaxType t;
    std::vector<ArrayPtr> p = ops.promoteAndBroadcast({a[0], a[1]}, r, &t);
    Obj divisor = p[1];
    if (!isFloat(t.dtype))
      divisor = ops.where(ops.compare(CompareOp::Eq, p[1], makeInt(0), r), makeInt(1), p[1], r);
    return truncatedDivision(el, true, p[0], divisor, r);
  });
  define(n, "signbit", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}});
    return signBit(el, a[0], args.range);
  });
  define(n, "copysign", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
    SourceRange r = args.range;
    ArrayOps &ops = el.arrays();
    std::vector<ArrayPtr> p = inexactPair(el, a[0], a[1], r);
    Obj magnitude = ops.abs(p[0], r);
    Obj negative = signBit(el, p[1], r);
    return ops.where(negative, ops.negate(magnitude, r), magnitude, r);
  });
  define(n, "nextafter", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
    SourceRange r = args.range;
    ArrayOps &ops = el.arrays();
    std::vector<ArrayPtr> p = inexactPair(el, a[0], a[1], r);
    const ArrayPtr &x = p[0], &y = p[1];
    unsigned width = bitWidth(x->dtype);
    DType bits = width == 64 ? DType::I64 : width == 16 ? DType::I16 : DType::I32;
    // One step of the representation: the magnitude grows when y lies
    // beyond x, away from zero.
    Obj towardLarger = ops.compare(CompareOp::Lt, x, y, r);
    Obj positive = ops.compare(CompareOp::Gt, x, makeFloat(0.0), r);
    Obj step = ops.where(ops.compare(CompareOp::Eq, towardLarger, positive, r), makeInt(1),
                         makeInt(-1), r);
    Obj moved = ops.bitcast(
        ops.toArray(binaryOperator(el, BinaryOp::Add, ops.bitcast(x, bits, r), step, r), r),
        x->dtype, r);
    // From zero: the smallest subnormal with y's sign.
    int64_t negativeSmallest =
        width == 64 ? std::numeric_limits<int64_t>::min() + 1 : -(int64_t(1) << (width - 1)) + 1;
    Obj fromZero = ops.bitcast(
        ops.cast(
            ops.toArray(ops.where(signBit(el, y, r), makeInt(negativeSmallest), makeInt(1), r), r),
            bits, r),
        x->dtype, r);
    Obj result = ops.where(ops.compare(CompareOp::Eq, x, makeFloat(0.0), r), fromZero, moved, r);
    result = ops.where(ops.compare(CompareOp::Eq, x, y, r), y, result, r);
    Obj eitherNan = ops.logical(BinaryOp::BitOr, ops.isNan(x, r), ops.isNan(y, r), r);
    return ops.where(eitherNan, binaryOperator(el, BinaryOp::Add, x, y, r), result, r);
  });
  define(n, "divmod", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
    return makeTuple({binaryOperator(el, BinaryOp::FloorDiv, a[0], a[1], args.range),
                      binaryOperator(el, BinaryOp::Mod, a[0], a[1], args.range)});
  });
  // pkc has no complex numbers: every array is real.
  for (auto [name, answer] : {std::pair{"iscomplexobj", false}, std::pair{"isrealobj", true}})
    define(n, name, [answer](Elaborator &el, CallArgs &args) -> Obj {
      el.bind(args, {{"x"}});
      return makeBool(answer);
    });
  define(n, "hypot", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x1"}, {"x2"}});
    SourceRange r = args.range;
    ArrayOps &ops = el.arrays();
    std::vector<ArrayPtr> p = inexactPair(el, a[0], a[1], r);
    Obj x = ops.abs(p[0], r), y = ops.abs(p[1], r);
    Obj xInf = ops.isInf(x, r), yInf = ops.isInf(y, r);
    Obj anyInf = ops.logical(BinaryOp::BitOr, xInf, yInf, r);
    Obj high = ops.maximum(x, y, r), low = ops.minimum(x, y, r);
    Obj isZero = ops.compare(CompareOp::Eq, high, makeFloat(0.0), r);
    Obj ratio = ops.where(isZero, makeFloat(1.0), binaryOperator(el, BinaryOp::Div, low, high, r), r);
    Obj scaled = binaryOperator(
        el, BinaryOp::Mul, high,
        ops.floatUnary(FloatUnary::Sqrt,
                       binaryOperator(el, BinaryOp::Add, makeFloat(1.0),
                                      binaryOperator(el, BinaryOp::Mul, ratio, ratio, r), r),
                       r),
        r);
    return ops.where(anyInf, makeFloat(std::numeric_limits<double>::infinity()),
                     ops.where(isZero, high, scaled, r), r);
  });
  define(n, "nan_to_num", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"x"}, {"copy", makeBool(true)}, {"nan", makeFloat(0.0)},
                                 {"posinf", none()}, {"neginf", none()}});
    SourceRange r = args.range;
    ArrayOps &ops = el.arrays();
    ArrayPtr x = ops.toArray(a[0], r);
    if (!isFloat(x->dtype))
      return x;
    double big = largestFinite(x->dtype);
    Obj posinf = isNone(a[3]) ? makeFloat(big) : a[3];
    Obj neginf = isNone(a[4]) ? makeFloat(-big) : a[4];
    Obj out = ops.where(ops.isNan(x, r), a[2], x, r);
    out = ops.where(ops.compare(CompareOp::Eq, x, makeFloat(std::numeric_limits<double>::infinity()), r),
                    posinf, out, r);
    out = ops.where(ops.compare(CompareOp::Eq, x, makeFloat(-std::numeric_limits<double>::infinity()), r),
                    neginf, out, r);
    return ops.castTo(ops.toArray(out, r), {x->dtype, x->weak}, r);
  });
  define(n, "isclose", [](Elaborator &el, CallArgs &args) -> Obj {
    BoundArgs a = el.bind(args, {{"a"}, {"b"}, {"rtol", makeFloat(1e-05)}, {"atol", makeFloat(1e-08)},
                                 {"equal_nan", makeBool(false)}});
    SourceRange r = args.range;
    ArrayOps &ops = el.arrays();
    JaxType t;
    std::vector<ArrayPtr> p = ops.promoteAndBroadcast({a[0], a[1]}, r, &t);
    if (!isFloat(t.dtype))
      return ops.compare(CompareOp::Eq, p[0], p[1], r);
    Obj x = p[0], y = p[1];
    Obj tolerance = binaryOperator(el, BinaryOp::Add, a[3],
                                   binaryOperator(el, BinaryOp::Mul, a[2], ops.abs(y, r), r), r);
    Obj out = ops.compare(CompareOp::Le, ops.abs(binaryOperator(el, BinaryOp::Sub, x, y, r), r),
                          tolerance, r);
    // Infinities are close only to themselves.
    Obj xInf = ops.isInf(x, r), yInf = ops.isInf(y, r);
    Obj anyInf = ops.logical(BinaryOp::BitOr, xInf, yInf, r);
    Obj bothInf = ops.logical(BinaryOp::BitAnd, xInf, yInf, r);
    out = ops.logical(BinaryOp::BitAnd, out, ops.logicalNot(anyInf, r), r);
    out = ops.logical(BinaryOp::BitOr, out,
                      ops.logical(BinaryOp::BitAnd, bothInf, ops.compare(CompareOp::Eq, x, y, r), r), r);
    if (el.truthy(a[4], a.range(4))) {
      Obj xNan = ops.isNan(x, r), yNan = ops.isNan(y, r);
      out = ops.logical(BinaryOp::BitOr, out, ops.logical(BinaryOp::BitAnd, xNan, yNan, r), r);
    }
    return out;
  });
  define(n, "polyval", [](Elaborator &el, CallArgs &args) -> Obj {
    // JAX's polynomial.py: p and x promoted to one dtype, then Horner's
    // rule over p's first axis, y = y * x + p[i], from zeros of the
    // broadcast of p.shape[1:] with x.shape.
    BoundArgs a = el.bind(args, {{"p"}, {"x"}, {"unroll", makeInt(16), true}});
    ArrayOps &ops = el.arrays();
    SourceRange r = args.range;
    ArrayPtr p = ops.toArray(a[0], a.range(0)), x = ops.toArray(a[1], a.range(1));
    if (p->rank() == 0)
      el.fail(a.range(0), "jnp.polyval's coefficients p must have at least one dimension");
    JaxType t = promoteTypes(ops.typeOf(p, r), ops.typeOf(x, r));
    p = ops.castTo(p, t, r);
    x = ops.castTo(x, t, r);
    std::vector<int64_t> rest(p->shape.begin() + 1, p->shape.end());
    Obj y = ops.full(ops.broadcastShapes(rest, x->shape, r), makeInt(0), t.dtype, r);
    for (int64_t i = 0; i < p->shape[0]; ++i) {
      Obj scaled = binaryOperator(el, BinaryOp::Mul, y, x, r);
      y = binaryOperator(el, BinaryOp::Add, scaled, subscript(el, p, makeInt(i), r), r);
    }
    return y;
  });
  define(n, "count_nonzero", [](Elaborator &el, CallArgs &args) -> Obj {
    // sum(a != 0) in the default int type.
    BoundArgs a = el.bind(args, {{"a"}, {"axis", none()}, {"keepdims", makeBool(false)}});
    ArrayOps &ops = el.arrays();
    ArrayPtr x = ops.toArray(a[0], a.range(0));
    std::vector<int64_t> axes = el.normalizeAxes(a[1], x->rank(), a.range(1));
    Obj nonzero = ops.compare(CompareOp::Ne, x, makeInt(0), args.range);
    return ops.reduce(Reduction::Sum,
                      ops.cast(ops.toArray(nonzero, args.range), DType::I32, args.range), axes,
                      el.truthy(a[2], a.range(2)), args.range);
  });
  define(n, "diff", [](Elaborator &el, CallArgs &args) -> Obj {
    // n times a[1:] - a[:-1] along axis, after prepend / append.
    BoundArgs a = el.bind(
        args,
        {{"a"}, {"n", makeInt(1)}, {"axis", makeInt(-1)}, {"prepend", none()}, {"append", none()}});
    ArrayOps &ops = el.arrays();
    SourceRange r = args.range;
    ArrayPtr x = ops.toArray(a[0], a.range(0));
    if (x->rank() == 0)
      el.fail(a.range(0), "jnp.diff needs an array of at least one dimension");
    int64_t times = el.toInt(a[1], a.range(1), "n");
    if (times < 0)
      el.fail(a.range(1), "jnp.diff's order n must be non-negative, got " + std::to_string(times));
    int64_t axis = el.normalizeAxis(a[2], x->rank(), a.range(2));
    std::vector<Obj> parts;
    for (int i : {3, 0, 4}) {
      if (isNone(a[i]))
        continue;
      ArrayPtr part = ops.toArray(a[i], a.range(i));
      if (part->rank() == 0) {
        // A scalar becomes a slab of size 1 along the axis.
        std::vector<int64_t> shape = x->shape;
        shape[axis] = 1;
        part = ops.broadcastTo(part, shape, a.range(i));
      }
      parts.push_back(part);
    }
    if (parts.size() > 1)
      x = ops.toArray(ops.concatenate(parts, axis, r), r);
    for (int64_t k = 0; k < times && x->shape[axis] > 0; ++k) {
      std::vector<int64_t> start(x->rank(), 0), limit = x->shape, stride(x->rank(), 1);
      start[axis] = 1;
      ArrayPtr upper = ops.slice(x, start, limit, stride, r);
      start[axis] = 0;
      limit[axis] = x->shape[axis] - 1;
      ArrayPtr lower = ops.slice(x, start, limit, stride, r);
      Obj d = x->dtype == DType::Bool ? ops.compare(CompareOp::Ne, upper, lower, r)
                                      : binaryOperator(el, BinaryOp::Sub, upper, lower, r);
      x = ops.toArray(d, r);
    }
    return x;
  });
}

std::shared_ptr<NamespaceObj> makeLinalgNamespace() {
  auto ns = std::make_shared<NamespaceObj>("jax.numpy.linalg");
  define(*ns, "norm", [](Elaborator &el, CallArgs &args) -> Obj {
    // Vector norms along an axis (or of the flattened array), and the
    // Frobenius norm, as jnp.linalg.norm computes them.
    BoundArgs a =
        el.bind(args, {{"x"}, {"ord", none()}, {"axis", none()}, {"keepdims", makeBool(false)}});
    ArrayOps &ops = el.arrays();
    SourceRange r = args.range;
    ArrayPtr x = ops.toArray(a[0], a.range(0), toInexact(ops.typeOf(a[0], a.range(0))));
    std::vector<int64_t> axes = el.normalizeAxes(a[2], x->rank(), a.range(2));
    bool keep = el.truthy(a[3], a.range(3));
    bool matrix = axes.size() == 2 || (isNone(a[2]) && x->rank() == 2 && !isNone(a[1]));
    auto euclid = [&] {
      return ops.floatUnary(
          FloatUnary::Sqrt,
          ops.reduce(Reduction::Sum, binaryOperator(el, BinaryOp::Mul, x, x, r), axes, keep, r), r);
    };
    if (isNone(a[1]))
      return euclid();
    if (matrix) {
      if (auto *s = llvm::dyn_cast<StrObj>(a[1].get()); s && s->value == "fro")
        return euclid();
      el.fail(a.range(1),
              "jnp.linalg.norm of a matrix supports ord=None or 'fro' (the other matrix "
              "norms need singular values)");
    }
    if (axes.size() > 1)
      el.fail(a.range(2),
              "jnp.linalg.norm takes one axis for a vector norm, or two for a matrix norm");
    double ord = el.toDouble(a[1], a.range(1), "ord");
    Obj magnitude = ops.abs(x, r);
    if (ord == 2)
      return euclid();
    if (std::isinf(ord))
      return ops.reduce(ord > 0 ? Reduction::Max : Reduction::Min, magnitude, axes, keep, r);
    if (ord == 0)
      return ops.reduce(
          Reduction::Sum,
          ops.cast(ops.toArray(ops.compare(CompareOp::Ne, x, makeInt(0), r), r), x->dtype, r), axes,
          keep, r);
    if (ord == 1)
      return ops.reduce(Reduction::Sum, magnitude, axes, keep, r);
    Obj sum = ops.reduce(Reduction::Sum, ops.power(magnitude, makeFloat(ord), r), axes, keep, r);
    return ops.power(sum, makeFloat(1.0 / ord), r);
  });
  return ns;
}

} // namespace pk::elab
